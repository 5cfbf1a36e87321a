"""Asynchronous between-graph training across emulated hosts, TensorFlow's servers and
ferroflow's side by side: every task on its own host (scripts/emu/emu_hosts.py: a network
namespace per host, each link limited to --rate_mbit in each direction by tbf), 1 ps (--ps P: P ps,
the model split evenly over them, the bound P times higher) and N
workers. Each worker host runs its server and a TensorFlow 2.21 Python client (TF 1.x graph
mode) that trains a communication-bound model (--model mlp: one 25 MB weight matrix on the ps, pulled
and its gradient pushed every step) or the deep MNIST CNN (--model cnn: 13 MB of weights, batch 50,
compute-bound on this machine's 2 cores). The link bound is the ps link's rate over the model's
bytes (one model in each direction per global step); figures are global steps/s and their
fraction of that bound, and of "raw": the same bytes in the same pattern over plain TCP
sockets (each worker step pulls the model from the ps and pushes as many bytes back). The
systems run alternately, --rounds times each; the best round of each is reported.

Usage (root): .venv/bin/python scripts/bench/emu_scaling.py [--workers 1,2,4] [--rate_mbit 1000]
           [--seconds 15] [--rounds 1] [--ps 1] [--model mlp|cnn] [--unpaced_too]   (FERROFLOW_BIN overrides the binary)
           [--systems ferroflow,tensorflow,raw] [--cpu] [--perf DIR]
--cpu prints each server's CPU time (user + system, from /proc/PID/stat) over the timed window
per global step; --perf DIR records `perf record` (call graphs: --perf_call_graph) of the first ps and worker 0's server over
that window into DIR/<system>-ps0.data and DIR/<system>-w0.data.
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "emu"))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "compat"))
import emu_hosts  # noqa: E402
import ffcluster  # noqa: E402

PORT = 2222
DIM = 2500  # a DIM x DIM float32 matrix: 25 MB
# The weights' bytes each model moves each way per step.
MODEL_BYTES = {"mlp": 4 * DIM * DIM, "cnn": 4 * (5 * 5 * 32 + 5 * 5 * 32 * 64 + 7 * 7 * 64 * 1024 + 1024 * 10)}

CLIENT = ffcluster.TF_INIT_OR_WAIT + r'''
import json, os, sys, time
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
import numpy as np
import tensorflow as tf
tf.compat.v1.disable_eager_execution()
cluster, task, target, dim = json.loads(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
start_at, seconds = float(sys.argv[5]), float(sys.argv[6])
model = sys.argv[7] if len(sys.argv) > 7 else "mlp"
rng = np.random.RandomState(task)
with tf.compat.v1.device(tf.compat.v1.train.replica_device_setter(worker_device=f"/job:worker/task:{task}", cluster=cluster)):
    n_ps = len(cluster["ps"])
    gs = tf.compat.v1.train.get_or_create_global_step()
    if model == "cnn":
        # The deep MNIST CNN (batch 50): 3.3 M weights (13 MB), spread over the ps tasks
        # variable by variable as replica_device_setter places them.
        x = tf.compat.v1.placeholder(tf.float32, [50, 28, 28, 1])
        y = tf.compat.v1.placeholder(tf.int32, [50])
        init = tf.compat.v1.truncated_normal_initializer(stddev=0.1, seed=1)
        h = x
        for i, (k, c_in, c_out) in enumerate([(5, 1, 32), (5, 32, 64)]):
            w_c = tf.compat.v1.get_variable(f"conv{i}", [k, k, c_in, c_out], initializer=init)
            h = tf.nn.relu(tf.nn.conv2d(h, w_c, 1, "SAME"))
            h = tf.nn.max_pool2d(h, 2, 2, "SAME")
        h = tf.reshape(h, [50, 7 * 7 * 64])
        w1 = tf.compat.v1.get_variable("fc1", [7 * 7 * 64, 1024], initializer=init)
        w2 = tf.compat.v1.get_variable("fc2", [1024, 10], initializer=init)
        logits = tf.matmul(tf.nn.relu(tf.matmul(h, w1)), w2)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        feed_values = (rng.rand(50, 28, 28, 1).astype(np.float32), rng.randint(0, 10, 50).astype(np.int32))
        placeholders = (x, y)
    else:
        w = tf.compat.v1.get_variable("w", [dim, dim], initializer=tf.compat.v1.zeros_initializer(),
                                      partitioner=tf.compat.v1.fixed_size_partitioner(n_ps) if n_ps > 1 else None)
        x = tf.compat.v1.placeholder(tf.float32, [8, dim])
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))
        feed_values, placeholders = (rng.rand(8, dim).astype(np.float32),), (x,)
    train = tf.compat.v1.train.GradientDescentOptimizer(1e-4).minimize(loss, global_step=gs)
    ready = tf.compat.v1.report_uninitialized_variables()
feed = dict(zip(placeholders, feed_values))
with tf.compat.v1.Session(target) as sess:
    init = tf.compat.v1.global_variables_initializer()
    init_or_wait(sess, task, init, ready, 0.1, "timed out waiting for the chief to initialize")
    for _ in range(3):
        sess.run(train, feed)
    while time.time() < start_at:
        sess.run(train, feed)
    steps, end = 0, start_at + seconds
    while time.time() < end:
        sess.run(train, feed)
        steps += 1
    print(json.dumps({"task": task, "steps": steps, "seconds": seconds}), flush=True)
'''


RAW_PS = r'''
import socket, sys, threading
size = int(sys.argv[1])
model = bytearray(size)
def serve(c):
    buf = bytearray(size)
    view = memoryview(buf)
    try:
        while True:
            c.sendall(model)  # the worker pulls the weights
            got = 0
            while got < size:  # and pushes its gradient
                n = c.recv_into(view[got:])
                if n == 0:
                    return
                got += n
    except OSError:
        pass
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[2])))
s.listen()
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
'''

RAW_WORKER = r'''
import json, socket, sys, time
host, port, size, start_at, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
c = socket.create_connection((host, port))
buf = bytearray(size)
view = memoryview(buf)
def step():
    got = 0
    while got < size:
        n = c.recv_into(view[got:])
        if n == 0:
            sys.exit("the ps closed the connection")
        got += n
    c.sendall(buf)
for _ in range(3):
    step()
while time.time() < start_at:
    step()
steps, end = 0, start_at + seconds
while time.time() < end:
    step()
    steps += 1
print(json.dumps({"steps": steps}), flush=True)
'''


def run_raw(workers, rate_mbit, seconds, size):
    """The same bytes in the same pattern over plain TCP sockets: each worker step pulls
    the model from the ps and pushes as many bytes back."""
    hosts = ["ps0"] + [f"w{i}" for i in range(workers)]
    with emu_hosts.EmuNet(hosts, rate_mbit) as net:
        ps = net.popen("ps0", [sys.executable, "-c", RAW_PS, str(size), str(PORT)])
        try:
            wait_port(net.addr("ps0"), [ps])
            start_at = time.time() + 5
            clients = [net.popen(f"w{i}", [sys.executable, "-c", RAW_WORKER, net.addr("ps0"), str(PORT), str(size),
                                           str(start_at), str(seconds)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                       for i in range(workers)]
            window = Window({"ps0": ps}, start_at, seconds) if OPTS["cpu"] else None
            if window:
                window.start()
            steps = steps_of(clients, "raw-socket")
            if window:
                window.join()
                window.report("raw", steps)
            return steps / seconds
        finally:
            ffcluster.stop([ps])


def steps_of(clients, what):
    """The steps the clients timed, summed (each prints a JSON line with "steps")."""
    total = 0
    for c in clients:
        out, err = c.communicate(timeout=300)
        if c.returncode != 0:
            sys.exit(f"a {what} client failed ({c.returncode}):\n{err[-3000:]}")
        total += json.loads(out.strip().splitlines()[-1])["steps"]
    return total


def cpu_seconds(pid):
    """User + system CPU seconds of process `pid` (all its threads), or None once it is gone."""
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Window(threading.Thread):
    """Samples the CPU time of `procs` (name -> Popen) at `start_at` and `start_at + seconds`,
    and optionally records `perf` of some of them over the same window."""

    def __init__(self, procs, start_at, seconds, perf_dir=None, perf_names=(), tag=""):
        super().__init__(daemon=True)
        self.procs, self.start_at, self.seconds = procs, start_at, seconds
        self.perf_dir, self.perf_names, self.tag = perf_dir, perf_names, tag
        self.cpu = {}

    def run(self):
        time.sleep(max(0.0, self.start_at - time.time()))
        before = {n: cpu_seconds(p.pid) for n, p in self.procs.items()}
        perfs = []
        if self.perf_dir:
            os.makedirs(self.perf_dir, exist_ok=True)
            for n in self.perf_names:
                out = os.path.join(self.perf_dir, f"{self.tag}-{n}.data")
                perfs.append(subprocess.Popen(["perf", "record", "--call-graph", OPTS["call_graph"], "-o", out, "-p", str(self.procs[n].pid),
                                               "--", "sleep", str(self.seconds)],
                                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        time.sleep(max(0.0, self.start_at + self.seconds - time.time()))
        after = {n: cpu_seconds(p.pid) for n, p in self.procs.items()}
        self.cpu = {n: after[n] - before[n] for n in self.procs if before[n] is not None and after[n] is not None}
        for p in perfs:
            p.wait()

    def report(self, system, steps):
        if not self.cpu or steps <= 0:
            return
        per = {n: round(1000 * c / steps, 2) for n, c in self.cpu.items()}
        print(json.dumps({"system": system, "global_steps": steps, "cpu_ms_per_step": per,
                          "cpu_s": {n: round(c, 2) for n, c in self.cpu.items()}}), flush=True)


OPTS = {"cpu": False, "perf": None, "call_graph": "fp"}


def wait_port(addr, procs, timeout=120):
    end = time.time() + timeout
    while time.time() < end:
        for p in procs:
            if p.poll() is not None:
                sys.exit(f"a server exited ({p.returncode}) before {addr} opened")
        try:
            socket.create_connection((addr, PORT), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    sys.exit(f"{addr}:{PORT} did not open within {timeout} s")


def run(system, workers, rate_mbit, seconds, extra=(), n_ps=1, model="mlp"):
    ps_hosts = [f"ps{j}" for j in range(n_ps)]
    hosts = ps_hosts + [f"w{i}" for i in range(workers)]
    with emu_hosts.EmuNet(hosts, rate_mbit) as net:
        cluster = {"ps": [f"{net.addr(h)}:{PORT}" for h in ps_hosts],
                   "worker": [f"{net.addr(h)}:{PORT}" for h in hosts[n_ps:]]}
        servers = []
        try:
            for job, i, h in [("ps", j, h) for j, h in enumerate(ps_hosts)] + \
                    [("worker", i, f"w{i}") for i in range(workers)]:
                if system == "tensorflow":
                    argv = [sys.executable, "-c", ffcluster.TF_SERVER, json.dumps(cluster), job, str(i)]
                else:
                    argv = [ffcluster.binary(), "server", "--ps_hosts", ",".join(cluster["ps"]),
                            "--worker_hosts", ",".join(cluster["worker"]), "--job_name", job, "--task_index", str(i),
                            *extra]
                servers.append(net.popen(h, argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            for h in hosts:
                wait_port(net.addr(h), servers)
            # Every client imports TensorFlow and warms up before the timed window: on 2
            # cores that takes a few seconds per process.
            start_at = time.time() + 15 + 5 * len(hosts)
            clients = [net.popen(f"w{i}", [sys.executable, "-c", CLIENT, json.dumps(cluster), str(i),
                                           f"grpc://{net.addr(f'w{i}')}:{PORT}", str(DIM), str(start_at), str(seconds),
                                           model],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                       for i in range(workers)]
            window = None
            if OPTS["cpu"] or OPTS["perf"]:
                names = [f"ps{j}" for j in range(n_ps)] + [f"w{i}" for i in range(workers)]
                window = Window(dict(zip(names, servers)), start_at, seconds, OPTS["perf"], ["ps0", "w0"], system)
                window.start()
            steps = steps_of(clients, system)
            if window:
                window.join()
                window.report(system, steps)
            return steps / seconds
        finally:
            ffcluster.stop(servers)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", default="1,2,4")
    ap.add_argument("--rate_mbit", type=int, default=1000)
    ap.add_argument("--seconds", type=float, default=15)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--ps", type=int, default=1,
                    help="ps tasks, each on its own host; the model is split evenly over them (raw sockets: 1 ps only)")
    ap.add_argument("--model", choices=sorted(MODEL_BYTES), default="mlp",
                    help="mlp: one 25 MB matrix, communication-bound; cnn: the deep MNIST CNN, batch 50 (13 MB)")
    ap.add_argument("--unpaced_too", action="store_true",
                    help="also run ferroflow's servers with transfer pacing off (--transfer_pacing_bytes 0)")
    ap.add_argument("--systems", default="ferroflow,tensorflow,raw",
                    help="comma-separated subset of ferroflow,tensorflow,raw to run")
    ap.add_argument("--cpu", action="store_true",
                    help="print each server's CPU ms per global step over the timed window")
    ap.add_argument("--perf", default=None, metavar="DIR",
                    help="perf record -g the ps0 and w0 servers over the timed window into DIR")
    ap.add_argument("--perf_call_graph", default="fp",
                    help="perf's --call-graph mode (fp; dwarf for ferroflow's frames, which lack frame pointers)")
    a = ap.parse_args()
    OPTS["cpu"], OPTS["perf"], OPTS["call_graph"] = a.cpu, a.perf, a.perf_call_graph
    systems = set(a.systems.split(","))
    if systems - {"ferroflow", "tensorflow", "raw"}:
        sys.exit(f"--systems: unknown {sorted(systems - {'ferroflow', 'tensorflow', 'raw'})}")
    nan = float("nan")
    model_bytes = MODEL_BYTES[a.model]
    bound = a.ps * a.rate_mbit * 1e6 / 8 / model_bytes
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    print(f"CPU: {cpu}; link {a.rate_mbit} Mbit/s each way per host; model {model_bytes / 1e6:.0f} MB; "
          f"link bound {bound:.2f} global steps/s; model {a.model}")
    for n in [int(w) for w in a.workers.split(",")]:
        ff, tf, raw, unpaced = [], [], [], []
        for _ in range(a.rounds):
            if "ferroflow" in systems:
                ff.append(run("ferroflow", n, a.rate_mbit, a.seconds, n_ps=a.ps, model=a.model))
            if a.unpaced_too:
                unpaced.append(run("ferroflow", n, a.rate_mbit, a.seconds, ["--transfer_pacing_bytes", "0"], a.ps,
                                   a.model))
            if "tensorflow" in systems:
                tf.append(run("tensorflow", n, a.rate_mbit, a.seconds, n_ps=a.ps, model=a.model))
            if "raw" in systems:
                raw.append(run_raw(n, a.rate_mbit, a.seconds, model_bytes) if a.ps == 1 else nan)
        ff, tf, raw = ff or [nan], tf or [nan], raw or [nan]
        row = {"workers": n, "ferroflow": round(max(ff), 3), "tensorflow": round(max(tf), 3), "raw": round(max(raw), 3),
               "ferroflow_of_bound": round(max(ff) / bound, 3), "tensorflow_of_bound": round(max(tf) / bound, 3),
               "raw_of_bound": round(max(raw) / bound, 3), "ferroflow_of_raw": round(max(ff) / max(raw), 3),
               "ratio": round(max(ff) / max(tf), 3) if max(tf) > 0 else None}
        if unpaced:
            row["ferroflow_unpaced_of_bound"] = round(max(unpaced) / bound, 3)
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
