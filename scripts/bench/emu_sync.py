"""Synchronous training across emulated hosts: TensorFlow's SyncReplicasOptimizer (every
gradient through the ps) against all-reduce among the workers (TensorFlow's collective ops,
a ring: no ps), on TensorFlow's servers and on ferroflow's, side by side. Every task on its
own host (scripts/emu/emu_hosts.py: a network namespace per host, each link limited to
--rate_mbit in each direction by tbf); N workers (+ 1 ps for the SyncReplicasOptimizer),
each driven by a TensorFlow 2.21 Python client in TF 1.x graph mode, training a
communication-bound model: one 25 MB weight matrix, the same fixed batch per worker every
step. Figures are global steps/s (the chief's global step over a timed window) and their
fraction of each pattern's link bound: the ps link carries N models each way per step
(SyncReplicasOptimizer), a ring moves 2 (N-1)/N models each way per host.

The SyncReplicasOptimizer runs with no initial tokens, so every step of every worker is
computed against the weights of the previous update, as an all-reduce step is: the chief's
first losses must be the same in both (checked, relative error <= 1e-4).

Usage (root): .venv/bin/python scripts/bench/emu_sync.py [--workers 4,8] [--rate_mbit 1000]
           [--seconds 20] [--systems ff_allreduce,tf_sro,tf_allreduce,ff_sro]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "emu"))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "compat"))
sys.path.insert(0, HERE)
import emu_hosts  # noqa: E402
import ffcluster  # noqa: E402
from emu_scaling import wait_port  # noqa: E402

PORT = 2222
DIM = 2500  # a DIM x DIM float32 matrix: 25 MB
LEADER = "/job:worker/replica:0/task:0"
LOSSES = 5  # the chief's first losses, compared between the patterns

TF_SERVER = r'''
import json, os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
import tensorflow as tf
config = tf.compat.v1.ConfigProto()
config.ParseFromString(open(sys.argv[4], "rb").read())
tf.distribute.Server(tf.train.ClusterSpec(json.loads(sys.argv[1])), job_name=sys.argv[2],
                     task_index=int(sys.argv[3]), config=config).join()
'''

CLIENT = r'''
import json, os, sys, time
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
import numpy as np
import tensorflow as tf
tf.compat.v1.disable_eager_execution()
v1 = tf.compat.v1
pattern, cluster, task, target = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
dim, start_at, seconds, n_losses = int(sys.argv[5]), float(sys.argv[6]), float(sys.argv[7]), int(sys.argv[8])
n = len(cluster["worker"])
me = f"/job:worker/task:{task}"
feed_x = np.random.RandomState(task).rand(8, dim).astype(np.float32)
LR = 0.5
# Generous while everyone starts (TensorFlow's non-chief sessions poll for the chief's
# initialization every 30 s), short once the window is over.
warm_opts, window_opts, tail_opts = [v1.RunOptions(timeout_in_ms=ms) for ms in (300000, 60000, 5000)]

def model():
    w = v1.get_variable("w", [dim, dim], initializer=v1.zeros_initializer())
    x = v1.placeholder(tf.float32, [8, dim])
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))
    return w, x, loss

if pattern == "sro":
    with v1.device(v1.train.replica_device_setter(worker_device=me, cluster=cluster)):
        w, x, loss = model()
        gs = v1.train.get_or_create_global_step()
        opt = v1.train.SyncReplicasOptimizer(v1.train.GradientDescentOptimizer(LR), replicas_to_aggregate=n,
                                             total_num_replicas=n)
        train = opt.minimize(loss, global_step=gs)
    hooks = [opt.make_session_run_hook(task == 0, num_tokens=0)]
    sess = v1.train.MonitoredTrainingSession(master=target, is_chief=task == 0, hooks=hooks,
                                             config=v1.ConfigProto(device_filters=["/job:ps", me]),
                                             save_checkpoint_secs=None, save_summaries_steps=None,
                                             log_step_count_steps=0)
    raw = sess
else:
    with v1.device(me):
        w, x, loss = model()
        gs = v1.train.get_or_create_global_step()
        # Worker 0's initial weights to every replica.
        if task == 0:
            bcast = tf.raw_ops.CollectiveBcastSendV2(input=w.read_value(), group_size=n, group_key=1,
                                                     instance_key=2, timeout_seconds=120.0)
        else:
            bcast = w.assign(tf.raw_ops.CollectiveBcastRecvV2(T=tf.float32, group_size=n, group_key=1,
                                                              instance_key=2, shape=[dim, dim],
                                                              timeout_seconds=120.0))
        grad = tf.gradients(loss, [w])[0]
        mean = tf.raw_ops.CollectiveReduceV2(input=grad, group_size=n, group_key=1, instance_key=1,
                                             ordering_token=[], merge_op="Add", final_op="Div",
                                             timeout_seconds=30.0)
        train = v1.train.GradientDescentOptimizer(LR).apply_gradients([(mean, w)], global_step=gs)
        init = v1.global_variables_initializer()
    sess = v1.Session(target, config=v1.ConfigProto(device_filters=[me]))
    sess.run(init)
    sess.run(bcast)
    raw = sess

losses = []
def step(opts):
    _, l = sess.run([train, loss], {x: feed_x}, options=opts)
    if len(losses) < n_losses:
        losses.append(float(l))

def read_gs():
    return int(sess.run(gs))

while time.time() < start_at:
    step(warm_opts)
g0 = read_gs() if task == 0 else 0
end = start_at + seconds
while time.time() < end:
    step(window_opts)
g1 = read_gs() if task == 0 else 0
# Keep stepping a little so no peer waits for this one while it finishes its window.
try:
    while time.time() < end + 3:
        step(tail_opts)
except Exception:
    pass
print(json.dumps({"task": task, "global_steps": g1 - g0, "losses": losses}), flush=True)
os._exit(0)
'''


def run(system, pattern, workers, rate_mbit, seconds, config_path):
    with_ps = pattern == "sro"
    hosts = (["ps0"] if with_ps else []) + [f"w{i}" for i in range(workers)]
    with emu_hosts.EmuNet(hosts, rate_mbit) as net:
        cluster = {"worker": [f"{net.addr(f'w{i}')}:{PORT}" for i in range(workers)]}
        tasks = [("worker", i, f"w{i}") for i in range(workers)]
        if with_ps:
            cluster["ps"] = [f"{net.addr('ps0')}:{PORT}"]
            tasks = [("ps", 0, "ps0")] + tasks
        servers = []
        try:
            for job, i, h in tasks:
                if system == "tensorflow":
                    argv = [sys.executable, "-c", TF_SERVER, json.dumps(cluster), job, str(i), config_path]
                else:
                    spec = ";".join(f"{j}=" + ",".join(a) for j, a in cluster.items())
                    argv = [ffcluster.binary(), "server", "--cluster", spec, "--job_name", job,
                            "--task_index", str(i), "--default_session_config", config_path]
                servers.append(net.popen(h, argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            for h in hosts:
                wait_port(net.addr(h), servers)
            start_at = time.time() + 45 + 5 * workers
            clients = [net.popen(f"w{i}", [sys.executable, "-c", CLIENT, pattern, json.dumps(cluster), str(i),
                                           f"grpc://{net.addr(f'w{i}')}:{PORT}", str(DIM), str(start_at),
                                           str(seconds), str(LOSSES)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                       for i in range(workers)]
            chief = None
            for c in clients:
                out, err = c.communicate(timeout=600)
                if c.returncode != 0 or not out.strip():
                    sys.exit(f"a {system} {pattern} client failed ({c.returncode}):\n{err[-3000:]}")
                r = json.loads(out.strip().splitlines()[-1])
                if r["task"] == 0:
                    chief = r
            return chief["global_steps"] / seconds, chief["losses"]
        finally:
            ffcluster.stop(servers)


SYSTEMS = {
    "ff_allreduce": ("ferroflow", "allreduce"),
    "tf_allreduce": ("tensorflow", "allreduce"),
    "tf_sro": ("tensorflow", "sro"),
    "ff_sro": ("ferroflow", "sro"),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", default="4,8")
    ap.add_argument("--rate_mbit", type=int, default=1000)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--systems", default="ff_allreduce,tf_sro,tf_allreduce,ff_sro")
    a = ap.parse_args()
    systems = a.systems.split(",")
    model_bytes = 4 * DIM * DIM
    link = a.rate_mbit * 1e6 / 8
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    print(f"CPU: {cpu}; link {a.rate_mbit} Mbit/s each way per host; model {model_bytes / 1e6:.0f} MB")
    with tempfile.TemporaryDirectory() as d:
        cfg = ffcluster.leader_config(d, LEADER)
        for n in [int(w) for w in a.workers.split(",")]:
            bound = {"sro": link / (n * model_bytes), "allreduce": link / (2 * (n - 1) / n * model_bytes)}
            row, losses = {"workers": n}, {}
            for name in systems:
                system, pattern = SYSTEMS[name]
                rate, losses[name] = run(system, pattern, n, a.rate_mbit, a.seconds, cfg)
                print(f"  {name}: {rate:.3f} global steps/s", flush=True)
                row[name] = round(rate, 3)
                row[name + "_of_bound"] = round(rate / bound[pattern], 3)
            if "ff_allreduce" in row and "tf_sro" in row:
                row["ff_allreduce_over_tf_sro"] = round(row["ff_allreduce"] / row["tf_sro"], 2)
            if "ff_allreduce" in row and "tf_allreduce" in row:
                row["ff_allreduce_over_tf_allreduce"] = round(row["ff_allreduce"] / row["tf_allreduce"], 2)
            base = losses.get("tf_sro")
            if base:
                errs = {k: max(abs(x - y) / max(abs(y), 1e-12) for x, y in zip(v, base)) for k, v in losses.items()}
                row["max_rel_loss_err_vs_tf_sro"] = {k: float(f"{e:.2g}") for k, e in errs.items()}
            row["chief_losses"] = {k: [round(x, 6) for x in v] for k, v in losses.items()}
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
