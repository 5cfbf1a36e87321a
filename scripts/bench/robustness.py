"""Robustness and load, ferroflow vs TensorFlow 2.21, side by side on this machine.

Two clusters of the same shape (one ps, one worker; each task its own OS process):
`ferroflow server` processes and tf.distribute.Server processes, both with their default
settings (no --memory_limit for ferroflow). Every server gets oom_score_adj 1000, and a
memory guard kills the largest server if the host's MemAvailable falls below 1.5 GiB (a
kill counts as a death). Then:

1. Bad inputs: requests declaring huge tensors (Consts, a raw feed, kernels asked for huge
   outputs) sent to both clusters; per input and system the status code, message, seconds,
   peak RSS of each task, and whether each task is still alive and answering.
2. Load: 64 concurrent TF1 Python clients running small ps->worker steps; steps/s, p50/p99
   latency, errors, server CPU per step, and the ferroflow/TF ratios.

Prints a table and one JSON summary line (prefixed "JSON ").

This file is the entry point; the parts are, next to it:
  robustness_cluster.py     the clusters, the memory guard, /proc readings, a raw master client
  robustness_bad_inputs.py  1. bad inputs (the inputs and what is reported are described there)
  robustness_load.py        2. load (the workload and what is reported are described there)

Usage: .venv/bin/python scripts/bench/robustness.py [--duration 10] [--warmup 2]
       [--rounds 2] [--flip] [--only NAME] [--skip_load] [--skip_bad]
       (FERROFLOW_BIN overrides the ferroflow binary)
"""

import argparse
import json
import os
import signal
import sys
import tempfile
import time

import robustness_bad_inputs
import robustness_cluster as rc
import robustness_load

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--load_client", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--duration", type=float, default=10.0)
    ap.add_argument("--warmup", type=float, default=2.0)
    ap.add_argument("--rounds", type=int, default=2, help="load rounds, systems alternating (ABBA...)")
    ap.add_argument("--procs", type=int, default=8)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--flip", action="store_true", help="pin the first input to the worker, not the ps")
    ap.add_argument("--skip_bad", action="store_true")
    ap.add_argument("--only", help="run only the bad inputs whose name contains this")
    ap.add_argument("--hard_timeout", type=float, default=robustness_bad_inputs.HARD_TIMEOUT_S,
                    help="seconds after which a bad input's step counts as not answered")
    ap.add_argument("--skip_load", action="store_true")
    a = ap.parse_args()
    if a.load_client:
        return robustness_load.load_client()
    robustness_bad_inputs.HARD_TIMEOUT_S = a.hard_timeout

    rc.start_guard()
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: sys.exit(1))
    import tensorflow as tf
    tf.get_logger().setLevel("ERROR")
    tf.compat.v1.disable_eager_execution()
    msgs = rc.master_messages()
    logdir = tempfile.mkdtemp(prefix="ff-robust-")
    t_start = time.time()
    cpu = rc.cpu_model()
    binary = rc.ffcluster.binary()
    print(f"CPU: model name: {cpu} ({os.cpu_count()} cores, {rc.meminfo('MemTotal') / 2**30:.1f} GiB); "
          f"load average {os.getloadavg()[0]:.1f}", flush=True)
    print(f"ferroflow binary: {binary}; TensorFlow {tf.__version__}; server logs in {logdir}", flush=True)
    summary = {"cpu": cpu, "tf_version": tf.__version__, "loadavg_start": os.getloadavg()[0]}

    isa = None
    if not a.skip_bad:
        isa, bad_summary = robustness_bad_inputs.run_section(tf, msgs, logdir, a.flip, a.only)
        summary["isa"] = isa
        summary["bad_inputs"] = bad_summary

    if not a.skip_load:
        summary["load"], runs = robustness_load.run_section(a.procs, a.threads, a.warmup, a.duration, a.rounds,
                                                            logdir)
    if isa is None and not a.skip_load:
        isa = runs["ferroflow"][0]["isa"]
        print(f"ISA: {isa}")
    summary["isa"] = isa
    summary["loadavg_end"] = os.getloadavg()[0]
    summary["runtime_s"] = round(time.time() - t_start, 1)
    print(f"\nruntime {summary['runtime_s']} s; load average {os.getloadavg()[0]:.1f} at the end")
    print("JSON " + json.dumps(summary))


if __name__ == "__main__":
    try:
        main()
    finally:
        if rc.GUARD is not None:
            rc.GUARD.stop = True
