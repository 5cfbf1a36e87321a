"""TensorFlow 1.x programs on a ferroflow cluster: with TensorFlow 2 behaviour off
(`disable_v2_behavior`: ref variables, `tf.cond`/`tf.while_loop` as Switch/Merge/Enter/
Exit/NextIteration/LoopCond), TensorFlow's Python client runs conditionals and loops whose
variables live on a ps and whose compute runs on a worker, reads a ref variable after an
in-place update (the read aliases the variable, as in TensorFlow), and trains with
`tf.compat.v1.train.Supervisor` (whose readiness check is itself a v1 `tf.cond`). Every
value equals the same program run by TensorFlow in-process; fetching the untaken branch
fails with TensorFlow's error code."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

tf.compat.v1.disable_v2_behavior()


def build(ps, worker):
    with tf.device(ps):
        v = tf.compat.v1.Variable(1.5, name="v")
        c = tf.compat.v1.Variable(0.0, name="c")
        g = tf.compat.v1.Variable(0, name="g")
    n = tf.compat.v1.placeholder(tf.int32, [], name="n")
    p = tf.compat.v1.placeholder(tf.bool, [], name="p")
    x = tf.compat.v1.placeholder(tf.float32, [3], name="x")
    with tf.device(worker):
        out = {
            "cond_a": tf.cond(p, lambda: x * 2.0, lambda: x - 1.0),
            "cond_nested": tf.cond(p, lambda: tf.cond(n > 2, lambda: n * 10, lambda: n + 100), lambda: -n),
            "cond_ref": tf.cond(p, lambda: v + 1.0, lambda: v * 3.0),
            "total": tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + i), [0, 0])[1],
            "powv": tf.while_loop(lambda i, q: i < n, lambda i, q: (i + 1, q * v), [0, 1.0])[1],
            "serial": tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s * 2.0 + 1.0), [0, 0.0],
                                    parallel_iterations=1)[1],
            "loop_in_cond": tf.cond(p, lambda: tf.while_loop(lambda i: i < n, lambda i: i + 2, [0])[0],
                                    lambda: tf.constant(-5)),
        }

        def nested_body(i, acc):
            return i + 1, acc + tf.while_loop(lambda j, s: j < i, lambda j, s: (j + 1, s + j), [0, 0])[1]
        out["nested"] = tf.while_loop(lambda i, acc: i < n, nested_body, [0, 0])[1]
    with tf.device(ps):
        # A conditional update on the ps, chosen by the worker's predicate.
        out["cond_assign"] = tf.cond(p, lambda: tf.compat.v1.assign_add(c, 1.0), lambda: tf.identity(c))
        with tf.control_dependencies([tf.compat.v1.assign_add(g, 1)]):
            filled = tf.fill([2], g)
    with tf.device(worker):
        untaken = tf.raw_ops.Switch(data=x, pred=p)[1]
    return n, p, x, out, filled, untaken, tf.compat.v1.global_variables_initializer()


def run(target, ps, worker):
    graph = tf.Graph()
    with graph.as_default():
        n, p, x, out, filled, untaken, init = build(ps, worker)
        types = {op.type for op in graph.get_operations()}
        assert {"Switch", "RefSwitch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond"} <= types, types
        results = []
        with tf.compat.v1.Session(target, graph=graph) as sess:
            sess.run(init)
            for nv, pv, xv in [(0, True, [0.5, -1.0, 2.0]), (5, False, [1.0, 0.0, -0.5]), (12, True, [2.0, 1.0, 0.0])]:
                got = sess.run(out, {n: nv, p: pv, x: xv})
                results.append({k: np.asarray(val).tolist() for k, val in sorted(got.items())})
            results.append([sess.run(filled).tolist() for _ in range(3)])
            try:
                sess.run(untaken, {p: False, x: [1.0, 2.0, 3.0]})
                results.append("no error")
            except (tf.errors.InvalidArgumentError, tf.errors.InternalError) as e:
                results.append("error")
                print("  untaken branch fetch:", type(e).__name__, str(e).splitlines()[-1][:120])
        return results


def supervised(target, ps, worker, logdir):
    """A TF 1.x trainer under `Supervisor`: linear regression on fixed data, 8 steps."""
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.set_random_seed(1)
        with tf.device(ps):
            w = tf.compat.v1.Variable([[0.5], [-0.25]], name="w")
            b = tf.compat.v1.Variable(0.1, name="b")
            step = tf.compat.v1.train.get_or_create_global_step()
        with tf.device(worker):
            xs = tf.constant(np.array([[1.0, 2.0], [0.5, -1.0], [2.0, 0.0], [-1.0, 1.5]], np.float32))
            ys = tf.constant(np.array([[1.0], [0.0], [2.0], [-0.5]], np.float32))
            loss = tf.reduce_mean(tf.square(tf.matmul(xs, w) + b - ys))
            train = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
        sv = tf.compat.v1.train.Supervisor(is_chief=True, logdir=logdir, init_op=tf.compat.v1.global_variables_initializer(),
                                           summary_op=None, saver=None, global_step=step, recovery_wait_secs=1)
        losses = []
        with sv.managed_session(target) as sess:
            for _ in range(8):
                losses.append(float(sess.run([loss, train])[0]))
            final_step = int(sess.run(step))
        sv.stop()
        return losses, final_step


want = run("", "/cpu:0", "/cpu:0")
want_losses, want_step = supervised("", "/cpu:0", "/cpu:0", None)
servers, _ = ffcluster.cluster({"ps": 1, "worker": 1})
target = servers["worker"][0].target
got = run(target, "/job:ps/task:0", "/job:worker/task:0")
for i, (a, b) in enumerate(zip(got[:3], want[:3])):
    for k in b:
        np.testing.assert_allclose(a[k], b[k], rtol=1e-5, atol=1e-6, err_msg=f"run {i}: {k}")
assert got[3] == want[3] == [[1, 1], [2, 2], [3, 3]], (got[3], want[3])
assert got[4] == want[4] == "error", (got[4], want[4])
print("  conditionals, loops and ref aliasing equal TensorFlow's:", got[2]["nested"], got[2]["powv"], got[3])
tf.compat.v1.Session.reset(target)
losses, final_step = supervised(target, "/job:ps/task:0", "/job:worker/task:0", None)
np.testing.assert_allclose(losses, want_losses, rtol=1e-5, atol=1e-6)
assert final_step == want_step == 8, (final_step, want_step)
print("  Supervisor trained 8 steps with TensorFlow's losses:", [round(x, 5) for x in losses])
print("v1 control flow: ok")
