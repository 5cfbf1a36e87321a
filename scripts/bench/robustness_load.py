"""Part 2 of scripts/bench/robustness.py: concurrent load, ferroflow vs TensorFlow 2.21.

64 concurrent TF1 Python clients (8 processes x 8 threads, one Session each on the worker's
target) run small steps for --duration s (10) after --warmup s (2): each step reads a scalar
resource variable on the ps and adds a constant on the worker (one ps->worker tensor
transfer, fetch through the worker). Reported: steps/s, p50 and p99 latency, errors, the
servers' CPU time per step (ps + worker, from /proc), and ferroflow/TF ratios (median of the
rounds). Fresh clusters (robustness_cluster.Cluster) for each run; --rounds (2) alternates
the systems, ferroflow first then TensorFlow first (ABBA...), against a busy host's drift.

The client processes are `robustness.py --load_client`, driven by JSON lines over
stdin/stdout.
"""

import json
import os
import statistics
import subprocess
import sys
import threading
import time

from robustness_cluster import Cluster, cpu_seconds, ffcluster, isa_line

ENTRY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "robustness.py")


def load_client():
    """A client process: JSON commands on stdin, JSON answers on stdout."""
    import tensorflow as tf
    tf.get_logger().setLevel("ERROR")
    tf.compat.v1.disable_eager_execution()
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.compat.v1.get_variable("small", initializer=tf.constant(1.0), use_resource=True)
        with tf.device("/job:worker/task:0"):
            step = tf.add(v.read_value(), tf.constant(1.0), name="step")
        init = v.initializer
    g.finalize()
    sessions = []
    reply = lambda d: (sys.stdout.write(json.dumps(d) + "\n"), sys.stdout.flush())  # noqa: E731
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd["cmd"] == "prepare":
            sessions = [tf.compat.v1.Session(cmd["target"], graph=g) for _ in range(cmd["threads"])]
            sessions[0].run(init)
            for s in sessions:
                assert abs(s.run(step) - 2.0) < 1e-6
            reply({"ok": True})
        elif cmd["cmd"] == "go":
            start, warm, dur = cmd["start_at"], cmd["warmup"], cmd["duration"]
            w0, end = start + warm, start + warm + dur
            lats = [[] for _ in sessions]
            errs = [0]
            first = [None]

            def worker(k):
                s, out = sessions[k], lats[k]
                while time.time() < start:
                    time.sleep(0.001)
                while True:
                    a = time.time()
                    if a >= end:
                        break
                    t0 = time.perf_counter()
                    try:
                        s.run(step)
                    except Exception as e:  # noqa: BLE001
                        errs[0] += 1
                        first[0] = first[0] or f"{type(e).__name__}: {str(e)[:200]}"
                        continue
                    dt = time.perf_counter() - t0
                    if a >= w0 and a + dt <= end:
                        out.append(int(dt * 1e6))

            ts = [threading.Thread(target=worker, args=(k,)) for k in range(len(sessions))]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            reply({"lat_us": [x for lst in lats for x in lst], "errors": errs[0], "first_error": first[0]})
        elif cmd["cmd"] == "close":
            for s in sessions:
                s.close()
            sessions = []
            reply({"ok": True})
        elif cmd["cmd"] == "exit":
            return


class ClientPool:
    def __init__(self, nproc, logdir):
        self.procs = []
        for k in range(nproc):
            err = open(os.path.join(logdir, f"client{k}.log"), "w")
            p = subprocess.Popen([sys.executable, ENTRY, "--load_client"], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=err, text=True)
            err.close()
            ffcluster._procs.append(p)
            self.procs.append(p)

    def all(self, cmd, timeout=300):
        for p in self.procs:
            p.stdin.write(json.dumps(cmd) + "\n")
            p.stdin.flush()
        out = []
        for p in self.procs:
            line = p.stdout.readline()
            if not line:
                raise RuntimeError(f"load client {p.pid} exited ({p.poll()}); see its log")
            out.append(json.loads(line))
        return out

    def stop(self):
        for p in self.procs:
            try:
                p.stdin.write(json.dumps({"cmd": "exit"}) + "\n")
                p.stdin.flush()
            except (BrokenPipeError, OSError):
                pass
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()


def pct(xs, q):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def run_load(kind, pool, threads, warmup, duration, logdir, tag):
    c = Cluster(kind, logdir, tag)
    try:
        pool.all({"cmd": "prepare", "target": c.target["worker"], "threads": threads})
        cpu0 = {p: cpu_seconds(p) for p in c.pids()}
        start = time.time() + 0.5
        for p in pool.procs:
            p.stdin.write(json.dumps({"cmd": "go", "start_at": start, "warmup": warmup, "duration": duration}) + "\n")
            p.stdin.flush()
        # CPU of the servers over the measured window only.
        time.sleep(max(0.0, start + warmup - time.time()))
        cpu_w0 = {p: cpu_seconds(p) for p in c.pids()}
        time.sleep(max(0.0, start + warmup + duration - time.time()))
        cpu_w1 = {p: cpu_seconds(p) for p in c.pids()}
        outs = [json.loads(p.stdout.readline()) for p in pool.procs]
        pool.all({"cmd": "close"})
        alive = all(p.poll() is None for p in c.procs.values())
        isa = isa_line(c) if kind == "ferroflow" else None
        del cpu0
    finally:
        c.kill()
    lat = [x for o in outs for x in o["lat_us"]]
    steps = len(lat)
    server_cpu = sum(cpu_w1[p] - cpu_w0[p] for p in cpu_w0)
    return dict(steps_s=steps / duration, p50_us=pct(lat, 0.50), p99_us=pct(lat, 0.99), steps=steps,
                errors=sum(o["errors"] for o in outs),
                first_error=next((o["first_error"] for o in outs if o["first_error"]), None),
                server_cpu_us_per_step=(server_cpu / steps * 1e6) if steps else float("nan"),
                server_cpu_cores=server_cpu / duration, tasks_alive_after=alive, isa=isa)


# ----------------------------------------------------------------------------------------

def run_section(procs, threads, warmup, duration, rounds, logdir):
    """Runs the load rounds and prints their table; returns (the "load" part of the JSON
    summary, the runs: system -> [run_load's result per round])."""
    print(f"\n== 2. Load: {procs * threads} concurrent TF1 Python clients ({procs} processes x {threads} "
          f"threads), {warmup:g} s warm-up + {duration:g} s ==", flush=True)
    pool = ClientPool(procs, logdir)
    try:
        order = []
        for r in range(rounds):
            order += [("ferroflow", "tensorflow"), ("tensorflow", "ferroflow")][r % 2]
        runs = {"ferroflow": [], "tensorflow": []}
        for n, kind in enumerate(order):
            res = run_load(kind, pool, threads, warmup, duration, logdir, f"load{n}")
            runs[kind].append(res)
            print(f"  round {n // 2 + 1} {kind:<10} {res['steps_s']:7.0f} steps/s, p50 {res['p50_us']} us, "
                  f"p99 {res['p99_us']} us, server CPU {res['server_cpu_us_per_step']:.0f} us/step "
                  f"({res['server_cpu_cores']:.2f} cores), {res['errors']} errors", flush=True)
    finally:
        pool.stop()

    def med(kind, key):
        return statistics.median(r[key] for r in runs[kind])

    rows = [("throughput (steps/s)", "steps_s", True), ("latency p50 (us)", "p50_us", False),
            ("latency p99 (us)", "p99_us", False), ("server CPU per step, ps+worker (us)", "server_cpu_us_per_step", False),
            ("server CPU used (cores)", "server_cpu_cores", None), ("failed steps", "errors", None)]
    print(f"{'metric' + (' (median of rounds)' if rounds > 1 else ''):<40} {'ferroflow':>12} {'TF 2.21':>12} {'ferroflow/TF':>13} {'ferroflow advantage':>20}")
    summary = {"clients": procs * threads, "warmup_s": warmup, "duration_s": duration,
               "rounds": rounds, "runs": runs}
    for name, key, higher in rows:
        f, t = med("ferroflow", key), med("tensorflow", key)
        ratio = f / t if t else float("nan")
        adv = "" if higher is None or not t or not f else f"{(ratio if higher else 1 / ratio):.2f}x"
        rs = f"{ratio:>13.2f}" if t else f"{'-':>13}"
        print(f"{name:<40} {f:>12.1f} {t:>12.1f} {rs} {adv:>20}")
        summary[key] = {"ferroflow": f, "tensorflow": t, "ratio_ff_over_tf": ratio if t else None}
    for kind in runs:
        for r in runs[kind]:
            if r["first_error"]:
                print(f"  {kind} first error: {r['first_error']}")
            if not r["tasks_alive_after"]:
                print(f"  {kind}: a task died during the load run")
    return summary, runs
