"""Between-graph training throughput (asynchronous, or --sync), ferroflow vs TensorFlow 2.21, side by
side on this machine: global steps/s of the MNIST MLP (784-256-10, batch 100 per worker,
Adagrad(0.01)), or with --model cnn of the demo's Deep MNIST CNN (batch 100 per worker,
Adam(1e-3), dropout 0.5), with 1 ps and N workers, every task a separate OS process on loopback.

The main job's comparison (issue #20: `ferroflow demo` against TensorFlow's between-graph
trainer, the same CNN, 1 ps + 2 workers) is one command:
  .venv/bin/python scripts/bench/dist_train_ratio.py --main_job

  ferroflow:  `ferroflow demo --model mlp --ps 1 --workers N --optimizer adagrad ...`
              (ferroflow servers and trainers on the bundled MNIST).
  TensorFlow: one `tf.distribute.Server` ps process and N worker processes; each worker
              hosts its own server and trains its own graph built with
              `tf.compat.v1.train.replica_device_setter` (variables on the ps), plain
              `tf.compat.v1.Session(server.target)` and feed_dict, the chief initializes and
              the others wait for it, like TensorFlow's distributed guide. Data: the same
              MNIST training images (read with numpy), each worker a different shard.

Both report each worker's local steps/s over its training loop after its first 20 steps
(the first steps register the graphs on the tasks; ferroflow's trainer also prints its rate
over the whole loop, and times neither the evaluation nor the final checkpoint); the global
rate is their sum. Every step of both fetches the loss and the global step with the train op, as
ferroflow's trainer and TensorFlow's MonitoredTrainingSession with a StopAtStepHook do
(until session 5 the TensorFlow loop ran the train op alone, one RPC per step less). The systems run alternately, --rounds times each; best rounds are compared.

Usage: .venv/bin/python scripts/bench/dist_train_ratio.py [--workers 1,2,4,8] [--model mlp|cnn]
           [--steps_per_worker 300] [--rounds 1] [--sync] [--main_job]   (FERROFLOW_BIN overrides the binary)

With --sync both use SyncReplicasOptimizer(replicas_to_aggregate = total_num_replicas = N)
with TensorFlow's defaults (one shared token queue, N initial tokens): an update averages N
gradients, so the global rate is the sum of the workers' local rates over N.
"""

import argparse
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "compat"))
import ffcluster  # noqa: E402

WORKER = ffcluster.TF_INIT_OR_WAIT + r'''
import gzip, json, os, sys, time
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
import numpy as np
import tensorflow as tf
tf.compat.v1.disable_eager_execution()
cluster, task, steps, root = json.loads(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
sync = sys.argv[5] == "sync"
model = sys.argv[6]
n_workers = len(cluster["worker"])
server = tf.distribute.Server(tf.train.ClusterSpec(cluster), job_name="worker", task_index=task)
with gzip.open(os.path.join(root, "data/mnist/train-images-idx3-ubyte.gz")) as f:
    images = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 784).astype(np.float32) / 255.0
with gzip.open(os.path.join(root, "data/mnist/train-labels-idx1-ubyte.gz")) as f:
    labels = np.frombuffer(f.read(), np.uint8, offset=8).astype(np.int64)
images, labels = images[task::n_workers], labels[task::n_workers]
tf.compat.v1.set_random_seed(1)
with tf.compat.v1.device(tf.compat.v1.train.replica_device_setter(worker_device=f"/job:worker/task:{task}", cluster=cluster)):
    x = tf.compat.v1.placeholder(tf.float32, [None, 784])
    y = tf.compat.v1.placeholder(tf.int64, [None])
    feed_extra = {}
    if model == "mlp":
        w1 = tf.Variable(tf.random.truncated_normal([784, 256], stddev=0.1))
        b1 = tf.Variable(tf.zeros([256]))
        w2 = tf.Variable(tf.random.truncated_normal([256, 10], stddev=0.1))
        b2 = tf.Variable(tf.zeros([10]))
        logits = tf.matmul(tf.nn.relu(tf.matmul(x, w1) + b1), w2) + b2
        opt = tf.compat.v1.train.AdagradOptimizer(0.01)
    else:
        # The Deep MNIST CNN of ferroflow's demo: conv 5x5x32, pool, conv 5x5x64, pool,
        # fc 1024, dropout (keep 0.5 while training), fc 10; truncated normal 0.1, biases 0.1.
        def w(shape):
            return tf.Variable(tf.random.truncated_normal(shape, stddev=0.1))
        def b(n):
            return tf.Variable(tf.constant(0.1, shape=[n]))
        def conv_pool(h, k, cin, cout):
            c = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(h, w([k, k, cin, cout]), [1, 1, 1, 1], "SAME"), b(cout)))
            return tf.nn.max_pool2d(c, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
        keep = tf.compat.v1.placeholder_with_default(1.0, [])
        h = conv_pool(conv_pool(tf.reshape(x, [-1, 28, 28, 1]), 5, 1, 32), 5, 32, 64)
        fc1 = tf.nn.relu(tf.matmul(tf.reshape(h, [-1, 7 * 7 * 64]), w([3136, 1024])) + b(1024))
        logits = tf.matmul(tf.nn.dropout(fc1, rate=1.0 - keep), w([1024, 10])) + b(10)
        feed_extra = {keep: 0.5}
        opt = tf.compat.v1.train.AdamOptimizer(1e-3)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    gs = tf.compat.v1.train.get_or_create_global_step()
    if sync:
        # As ferroflow's --sync: every worker aggregated, TensorFlow's default tokens.
        opt = tf.compat.v1.train.SyncReplicasOptimizer(opt, replicas_to_aggregate=n_workers,
                                                       total_num_replicas=n_workers)
    train = opt.minimize(loss, global_step=gs)
    init = tf.compat.v1.global_variables_initializer()
    ready = tf.compat.v1.report_uninitialized_variables(tf.compat.v1.global_variables())
with tf.compat.v1.Session(server.target) as sess:
    init_or_wait(sess, task, init, ready, 0.05, "timed out waiting for the chief to initialize the variables")
    if sync:
        if task == 0:
            sess.run(opt.chief_init_op)
            sess.run(opt.get_init_tokens_op())
            coord = tf.compat.v1.train.Coordinator()
            opt.get_chief_queue_runner().create_threads(sess, coord=coord, daemon=True, start=True)
        else:
            sess.run(opt.local_step_init_op)
    b = 0
    def batch():
        global b
        i = (b * 100) % (len(images) - 100)
        b += 1
        return {x: images[i:i + 100], y: labels[i:i + 100], **feed_extra}
    # Like ferroflow's trainer (and MonitoredTrainingSession with a StopAtStepHook), every
    # step also fetches the loss and the global step.
    for _ in range(20):
        sess.run([train, loss, gs], batch())
    t0 = time.perf_counter()
    for _ in range(steps):
        sess.run([train, loss, gs], batch())
    dt = time.perf_counter() - t0
    print(json.dumps({"task": task, "steps_per_sec": steps / dt, "loss": float(sess.run(loss, batch()))}), flush=True)
    # The chief's queue runner thread blocks in the next aggregation: leave without joining it.
    sys.stdout.flush()
    os._exit(0)
'''

def tensorflow(workers, steps, sync=False, model="mlp"):
    ports = ffcluster.free_ports(1 + workers)
    cluster = {"ps": [f"127.0.0.1:{ports[0]}"], "worker": [f"127.0.0.1:{p}" for p in ports[1:]]}
    ps = ffcluster.tf_server(cluster, "ps", 0)
    try:
        procs = [
            subprocess.Popen([sys.executable, "-c", WORKER, json.dumps(cluster), str(t), str(steps), ROOT,
                              "sync" if sync else "async", model],
                             stdout=subprocess.PIPE, text=True)
            for t in range(workers)
        ]
        ffcluster._procs.extend(procs)
        rates = []
        for p in procs:
            out, _ = p.communicate(timeout=900)
            if p.returncode != 0:
                sys.exit(f"TensorFlow worker failed ({p.returncode}):\n{out}")
            rates.append(json.loads(out.strip().splitlines()[-1])["steps_per_sec"])
        # Sync: an update takes one gradient from each of N worker steps.
        return (sum(rates) / workers if sync else sum(rates)), rates
    finally:
        ps.kill()
        ps.wait()


def ferroflow(workers, steps, sync=False, model="mlp"):
    # A fresh logdir every run: a checkpoint left by the previous round would be restored.
    logdir = tempfile.mkdtemp(prefix="ff-dist-train-bench-")
    try:
        return _ferroflow(workers, steps, sync, model, logdir)
    finally:
        shutil.rmtree(logdir, ignore_errors=True)


def _ferroflow(workers, steps, sync, model, logdir):
    opt = ["--optimizer", "adagrad", "--learning_rate", "0.01"] if model == "mlp" else \
        ["--optimizer", "adam", "--learning_rate", "0.001"]
    out = subprocess.run(
        [ffcluster.binary(), "demo", "--model", model, "--ps", "1", "--workers", str(workers), "--steps",
         str(steps if sync else steps * workers), "--batch", "100", "--lr_decay_steps", "0", "--no_progress", "--logdir", logdir] + opt
        + (["--sync"] if sync else []),
        capture_output=True, text=True, timeout=900, cwd=ROOT)
    if out.returncode != 0:
        sys.exit(f"ferroflow demo failed ({out.returncode}):\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    # Each worker's rate after its first 20 steps, as the TensorFlow loop above measures.
    rates = [float(m) for m in re.findall(r"local steps in [0-9.]+s \([0-9.]+ steps/s; ([0-9.]+) after the first 20\)",
                                          out.stdout)]
    if len(rates) != workers:
        sys.exit(f"expected {workers} worker rates in ferroflow's output:\n{out.stdout[-3000:]}")
    return (sum(rates) / workers if sync else sum(rates)), rates


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", default="1,2,4,8")
    ap.add_argument("--steps_per_worker", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--sync", action="store_true", help="synchronous training (SyncReplicasOptimizer, TensorFlow's token semantics)")
    ap.add_argument("--model", choices=["mlp", "cnn"], default="mlp",
                    help="cnn: the main job (ferroflow demo's CNN, Adam 1e-3, dropout 0.5)")
    ap.add_argument("--main_job", action="store_true",
                    help="the main job as issue #20 compares it: --model cnn --workers 2, 150 steps per worker, 2 rounds")
    a = ap.parse_args()
    if a.main_job:
        a.model, a.workers = "cnn", "2"
        a.steps_per_worker = 150 if a.steps_per_worker == 300 else a.steps_per_worker
        a.rounds = max(a.rounds, 2)
    print("model:", a.model, "mode:", "sync (global steps/s = updates/s)" if a.sync else "async")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    print(f"{'workers':>7} {'ferroflow global steps/s':>26} {'TF global steps/s':>20} {'ratio':>7}")
    for n in [int(v) for v in a.workers.split(",")]:
        ff, tf = [], []
        for _ in range(a.rounds):
            ff.append(ferroflow(n, a.steps_per_worker, a.sync, a.model)[0])
            tf.append(tensorflow(n, a.steps_per_worker, a.sync, a.model)[0])
        print(f"{n:>7} {max(ff):>26.1f} {max(tf):>20.1f} {max(ff) / max(tf):>6.2f}x", flush=True)
        # The host's noise moves both systems by up to ~1.5x between rounds: report the ratio
        # of the means beside the ratio of the best rounds.
        print(json.dumps({"model": a.model, "workers": n, "sync": a.sync, "ferroflow": ff, "tensorflow": tf, "ratio_best": max(ff) / max(tf),
                          "ratio_mean": sum(ff) / sum(tf)}), flush=True)


if __name__ == "__main__":
    main()
