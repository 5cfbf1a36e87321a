"""Distributed runtime benchmarks, ferroflow vs TensorFlow 2.21, side by side on this
machine. Both clusters (one ps, one worker; separate OS processes) are driven by the same
TensorFlow Python client (tf.compat.v1.Session on the worker's target):

  1. fetch a 64 MiB float32 variable that lives on the ps, through the worker (MiB/s);
  2. round-trip latency of fetching a 4-byte variable from the ps through the worker, and
     of a step that runs on the worker alone (the client's own floor);
  3. server start: process spawn until its port accepts connections (median of 5);
  4. resident memory (RSS) of an idle ps.

Then the between-graph layout (the client in the worker's process, as a TensorFlow trainer
runs with Session(server.target)): ferroflow's Rust client (dist_client_bench, INPROC=)
against TensorFlow's Python client (tf_inproc_client.py), each with a ps process.

Rows 1-2 are then measured against examples/zero_master, a server that does no work: the
client's and gRPC's own cost, i.e. the best ratio any server could reach with this client
(built by cargo build --release -p ferroflow-distributed --example zero_master).

Rows 1-2 are repeated with ferroflow's Rust GrpcSession as the client when
target/release/examples/dist_client_bench exists (cargo build --release -p
ferroflow-distributed --example dist_client_bench), against both clusters.

Usage: .venv/bin/python scripts/bench/dist_bench.py  (FERROFLOW_BIN overrides the binary)
"""

import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "compat"))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

tf.compat.v1.disable_eager_execution()

N = 16 * 1024 * 1024  # 64 MiB of float32


def rust_client():
    """The Rust client benchmark (crates/distributed/examples/dist_client_bench.rs), if built."""
    p = os.environ.get("FERROFLOW_CLIENT_BENCH")
    if p is not None:
        return p if os.path.exists(p) else None
    b = ffcluster.binary()
    c = os.path.join(os.path.dirname(b), "examples", "dist_client_bench")
    return c if os.path.exists(c) else None


def start(kind, cluster, job, task):
    port = int(cluster[job][task].rsplit(":", 1)[1])
    t0 = time.perf_counter()
    if kind == "ferroflow":
        flag = ";".join(f"{j}={','.join(a)}" for j, a in cluster.items())
        p = subprocess.Popen([ffcluster.binary(), "server", "--cluster", flag, "--job_name", job, "--task_index", str(task)],
                             stdout=subprocess.DEVNULL)
        ffcluster._procs.append(p)
    else:
        p = ffcluster.tf_server(cluster, job, task)
    ffcluster.wait_port(port, p)
    return p, time.perf_counter() - t0


def start_median(kind, first, more=4):
    """The median start time of `first` and `more` further single-task starts (one sample
    is at the mercy of the page cache and the host)."""
    times = [first]
    for _ in range(more):
        (port,) = ffcluster.free_ports(1)
        p, t = start(kind, {"ps": [f"127.0.0.1:{port}"]}, "ps", 0)
        times.append(t)
        p.kill()
        p.wait()
    return statistics.median(times)


def build_graph():
    """The benchmark graph (the same for both systems and both layouts): a 64 MiB and a
    scalar variable on the ps, an Identity of the big one and a product on the worker.
    Returns the graph and its ops by name."""
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:ps/task:0"):
            big = tf.compat.v1.get_variable("big", shape=[N], initializer=tf.compat.v1.zeros_initializer())
            small = tf.compat.v1.get_variable("small", initializer=tf.constant(1.0))
            big_read = big.read_value()
            small_read = small.read_value()
        with tf.device("/job:worker/task:0"):
            big_on_worker = tf.identity(big)
            local = tf.constant(2.0) * tf.constant(3.0)
        init = tf.compat.v1.global_variables_initializer()
    ops = dict(init=init, big_read=big_read, big_on_worker=big_on_worker, small_read=small_read, local=local)
    return g, ops


def timed(sess, fetch, n, warm):
    """The median time of `n` runs of `fetch`, after `warm` untimed ones (seconds)."""
    for _ in range(warm):
        sess.run(fetch)
    t = []
    for _ in range(n):
        t0 = time.perf_counter()
        sess.run(fetch)
        t.append(time.perf_counter() - t0)
    return statistics.median(t)


def drive(target, res):
    """The Python client's rows against the worker at `target`."""
    g, op = build_graph()
    with g.as_default(), tf.compat.v1.Session(target) as sess:
        sess.run(op["init"])
        assert sess.run(op["big_on_worker"]).shape == (N,)
        res["fetch64_mib_s"] = 64.0 / timed(sess, op["big_on_worker"], 8, 1)
        res["scalar_rtt_us"] = timed(sess, op["small_read"], 300, 20) * 1e6
        # The client's floor on this server: a step that runs on the worker alone (one
        # RunStep, no RPC to the ps). No ps fetch can be faster than this.
        res["local_rtt_us"] = timed(sess, op["local"], 300, 20) * 1e6


def bench(kind):
    ps_port, w_port = ffcluster.free_ports(2)
    cluster = {"ps": [f"127.0.0.1:{ps_port}"], "worker": [f"127.0.0.1:{w_port}"]}
    ps, ps_start = start(kind, cluster, "ps", 0)
    worker, _ = start(kind, cluster, "worker", 0)
    time.sleep(1.0)
    idle_rss = ffcluster.proc_status_mib(ps.pid, "VmRSS")
    target = f"grpc://127.0.0.1:{w_port}"
    res = {"start_s": start_median(kind, ps_start), "idle_ps_rss_mib": idle_rss}
    try:
        drive(target, res)
        client = rust_client()
        if client:
            out = subprocess.run([client, target], capture_output=True, text=True, timeout=600)
            if out.returncode == 0:
                r = json.loads(out.stdout.strip().splitlines()[-1])
                res["rust_fetch64_mib_s"] = r["fetch64_mib_s"]
                res["rust_fetch64_direct_mib_s"] = r["fetch64_direct_mib_s"]
                res["rust_scalar_rtt_us"] = r["scalar_rtt_us"]
                res["rust_local_rtt_us"] = r["local_rtt_us"]
                res["rust_get_status_us"] = r["get_status_us"]
            else:
                print(f"[{kind}] Rust client failed: {out.stderr.strip()[-500:]}", file=sys.stderr)
        res["ps_rss_after_mib"] = ffcluster.proc_status_mib(ps.pid, "VmRSS")
    finally:
        for p in (worker, ps):
            p.kill()
            p.wait()
    return res


def zero_floor():
    """The same client rows against examples/zero_master, a MasterService that answers
    every RunStep at once from memory: what the client and gRPC cost by themselves. Returns
    None when that example is not built."""
    z = os.path.join(os.path.dirname(ffcluster.binary()), "examples", "zero_master")
    if not os.path.exists(z):
        return None
    (port,) = ffcluster.free_ports(1)
    big_name = build_graph()[1]["big_on_worker"].name
    p = subprocess.Popen([z, f"127.0.0.1:{port}", "--big", big_name], stdout=subprocess.DEVNULL)
    try:
        ffcluster.wait_port(port, p)
        res = {}
        drive(f"grpc://127.0.0.1:{port}", res)
        return res
    finally:
        p.kill()
        p.wait()


def in_process(rounds=3):
    """in_process_once `rounds` times, alternating the two systems; the median of each row."""
    runs = [in_process_once() for _ in range(rounds)]
    if any(r is None for r in runs):
        return None
    return tuple({k: statistics.median(r[i][k] for r in runs) for k in runs[0][i]} for i in (0, 1))


def in_process_once():
    """The between-graph layout of a TensorFlow trainer: the client lives in the worker's
    process (Session(server.target)) and the ps is another process. ferroflow: its Rust
    client (dist_client_bench with INPROC=); TensorFlow: tf_inproc_client.py. Returns
    (ferroflow, tensorflow) dicts, or None when the Rust client is not built."""
    client = rust_client()
    if not client:
        return None
    ps_port, w_port = ffcluster.free_ports(2)
    cluster = {"ps": [f"127.0.0.1:{ps_port}"], "worker": [f"127.0.0.1:{w_port}"]}
    ps, _ = start("ferroflow", cluster, "ps", 0)
    try:
        env = dict(os.environ, INPROC=f"127.0.0.1:{ps_port},127.0.0.1:{w_port}")
        out = subprocess.run([client], capture_output=True, text=True, timeout=600, env=env)
        if out.returncode != 0:
            print(f"[in-process] Rust client failed: {out.stderr.strip()[-500:]}", file=sys.stderr)
            return None
        ff = json.loads(out.stdout.strip().splitlines()[-1])
    finally:
        ps.kill()
        ps.wait()
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tf_inproc_client.py")
    out = subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        print(f"[in-process] TensorFlow client failed: {out.stderr.strip()[-500:]}", file=sys.stderr)
        return None
    return ff, json.loads(out.stdout.strip().splitlines()[-1])


def print_rows(rows, a_res, b_res):
    """One line per (name, key, higher_better) row both results have: both values and a's
    advantage over b."""
    for name, key, higher_better in rows:
        if key not in a_res or key not in b_res:
            continue
        a, b = a_res[key], b_res[key]
        ratio = a / b if higher_better else b / a
        print(f"{name:<56} {a:>12.3f} {b:>12.3f} {ratio:>19.2f}x")


def main():
    ff = bench("ferroflow")
    tfr = bench("tensorflow")
    rows = [
        ("64 MiB variable fetch ps->worker->client (MiB/s)", "fetch64_mib_s", True),
        ("4-byte fetch round trip, median (us)", "scalar_rtt_us", False),
        ("step on the worker alone (client floor), median (us)", "local_rtt_us", False),
        ("Rust GrpcSession client: 64 MiB fetch (MiB/s)", "rust_fetch64_mib_s", True),
        ("Rust GrpcSession client: 64 MiB, variable itself (MiB/s)", "rust_fetch64_direct_mib_s", True),
        ("Rust GrpcSession client: 4-byte round trip (us)", "rust_scalar_rtt_us", False),
        ("Rust GrpcSession client: worker-only step (us)", "rust_local_rtt_us", False),
        ("Rust tonic client: bare GetStatus call (us)", "rust_get_status_us", False),
        ("server start to port open (s)", "start_s", False),
        ("idle ps RSS (MiB)", "idle_ps_rss_mib", False),
        ("ps RSS after the runs (MiB)", "ps_rss_after_mib", False),
    ]
    print(f"{'metric':<56} {'ferroflow':>12} {'TF 2.21':>12} {'ferroflow advantage':>20}")
    print_rows(rows, ff, tfr)
    ip = in_process()
    if ip is not None:
        print("\nBetween-graph layout: the client in the worker's process (ferroflow's Rust client,")
        print("TensorFlow's Python client on Session(server.target)), the ps in another process")
        print("(each row the median of 3 alternating rounds):")
        between = [
            ("64 MiB variable fetch through the worker (MiB/s)", "fetch64_mib_s", True),
            ("64 MiB variable fetched as it is (MiB/s)", "fetch64_direct_mib_s", True),
            ("4-byte fetch round trip, median (us)", "scalar_rtt_us", False),
            ("step on the worker alone, median (us)", "local_rtt_us", False),
        ]
        print_rows(between, ip[0], ip[1])
    z = zero_floor()
    if z is not None:
        print("\nThe same Python client against a server that does no work (examples/zero_master):")
        print("what the client and the transport cost by themselves, and that as a ratio to TensorFlow's cluster.")
        print_rows(rows[:2], z, tfr)


if __name__ == "__main__":
    main()
