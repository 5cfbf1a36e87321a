"""TensorFlow's client runs `tf.while_loop` graphs (TensorFlow 2 control flow: `While`
nodes whose cond and body are library functions) on a ferroflow ps + worker: a loop on the
worker that reads a variable living on the ps, and a loop on the ps that changes that
variable. The results equal the same graph run by TensorFlow in-process."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

tf.compat.v1.disable_eager_execution()


def build(ps, worker):
    with tf.device(ps):
        w = tf.compat.v1.get_variable("w", initializer=np.array([[0.9, 0.1], [-0.2, 0.8]], np.float32),
                                      use_resource=True)
        steps = tf.compat.v1.get_variable("steps", initializer=0, use_resource=True)
    n = tf.compat.v1.placeholder(tf.int32, [], name="n")
    with tf.device(worker):
        x0 = tf.constant([[1.0, 2.0]])
        # x <- tanh(x @ w) n times, w read from the ps inside the body.
        _, x = tf.while_loop(lambda i, x: i < n, lambda i, x: (i + 1, tf.tanh(tf.matmul(x, w.read_value()))),
                             [0, x0])
    with tf.device(ps):
        def bump(i):
            with tf.control_dependencies([steps.assign_add(i)]):
                return i + 1
        counted = tf.while_loop(lambda i: i < n, bump, [0])[0]
    init = tf.compat.v1.global_variables_initializer()
    return n, x, counted, steps.read_value(), init


def run(target, ps, worker):
    g = tf.Graph()
    with g.as_default():
        n, x, counted, steps, init = build(ps, worker)
        assert {"While", "StatelessWhile"} & {op.type for op in g.get_operations()}
        with tf.compat.v1.Session(target) as sess:
            sess.run(init)
            out = [sess.run([x, counted], {n: k}) for k in (0, 3, 25)]
            return out, sess.run(steps)


want, want_steps = run("", "/cpu:0", "/cpu:0")
servers, _ = ffcluster.cluster({"ps": 1, "worker": 1})
try:
    got, got_steps = run(servers["worker"][0].target, "/job:ps/task:0", "/job:worker/task:0")
    for (gx, gc), (wx, wc) in zip(got, want):
        np.testing.assert_allclose(gx, wx, rtol=1e-5, atol=1e-6)
        assert gc == wc, (gc, wc)
    assert got_steps == want_steps == 0 + 3 + 300, (got_steps, want_steps)  # sum(range(k)) over k in (0, 3, 25)
    print("  x after 25 iterations:", got[2][0].tolist(), "; steps on the ps:", got_steps)
    print("test_while: OK")
finally:
    for ss in servers.values():
        for s in ss:
            s.kill()
