"""The classic TensorFlow 1.x between-graph trainer, written in plain tf.compat.v1, trains
on a ferroflow cluster (1 ps + 2 workers, all `ferroflow server` processes).

Two trainer processes (this script with `--task_index 0` and `--task_index 1`) run in
parallel, one per worker. Each builds its own graph under
`replica_device_setter(worker_device="/job:worker/task:<i>", cluster=...)` (variables,
`global_step` and the Adagrad slots on /job:ps/task:0, the rest on its worker): an MLP
784-64-10 on the first MNIST training images, `get_or_create_global_step()`,
`AdagradOptimizer(...).minimize(loss, global_step=...)`, and trains in a
`MonitoredTrainingSession(master=<its own ferroflow worker>, is_chief=(i == 0),
hooks=[StopAtStepHook(last_step=STEPS)])` until the shared global step reaches STEPS.
This runs twice: without checkpoint_dir, then with one (the chief looks for a checkpoint
there, saves
through the sharded Saver's SaveV2/MergeV2Checkpoints on the ferroflow ps at the start
and the end, and TensorFlow's checkpoint reader must find global_step there); then a chief
on a fresh ferroflow cluster restores that checkpoint (RestoreV2) and trains on from the
saved global step and weights.

Checks: both workers ran steps; the global step, read afterwards from a fresh session,
reached STEPS; the loss fell (mean of the last 20 < half the mean of the first 20); and
it ends in the range of TensorFlow's own run of the same model, seed, data and number of
steps in a local tf.compat.v1.Session (async training is nondeterministic, so loosely).

The non-chief's SessionManager polls readiness every 30 s (`recovery_wait_secs` is not
reachable through MonitoredTrainingSession), so its MonitoredTrainingSession is opened
only once the chief has initialized the model (the chief writes a file into a shared temp
dir); the chief then waits for the non-chief's session before its first step, so both
really train concurrently. Every wait is bounded (trainer processes 300 s, session calls
60 s, the barrier 120 s, the whole test 900 s) and every process is killed at the end.
"""

import argparse
import gzip
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

STEPS = 300
RESUME_STEPS = 20
BATCH = 100
IMAGES = 4000
HIDDEN = 64
LR = 0.1
SEED = 1
TIMEOUT = 300  # per trainer process
BARRIER_TIMEOUT = 120
OP_TIMEOUT_MS = 60000  # per session call
WATCHDOG = 900  # the whole test
_trainers = []


def _watchdog():
    """Ends a stuck test: kills the trainers and the ferroflow servers, then exits."""
    print(f"test_between_graph: FAILED: still running after {WATCHDOG} s", flush=True)
    for p in _trainers:
        if p.poll() is None:
            p.kill()
    ffcluster._cleanup()
    os._exit(3)


def mnist(n):
    d = os.path.join(ffcluster.ROOT, "data", "mnist")
    with gzip.open(os.path.join(d, "train-images-idx3-ubyte.gz")) as f:
        magic, count, rows, cols = struct.unpack(">IIII", f.read(16))
        assert magic == 2051 and count >= n, (magic, count)
        x = np.frombuffer(f.read(n * rows * cols), np.uint8).reshape(n, rows * cols).astype(np.float32) / 255.0
    with gzip.open(os.path.join(d, "train-labels-idx1-ubyte.gz")) as f:
        magic, count = struct.unpack(">II", f.read(8))
        assert magic == 2049 and count >= n, (magic, count)
        y = np.frombuffer(f.read(n), np.uint8).astype(np.int64)
    return x, y


def batch(x, y, k):
    """The k-th minibatch (deterministic, wrapping around)."""
    nb = len(x) // BATCH
    i = (k % nb) * BATCH
    return x[i:i + BATCH], y[i:i + BATCH]


def build(tf):
    """The model; returns its tensors. Called under the caller's device function."""
    tf.compat.v1.set_random_seed(SEED)
    gs = tf.compat.v1.train.get_or_create_global_step()
    x = tf.compat.v1.placeholder(tf.float32, [None, 784], name="images")
    y = tf.compat.v1.placeholder(tf.int64, [None], name="labels")
    with tf.compat.v1.variable_scope("hidden"):
        w1 = tf.compat.v1.get_variable("weights", [784, HIDDEN],
                                       initializer=tf.compat.v1.truncated_normal_initializer(stddev=0.1))
        b1 = tf.compat.v1.get_variable("biases", [HIDDEN], initializer=tf.compat.v1.zeros_initializer())
    with tf.compat.v1.variable_scope("softmax"):
        w2 = tf.compat.v1.get_variable("weights", [HIDDEN, 10],
                                       initializer=tf.compat.v1.truncated_normal_initializer(stddev=0.1))
        b2 = tf.compat.v1.get_variable("biases", [10], initializer=tf.compat.v1.zeros_initializer())
    h = tf.nn.relu(tf.matmul(x, w1) + b1)
    logits = tf.matmul(h, w2) + b2
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    train = tf.compat.v1.train.AdagradOptimizer(LR).minimize(loss, global_step=gs)
    return dict(gs=gs, x=x, y=y, loss=loss, train=train)


def wait_for_file(path, what):
    deadline = time.monotonic() + BARRIER_TIMEOUT
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.05)


def touch(path):
    with open(path + ".tmp", "w") as f:
        f.write("1")
    os.replace(path + ".tmp", path)


def trainer(args):
    """One worker's process: the classic between-graph trainer."""
    import tensorflow as tf

    tf.compat.v1.disable_eager_execution()
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)
    i = args.task_index
    spec = json.loads(args.cluster)
    cluster = tf.train.ClusterSpec(spec)
    x_all, y_all = mnist(IMAGES)
    with tf.compat.v1.device(tf.compat.v1.train.replica_device_setter(worker_device=f"/job:worker/task:{i}", cluster=cluster)):
        m = build(tf)
    config = tf.compat.v1.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{i}"],
                                      operation_timeout_in_ms=OP_TIMEOUT_MS)
    if i != 0:
        wait_for_file(os.path.join(args.sync_dir, "ready0"), "the chief to initialize the model")
    hooks = [tf.compat.v1.train.StopAtStepHook(last_step=STEPS)]
    losses, global_steps = [], []
    with tf.compat.v1.train.MonitoredTrainingSession(
            master=args.target, is_chief=(i == 0), hooks=hooks, config=config,
            checkpoint_dir=args.checkpoint_dir or None, save_summaries_steps=None, save_summaries_secs=None,
            log_step_count_steps=0, stop_grace_period_secs=10) as sess:
        touch(os.path.join(args.sync_dir, f"ready{i}"))
        if i == 0:
            wait_for_file(os.path.join(args.sync_dir, "ready1"), "the other worker's session")
        k = 0
        while not sess.should_stop():
            xb, yb = batch(x_all, y_all, 2 * k + i)
            _, lo, g = sess.run([m["train"], m["loss"], m["gs"]], feed_dict={m["x"]: xb, m["y"]: yb})
            losses.append(float(lo))
            global_steps.append(int(g))
            if k % 25 == 0:
                print(f"worker {i}: local step {k} global step {g} loss {lo:.4f}", flush=True)
            k += 1
    print(f"worker {i}: {len(losses)} steps, loss {losses[0]:.4f} -> {losses[-1]:.4f}", flush=True)
    print("RESULT " + json.dumps(dict(losses=losses, global_steps=global_steps)), flush=True)


def tensorflow_reference(tf):
    """The same training, single worker, in a local TensorFlow session."""
    x_all, y_all = mnist(IMAGES)
    g = tf.Graph()
    with g.as_default():
        m = build(tf)
        init = tf.compat.v1.global_variables_initializer()
        losses = []
        with tf.compat.v1.Session() as sess:
            sess.run(init)
            for k in range(STEPS):
                xb, yb = batch(x_all, y_all, k)
                _, lo = sess.run([m["train"], m["loss"]], feed_dict={m["x"]: xb, m["y"]: yb})
                losses.append(float(lo))
    return np.array(losses)


def read_global_step(tf, target):
    """global_step as the ps holds it, through a fresh graph and session on a worker."""
    g = tf.Graph()
    with g.as_default(), tf.compat.v1.device("/job:ps/task:0"):
        gs = tf.compat.v1.train.get_or_create_global_step()
        with tf.compat.v1.Session(target) as sess:
            return int(sess.run(gs, options=tf.compat.v1.RunOptions(timeout_in_ms=OP_TIMEOUT_MS)))


def run_cluster(tf, checkpoint_dir):
    servers, _ = ffcluster.cluster({"ps": 1, "worker": 2})
    sync_dir = tempfile.mkdtemp(prefix="ff-between-graph-")
    procs = []
    try:
        spec = {j: [s.target.replace("grpc://", "") for s in ss] for j, ss in servers.items()}
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONUNBUFFERED="1")

        def start(i):
            cmd = [sys.executable, os.path.abspath(__file__), "--task_index", str(i), "--cluster", json.dumps(spec),
                   "--target", servers["worker"][i].target, "--sync_dir", sync_dir,
                   "--checkpoint_dir", checkpoint_dir or ""]
            # Output goes to files, so neither trainer can block on a full pipe.
            out = open(os.path.join(sync_dir, f"worker{i}.out"), "w")
            err = open(os.path.join(sync_dir, f"worker{i}.err"), "w")
            p = subprocess.Popen(cmd, stdout=out, stderr=err, text=True, env=env)
            out.close()
            err.close()
            _trainers.append(p)
            procs.append(p)
            return p

        t0 = time.perf_counter()
        start(0)
        start(1)
        results = []
        deadline = time.monotonic() + TIMEOUT
        for i, p in enumerate(procs):
            try:
                p.wait(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                raise AssertionError(f"worker {i} did not finish within {TIMEOUT} s")
            out = open(os.path.join(sync_dir, f"worker{i}.out")).read()
            err = open(os.path.join(sync_dir, f"worker{i}.err")).read()
            for line in out.splitlines():
                if not line.startswith("RESULT "):
                    print("  " + line)
            if p.returncode != 0:
                raise AssertionError(f"worker {i} failed (exit {p.returncode}):\n{err[-4000:]}")
            res = [json.loads(line[7:]) for line in out.splitlines() if line.startswith("RESULT ")]
            assert len(res) == 1, out
            results.append(res[0])
        seconds = time.perf_counter() - t0
        final_step = read_global_step(tf, servers["worker"][0].target)
        return results, final_step, seconds
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(timeout=10)
        for ss in servers.values():
            for s in ss:
                s.kill()
        shutil.rmtree(sync_dir, ignore_errors=True)


def resume(tf, checkpoint_dir, saved_step, first_loss):
    """A chief on a fresh cluster restores the checkpoint (RestoreV2 on the ferroflow ps) and
    trains on: the global step goes on from the saved one, the loss from where it was."""
    servers, _ = ffcluster.cluster({"ps": 1, "worker": 1})
    try:
        spec = {j: [s.target.replace("grpc://", "") for s in ss] for j, ss in servers.items()}
        x_all, y_all = mnist(IMAGES)
        g = tf.Graph()
        with g.as_default():
            setter = tf.compat.v1.train.replica_device_setter(worker_device="/job:worker/task:0",
                                                              cluster=tf.train.ClusterSpec(spec))
            with tf.compat.v1.device(setter):
                m = build(tf)
            hooks = [tf.compat.v1.train.StopAtStepHook(num_steps=RESUME_STEPS)]
            steps, losses = [], []
            with tf.compat.v1.train.MonitoredTrainingSession(
                    master=servers["worker"][0].target, is_chief=True, hooks=hooks, checkpoint_dir=checkpoint_dir,
                    config=tf.compat.v1.ConfigProto(operation_timeout_in_ms=OP_TIMEOUT_MS),
                    save_summaries_steps=None, save_summaries_secs=None, log_step_count_steps=0,
                    stop_grace_period_secs=10) as sess:
                k = 0
                while not sess.should_stop():
                    xb, yb = batch(x_all, y_all, k)
                    _, lo, gs = sess.run([m["train"], m["loss"], m["gs"]], feed_dict={m["x"]: xb, m["y"]: yb})
                    steps.append(int(gs))
                    losses.append(float(lo))
                    k += 1
        print(f"resumed from the checkpoint: global step {steps[0]} -> {steps[-1] + 1}, "
              f"loss {losses[0]:.4f} -> {losses[-1]:.4f}")
        assert steps[0] == saved_step, f"restored global step {steps[0]}, saved {saved_step}"
        assert len(steps) == RESUME_STEPS and steps[-1] + 1 == saved_step + RESUME_STEPS, steps
        assert losses[0] < 0.5 * first_loss, f"restored weights should give a low loss: {losses[0]}"
    finally:
        for ss in servers.values():
            for s in ss:
                s.kill()


def check(results, final_step, ref, what):
    for i, r in enumerate(results):
        assert len(r["losses"]) > 0, f"{what}: worker {i} ran no steps"
    # Each worker stops after a step at which it saw the global step reach STEPS; steps that
    # were running concurrently (and a read that raced an increment) may add a few.
    assert STEPS <= final_step <= STEPS + 2 * len(results), f"{what}: global step {final_step}, want {STEPS}"
    for i, r in enumerate(results):
        assert max(r["global_steps"]) < final_step, (what, i, max(r["global_steps"]), final_step)
    # Both workers' losses in the order of the global step they were computed at.
    pairs = sorted((g, lo) for r in results for g, lo in zip(r["global_steps"], r["losses"]))
    losses = np.array([lo for _, lo in pairs])
    first, last = losses[:20].mean(), losses[-20:].mean()
    ref_last = ref[-20:].mean()
    print(f"{what}: steps per worker {[len(r['losses']) for r in results]}, global step {final_step}; "
          f"loss (mean of 20) {first:.4f} -> {last:.4f}; TensorFlow local {ref[:20].mean():.4f} -> {ref_last:.4f}")
    assert last < 0.5 * first, f"{what}: the loss must fall ({first} -> {last})"
    assert last < 2.0 * ref_last + 0.1, f"{what}: final loss {last} is out of TensorFlow's range ({ref_last})"


def main():
    timer = threading.Timer(WATCHDOG, _watchdog)
    timer.daemon = True
    timer.start()
    import tensorflow as tf

    tf.compat.v1.disable_eager_execution()
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)
    t0 = time.perf_counter()
    ref = tensorflow_reference(tf)
    print(f"TensorFlow local: {STEPS} steps in {time.perf_counter() - t0:.1f} s, loss {ref[0]:.4f} -> {ref[-1]:.4f}")
    assert ref[-20:].mean() < 0.5 * ref[:20].mean(), "TensorFlow's own loss must fall"

    results, final_step, seconds = run_cluster(tf, None)
    print(f"no checkpoint_dir: trainers done in {seconds:.1f} s")
    check(results, final_step, ref, "no checkpoint_dir")

    ckpt = tempfile.mkdtemp(prefix="ff-between-graph-ckpt-")
    try:
        results, final_step, seconds = run_cluster(tf, ckpt)
        print(f"checkpoint_dir: trainers done in {seconds:.1f} s")
        check(results, final_step, ref, "checkpoint_dir")
        latest = tf.train.latest_checkpoint(ckpt)
        assert latest is not None, f"no checkpoint in {ckpt}: {os.listdir(ckpt)}"
        saved = tf.train.load_checkpoint(latest)
        names = dict(tf.train.list_variables(latest))
        want = {"global_step", "hidden/weights", "hidden/biases", "softmax/weights", "softmax/biases",
                "hidden/weights/Adagrad", "softmax/weights/Adagrad"}
        assert want <= set(names), sorted(names)
        saved_step = int(saved.get_tensor("global_step"))
        print(f"checkpoint_dir: the chief's last checkpoint {os.path.basename(latest)} holds global_step {saved_step}")
        assert STEPS <= saved_step <= final_step, (saved_step, final_step)
        resume(tf, ckpt, saved_step, ref[:20].mean())
    finally:
        shutil.rmtree(ckpt, ignore_errors=True)
    print("test_between_graph: OK")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--task_index", type=int)
    ap.add_argument("--cluster")
    ap.add_argument("--target")
    ap.add_argument("--sync_dir")
    ap.add_argument("--checkpoint_dir", default="")
    a = ap.parse_args()
    if a.task_index is None:
        main()
    else:
        trainer(a)
