"""While loops whose body spans tasks, from TensorFlow's Python client, on a cluster of two
ps tasks and a worker: TensorFlow's and ferroflow's servers must give the same results.

In TF 1.x behaviour (`disable_v2_behavior`) `tf.while_loop` builds an Enter/Merge/Switch/
LoopCond/NextIteration/Exit frame, and ops of the body pinned to another task cross tasks
inside the frame: the partitioner adds TensorFlow's control loops on the receiving tasks,
and tensors sent inside the loop carry the frame instance and iteration in their
rendezvous keys. In TF 2 graph mode (`disable_eager_execution` only) the same programs
build functional `While` ops. Scenarios: a body alternating between ps and worker, a loop
predicate computed on the ps, a resource variable read inside the loop (placed with the
variable, as TensorFlow does), a ref variable updated in place in every iteration, nested
loops whose inner body runs on the ps, a body spanning three tasks, a `tf.cond` inside a
spanning body, the gradient of a spanning loop (its stacks on both tasks), an error raised
in the body on the ps at the third iteration (TensorFlow's error class; the session still
works afterwards), and a recurrent model with its weights on the ps trained for a few steps
(losses equal to 1e-4)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

JOBS = [("ps", 2), ("worker", 1)]
PS0, PS1, W = "/job:ps/task:0", "/job:ps/task:1", "/job:worker/task:0"
NS = (0, 1, 4)


def nested(tf, n, away):
    """A loop over i < n whose body runs a loop over j <= i summing j * i on device `away`."""
    def outer(i, acc):
        def inner(j, s):
            with tf.device(away):
                t = s + tf.cast(j * i, tf.float32)
            return j + 1, t
        return i + 1, acc + tf.while_loop(lambda j, s: j < i + 1, inner, [0, 0.0])[1]
    return tf.while_loop(lambda i, acc: i < n, outer, [0, 0.0])[1]


def build(tf):
    with tf.device(PS0):
        v = tf.compat.v1.Variable(1.5, name="v")
        c = tf.compat.v1.Variable(0.0, name="c")
        r = tf.compat.v1.get_variable("r", initializer=0.5, use_resource=True)
    n = tf.compat.v1.placeholder(tf.int32, [], name="n")
    out = {}
    with tf.device(W):
        def span(i, s):
            with tf.device(PS0):
                t = s * 2.0 + v
            return i + 1, t + 1.0
        out["span"] = tf.while_loop(lambda i, s: i < n, span, [0, 0.0])[1]

        def pred_on_ps(i, s):
            with tf.device(PS0):
                j = i + 1
            return j, s + 1.0
        out["pred_input_on_ps"] = tf.while_loop(lambda i, s: i < n, pred_on_ps, [0, 0.0], parallel_iterations=3)[1]
        out["resource_read"] = tf.while_loop(
            lambda i, s: i < n, lambda i, s: (i + 1, s + r.read_value() * tf.cast(i, tf.float32)), [0, 0.0])[1]

        def assign(i, s):
            a = tf.compat.v1.assign_add(c, 1.0)
            return i + 1, s + a
        out["ref_assign"] = tf.while_loop(lambda i, s: i < n, assign, [0, 0.0], parallel_iterations=1)[1]

        out["nested"] = nested(tf, n, PS0)

        def three(i, s):
            with tf.device(PS0):
                a = s + 1.0
            with tf.device(PS1):
                b = a * 3.0
            return i + 1, b - s
        out["three_tasks"] = tf.while_loop(lambda i, s: i < n, three, [0, 0.5])[1]

        def with_cond(i, s):
            with tf.device(PS1):
                t = tf.cond(tf.equal(i % 2, 0), lambda: s + 10.0, lambda: s * 2.0)
            return i + 1, t
        out["cond_in_body"] = tf.while_loop(lambda i, s: i < n, with_cond, [0, 1.0])[1]

        def failing(i, s):
            with tf.device(PS0):
                t = tf.debugging.check_numerics(tf.math.log(2.0 - tf.cast(i, tf.float32)), "log") + s
            return i + 1, t
        out["error_in_body"] = tf.while_loop(lambda i, s: i < n, failing, [0, 0.0])[1]
    x = tf.constant(2.0)

    def grad_body(i, s):
        with tf.device(PS0):
            t = s * x
        return i + 1, t
    out["gradient"] = tf.gradients(tf.while_loop(lambda i, s: i < n, grad_body, [0, 1.0])[1], x)[0]
    return n, out


def model(tf):
    """A recurrent model over 5 steps: h = tanh(x_t W + h U), weights on the ps, the loop
    on the worker; the loss is trained with gradient descent."""
    rng = __import__("numpy").random.RandomState(7)
    xs = rng.normal(size=(5, 4, 3)).astype("float32")
    ys = rng.normal(size=(4, 2)).astype("float32")
    with tf.device(PS0):
        w = tf.compat.v1.get_variable("w", initializer=rng.normal(size=(3, 2)).astype("float32") * 0.5,
                                      use_resource=True)
    with tf.device(PS1):
        u = tf.compat.v1.get_variable("u", initializer=rng.normal(size=(2, 2)).astype("float32") * 0.5,
                                      use_resource=True)
    with tf.device(W):
        x = tf.constant(xs)

        def step(t, h):
            return t + 1, tf.tanh(tf.matmul(x[t], w.read_value()) + tf.matmul(h, u.read_value()))
        h = tf.while_loop(lambda t, h: t < 5, step, [0, tf.zeros([4, 2])])[1]
        loss = tf.reduce_mean(tf.square(h - ys))
        train = tf.compat.v1.train.GradientDescentOptimizer(0.5).minimize(loss)
    return loss, train


def scenarios(target):
    import tensorflow as tf
    res = {}
    g = tf.Graph()
    with g.as_default():
        n, out = build(tf)
        init = tf.compat.v1.global_variables_initializer()
        with tf.compat.v1.Session(target, config=tf.compat.v1.ConfigProto(operation_timeout_in_ms=60000)) as s:
            s.run(init)
            for k, o in out.items():
                vals = []
                for m in NS:
                    try:
                        vals.append(float(s.run(o, {n: m})))
                    except tf.errors.OpError as e:
                        vals.append(ffcluster.error_result(e, message=False))
                res[k] = vals
            res["after_error"] = float(s.run(out["span"], {n: 2}))
    g = tf.Graph()
    with g.as_default():
        loss, train = model(tf)
        init = tf.compat.v1.global_variables_initializer()
        with tf.compat.v1.Session(target) as s:
            s.run(init)
            res["training"] = [float(s.run([loss, train])[0]) for _ in range(6)]
    return res


def mixed_loops(target, home, away):
    """A loop on `home` whose body computes on `away`, and a nested loop whose inner body
    does; run for n in NS."""
    import tensorflow as tf
    g = tf.Graph()
    with g.as_default():
        n = tf.compat.v1.placeholder(tf.int32, [])
        with tf.device(home):
            def span(i, s):
                with tf.device(away):
                    t = s * 2.0 + 1.5
                return i + 1, t + 1.0

            outs = [tf.while_loop(lambda i, s: i < n, span, [0, 0.0])[1], nested(tf, n, away)]
        with tf.compat.v1.Session(target, config=tf.compat.v1.ConfigProto(operation_timeout_in_ms=60000)) as s:
            return [[float(s.run(o, {n: m})) for m in NS] for o in outs]


def mixed(mode):
    """A TensorFlow ps and a ferroflow worker in one cluster: loops spanning both, run by
    ferroflow's master and by TensorFlow's (the frame ids in the rendezvous keys must be
    TensorFlow's for the tensors to meet)."""
    want = mixed_loops("", "/cpu:0", "/cpu:0")
    with ffcluster.mixed_cluster("ps") as (spec, worker):
        got = {
            "ferroflow master, TensorFlow ps": mixed_loops(worker.target, W, PS0),
            "TensorFlow master, ferroflow worker": mixed_loops(f"grpc://{spec['ps'][0]}", PS0, W),
        }
    ffcluster.compare({k: want for k in got}, got, f"{mode} mixed")


def run_mode(mode):
    ffcluster.tf_in_mode(mode)
    mixed(mode)
    want, got = ffcluster.on_both(JOBS, scenarios)
    assert want["error_in_body"][2] == ("InvalidArgumentError", None), want["error_in_body"]
    assert want["training"][-1] < want["training"][0], want["training"]
    n = ffcluster.compare(want, got, mode)
    print(f"  {mode}: {n} loop scenarios equal TensorFlow's")


if __name__ == "__main__":
    ffcluster.main(__file__, run_mode)
