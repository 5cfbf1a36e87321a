"""TensorFlow's client runs `tf.while_loop` graphs (TensorFlow 2 control flow: `While`
nodes whose cond and body are library functions) on a ferroflow ps + worker: a loop on the
worker that reads a variable living on the ps, and a loop on the ps that changes that
variable; then a model trained through a loop (the loop's gradient, which TensorFlow's
client builds with TensorLists). The results equal the same graphs run by TensorFlow
in-process."""

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


def train(target, ps, worker):
    """Training through a loop: TensorFlow's client differentiates the `While` (its gradient
    is a second `While` that pops the forward loop's intermediate values from TensorLists,
    `EmptyTensorList` / `TensorListPushBack` / `TensorListPopBack`) and the optimizer
    updates the weight on the ps, read inside the loop body."""
    g = tf.Graph()
    with g.as_default():
        with tf.device(ps):
            w = tf.compat.v1.get_variable("w", initializer=np.array([[0.9, 0.1], [-0.2, 0.8]], np.float32),
                                          use_resource=True)
        n = tf.compat.v1.placeholder(tf.int32, [], name="n")
        target_y = tf.constant([[0.3, -0.4]])
        with tf.device(worker):
            x0 = tf.constant([[1.0, 2.0]])
            _, x = tf.while_loop(lambda i, x: i < n, lambda i, x: (i + 1, tf.tanh(tf.matmul(x, w.read_value()))),
                                 [0, x0])
            loss = tf.reduce_sum(tf.square(x - target_y))
            step = tf.compat.v1.train.GradientDescentOptimizer(0.5).minimize(loss)
        ops = {op.type for op in g.get_operations()}
        for f in g.as_graph_def().library.function:
            ops |= {node.op for node in f.node_def}
        assert {"TensorListPushBack", "TensorListPopBack"} <= ops, sorted(ops)
        with tf.compat.v1.Session(target) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            losses = [sess.run([loss, step], {n: k})[0] for k in (3, 3, 5, 1, 4, 4)]
            return losses, sess.run(w.read_value())


def train_tensor_array(target):
    """An RNN-like loop over a `tf.TensorArray` of inputs writing its states to another
    (`TensorListReserve`, `FromTensor`, `SetItem`, `GetItem`, `Stack`; the gradient also sums
    lists with `AddN` and takes their `ZerosLike`), trained by gradient descent."""
    g = tf.Graph()
    with g.as_default():
        w = tf.compat.v1.get_variable("w", initializer=np.array([[0.5, -0.3], [0.2, 0.7]], np.float32),
                                      use_resource=True)
        xs = tf.constant(np.arange(12, dtype=np.float32).reshape(6, 1, 2) / 10.0)
        ta_in = tf.TensorArray(tf.float32, size=6).unstack(xs)

        def body(i, h, ta):
            h = tf.tanh(tf.matmul(h, w) + ta_in.read(i))
            return i + 1, h, ta.write(i, h)

        _, _, ta = tf.while_loop(lambda i, h, ta: i < 6, body, [0, tf.zeros([1, 2]), tf.TensorArray(tf.float32, size=6)])
        loss = tf.reduce_sum(tf.square(ta.stack()))
        step = tf.compat.v1.train.GradientDescentOptimizer(0.3).minimize(loss)
        with tf.compat.v1.Session(target) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            return [sess.run([loss, step])[0] for _ in range(5)]


want, want_steps = run("", "/cpu:0", "/cpu:0")
want_ta = train_tensor_array("")
want_losses, want_w = train("", "/cpu:0", "/cpu:0")
servers, _ = ffcluster.cluster({"ps": 1, "worker": 1})
try:
    got, got_steps = run(servers["worker"][0].target, "/job:ps/task:0", "/job:worker/task:0")
    for (gx, gc), (wx, wc) in zip(got, want):
        np.testing.assert_allclose(gx, wx, rtol=1e-5, atol=1e-6)
        assert gc == wc, (gc, wc)
    assert got_steps == want_steps == 0 + 3 + 300, (got_steps, want_steps)  # sum(range(k)) over k in (0, 3, 25)
    print("  x after 25 iterations:", got[2][0].tolist(), "; steps on the ps:", got_steps)
    tf.compat.v1.Session.reset(servers["worker"][0].target)
    losses, w = train(servers["worker"][0].target, "/job:ps/task:0", "/job:worker/task:0")
    np.testing.assert_allclose(losses, want_losses, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w, want_w, rtol=1e-5, atol=1e-6)
    assert losses[-1] < losses[0], losses
    tf.compat.v1.Session.reset(servers["worker"][0].target)
    ta_losses = train_tensor_array(servers["worker"][0].target)
    np.testing.assert_allclose(ta_losses, want_ta, rtol=1e-5, atol=1e-6)
    assert ta_losses[-1] < ta_losses[0], ta_losses
    print("  trained through the loop: losses", [round(float(v), 4) for v in losses], "equal TensorFlow's")
    print("  trained through TensorArrays: losses", [round(float(v), 4) for v in ta_losses], "equal TensorFlow's")
    print("test_while: OK")
finally:
    for ss in servers.values():
        for s in ss:
            s.kill()
