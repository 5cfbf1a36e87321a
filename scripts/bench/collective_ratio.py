"""All-reduce across tasks (issue #45 item 3): TensorFlow 1.x graphs with one
`CollectiveReduceV2` (Add, Div) per worker, driven by TensorFlow 2.21's client, on a cluster
of TensorFlow servers and on one of ferroflow servers, side by side on this host (loopback).
Rounds alternate TF, ff, TF, ff...; each prints the steps per second of an all-reduce of
`--floats` float32 per worker over `--workers` workers (after warm-up steps), and the
ratios of the medians at the end.

    .venv/bin/python scripts/bench/collective_ratio.py [--workers 3] [--floats 1048576]
        [--steps 30] [--rounds 3]
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "compat"))
import ffcluster  # noqa: E402


def measure(tf, target, args):
    import numpy as np
    g = tf.Graph()
    with g.as_default():
        outs = []
        for t in range(args.workers):
            with tf.device(f"/job:worker/replica:0/task:{t}/device:CPU:0"):
                x = tf.constant(np.full(args.floats, t + 1.0, np.float32))
                r = tf.raw_ops.CollectiveReduceV2(
                    input=x, group_size=tf.constant(args.workers), group_key=tf.constant(1),
                    instance_key=tf.constant(1), ordering_token=[], merge_op="Add", final_op="Div")
                # Fetch a scalar: the timing is the all-reduce's, not the client's copy.
                outs.append(tf.reduce_sum(r[:4]))
    with tf.compat.v1.Session(target, graph=g) as sess:
        for _ in range(3):
            sess.run(outs)
        start = time.perf_counter()
        for _ in range(args.steps):
            got = sess.run(outs)
        rate = args.steps / (time.perf_counter() - start)
    want = 4 * sum(range(1, args.workers + 1)) / args.workers
    assert all(abs(v - want) < 1e-3 for v in got), got
    return rate


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--workers", type=int, default=3)
    p.add_argument("--floats", type=int, default=1 << 20)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    tf = ffcluster.tf_in_mode("v1")
    c = tf.compat.v1.ConfigProto()
    c.experimental.collective_group_leader = "/job:worker/replica:0/task:0"
    rates = {"tf": [], "ff": []}
    with tempfile.TemporaryDirectory() as d:
        cfg = os.path.join(d, "leader.pb")
        with open(cfg, "wb") as f:
            f.write(c.SerializeToString())
        for r in range(args.rounds):
            want, got = ffcluster.on_both([("worker", args.workers)], lambda t: measure(tf, t, args), config_path=cfg)
            rates["tf"].append(want)
            rates["ff"].append(got)
            print(f"round {r}: TensorFlow {want:.1f} steps/s, ferroflow {got:.1f} steps/s", flush=True)
    mb = args.floats * 4 / 1e6
    tf_m, ff_m = statistics.median(rates["tf"]), statistics.median(rates["ff"])
    print(f"all-reduce of {mb:.1f} MB x {args.workers} workers: TensorFlow {tf_m:.1f} steps/s, "
          f"ferroflow {ff_m:.1f} steps/s, ferroflow / TensorFlow = {ff_m / tf_m:.2f}x")


if __name__ == "__main__":
    main()
