"""Several CPU devices per task (`ConfigProto.device_count={"CPU": 3}` as the servers'
config, `tf.distribute.Server(..., config=...)`; `ferroflow server --default_session_config
FILE`): the same scenarios on a TensorFlow 1 ps + 1 worker cluster and on a ferroflow one,
in TF 1.x behaviour and in TF 2 graph mode, must give the same values and error classes:

- `Session.list_devices()` lists CPU:0..2 of both tasks;
- ops pinned to CPU:1 and CPU:2 of the worker feed each other and a fetch;
- resource and ref variables on the ps's CPU:1 updated from the worker's CPU:2;
- a queue and a hash table made on the worker's CPU:0 used from its CPU:1;
- a device that does not exist (CPU:7) fails at placement, and runs with soft placement;
- a linear model with its variables on the ps's CPU:2 trained from the worker's CPU:1."""

import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def scenarios(tf, target):
    out = []
    v1 = tf.compat.v1
    W = "/job:worker/task:0/device:CPU:"
    PS = "/job:ps/task:0/device:CPU:"
    g = tf.Graph()
    with g.as_default():
        with tf.device(W + "2"):
            a = tf.constant([1.0, 2.0, 3.0]) * 2.0
        with tf.device(W + "1"):
            b = tf.reduce_sum(a * a) + 1.0
        with tf.device(PS + "1"):
            rv = v1.get_variable("rv", initializer=5.0, use_resource=True)
            fv = v1.get_variable("fv", initializer=[1.0, 1.0], use_resource=False)
        with tf.device(W + "2"):
            bump_r = rv.assign_add(b)
            bump_f = v1.assign_add(fv, [a[0], a[1]])
        # Resources made on the worker's CPU:0 (a queue, a hash table) used from its CPU:1.
        with tf.device(W + "0"):
            q = tf.queue.FIFOQueue(5, tf.float32, shapes=[[]], shared_name="dc_q")
            table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a", "b"], [1, 2]), -1)
        with tf.device(W + "1"):
            enq = q.enqueue(b)
            deq = q.dequeue() + 1.0
            look = table.lookup(tf.constant(["b", "z", "a"]))
        with v1.Session(target) as sess:
            names = sorted(d.name for d in sess.list_devices())
            out.append(("ok", names))
            out.append(ffcluster.outcome(tf, lambda: sess.run(b).tolist()))
            sess.run(v1.global_variables_initializer())
            out.append(ffcluster.outcome(tf, lambda: float(sess.run(bump_r))))
            out.append(ffcluster.outcome(tf, lambda: sess.run(bump_f).tolist()))
            out.append(ffcluster.outcome(tf, lambda: [float(sess.run(rv)), sess.run(fv).tolist()]))
            sess.run([enq, v1.tables_initializer()])
            out.append(ffcluster.outcome(tf, lambda: [float(sess.run(deq)), sess.run(look).tolist()]))
    g = tf.Graph()
    with g.as_default():
        with tf.device(W + "7"):
            c = tf.constant([1.0, 2.0]) + 1.0
        # Placement errors are worded differently: the class must match.
        with v1.Session(target) as sess:
            out.append(ffcluster.outcome(tf, lambda: sess.run(c).tolist())[0])
        with v1.Session(target, config=v1.ConfigProto(allow_soft_placement=True)) as sess:
            out.append(ffcluster.outcome(tf, lambda: sess.run(c).tolist()))
    g = tf.Graph()
    with g.as_default():
        rng = np.random.RandomState(3)
        xs = rng.randn(32, 4).astype(np.float32)
        ys = (xs @ np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32) + 0.25).astype(np.float32)
        with tf.device(PS + "2"):
            w = v1.get_variable("w", initializer=tf.zeros([4, 1]))
            bias = v1.get_variable("b", initializer=tf.zeros([1]))
            step = v1.train.get_or_create_global_step()
        with tf.device(W + "1"):
            pred = tf.matmul(tf.constant(xs), w) + bias
            loss = tf.reduce_mean(tf.square(pred - tf.constant(ys)))
            train = v1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
        with v1.Session(target) as sess:
            sess.run(v1.global_variables_initializer())
            losses = [float(sess.run([loss, train])[0]) for _ in range(8)]
            out.append(("ok", losses + [int(sess.run(step))]))
    return out


def close(w, g):
    if w[0] != g[0] or len(w) != len(g):
        return False
    if len(w) == 1:
        return True
    if w[0] == "ok":
        try:
            return np.allclose(np.asarray(w[1], dtype=np.float64), np.asarray(g[1], dtype=np.float64), atol=1e-4)
        except (ValueError, TypeError):
            return w[1] == g[1]
    return w[1] == g[1]


def run_mode(mode):
    tf = ffcluster.tf_in_mode(mode)
    with tempfile.TemporaryDirectory() as d:
        cfg = os.path.join(d, "config.pb")
        with open(cfg, "wb") as f:
            f.write(tf.compat.v1.ConfigProto(device_count={"CPU": 3}).SerializeToString())
        want, got = ffcluster.on_both([("ps", 1), ("worker", 1)], lambda t: scenarios(tf, t), config_path=cfg)
    wrap = lambda r: r if isinstance(r, tuple) else (r,)  # noqa: E731
    ffcluster.report(mode, [wrap(w) for w in want], [wrap(g) for g in got], close)


if __name__ == "__main__":
    ffcluster.main(__file__, run_mode)
