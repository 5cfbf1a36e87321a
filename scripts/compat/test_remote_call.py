"""`RemoteCall` (a function run on the task a string tensor names) from TensorFlow's client:
the same scenarios on a TensorFlow 1 ps + 1 worker cluster and on a ferroflow one, in TF 1.x
behaviour and in TF 2 graph mode, must give the same values and error classes:

- a `tf.function` and a TF 1.x `Defun` called on the ps from the worker, with several
  arguments and results of several types, many times (registered once, run per call);
- a function that updates a variable of the target task (the ps's variable changes);
- RemoteCalls from inside a function body (a `tf.function` and a `Defun` run on the
  worker whose bodies call functions on the ps);
- a call whose target is the caller's own task;
- the target chosen at run time by a fed string;
- a function added after the session started (ExtendSession with a function library),
  called as an op and by RemoteCall, and TF 1.x `Defun`s added late and called by name (a
  node whose op type is the function, at the top level and inside another function);
- a function that fails on the target (CheckNumerics of a NaN), and a target task that is
  not in the cluster."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

PS = "/job:ps/replica:0/task:0/device:CPU:0"
WORKER = "/job:worker/replica:0/task:0/device:CPU:0"


def scenarios(tf, target):
    from tensorflow.python.framework import function
    from tensorflow.python.ops import functional_ops
    v1 = tf.compat.v1
    out = []
    g = tf.Graph()
    with g.as_default():
        @tf.function(input_signature=[tf.TensorSpec([], tf.float32), tf.TensorSpec([3], tf.int32)])
        def two(a, b):
            return a * 10.0 + 1.0, b * 2 - 1

        @function.Defun(tf.float32)
        def plus(a):
            return a + 100.0

        @tf.function(input_signature=[tf.TensorSpec([2], tf.float32)])
        def checked(x):
            return tf.debugging.check_numerics(x, "bad value") * 2.0

        @tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
        def bump(a):
            h = tf.raw_ops.VarHandleOp(dtype=tf.float32, shape=[], shared_name="rc_counter")
            with tf.control_dependencies([tf.raw_ops.AssignAddVariableOp(resource=h, value=a)]):
                return tf.raw_ops.ReadVariableOp(resource=h, dtype=tf.float32)

        # The counter the function bumps lives on the ps: only a call run there changes it.
        with tf.device("/job:ps/task:0"):
            counter = tf.raw_ops.VarHandleOp(dtype=tf.float32, shape=[], shared_name="rc_counter")
            reset = tf.raw_ops.AssignVariableOp(resource=counter, value=tf.constant(0.0))
            count = tf.raw_ops.ReadVariableOp(resource=counter, dtype=tf.float32)
        with tf.device("/job:worker/task:0"):
            x = v1.placeholder(tf.float32, [])
            r_bump = functional_ops.remote_call(args=[x], Tout=[tf.float32], f=bump.get_concrete_function(),
                                                target=PS)
            where = v1.placeholder(tf.string, [])
            ints = tf.constant([1, 2, 3])
            r_two = functional_ops.remote_call(args=[x, ints], Tout=[tf.float32, tf.int32],
                                               f=two.get_concrete_function(), target=PS)
            r_plus = functional_ops.remote_call(args=[x], Tout=[tf.float32], f=plus, target=PS)
            r_self = functional_ops.remote_call(args=[x], Tout=[tf.float32], f=plus, target=WORKER)
            r_fed = functional_ops.remote_call(args=[x], Tout=[tf.float32], f=plus, target=where)
            r_bad = functional_ops.remote_call(args=[tf.stack([x, x / 0.0 * 0.0])], Tout=[tf.float32],
                                               f=checked.get_concrete_function(), target=PS)
            r_nowhere = functional_ops.remote_call(args=[x], Tout=[tf.float32], f=plus,
                                                   target="/job:ps/replica:0/task:7/device:CPU:0")

        # RemoteCalls from inside function bodies run on the worker: a tf.function whose body
        # bumps the ps's counter, and a Defun whose body calls the ps twice.
        @tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
        def bump_on_ps(a):
            r = functional_ops.remote_call(args=[a], Tout=[tf.float32], f=bump.get_concrete_function(), target=PS)
            return r[0] * 2.0

        @function.Defun(tf.float32)
        def plus_twice_on_ps(a):
            once = functional_ops.remote_call(args=[a], Tout=[tf.float32], f=plus, target=PS)[0]
            return functional_ops.remote_call(args=[once], Tout=[tf.float32], f=plus, target=PS)[0] - a

        with tf.device("/job:worker/task:0"):
            r_nested = bump_on_ps(x)
            r_nested_defun = plus_twice_on_ps(x)
        with v1.Session(target) as sess:
            for i in range(5):
                a, b = sess.run(r_two, {x: float(i)})
                out.append(("ok", [float(a), b.tolist()]))
            out.append(ffcluster.outcome(tf, lambda: [float(v) for v in sess.run(r_plus, {x: 2.5})]))
            sess.run(reset)
            out.append(("ok", [float(sess.run(r_bump, {x: float(i)})[0]) for i in (1, 2, 3)] + [float(sess.run(count))]))
            out.append(ffcluster.outcome(tf, lambda: [float(v) for v in sess.run(r_self, {x: -1.0})]))
            for w in (PS, WORKER):
                out.append(ffcluster.outcome(tf, lambda: [float(v) for v in sess.run(r_fed, {x: 4.0, where: w})]))
            out.append(ffcluster.outcome(tf, lambda: sess.run(r_bad, {x: 1.0})[0].tolist())[0])
            out.append(ffcluster.outcome(tf, lambda: sess.run(r_nowhere, {x: 1.0})[0].tolist())[0])
            sess.run(reset)
            out.append(("ok", [float(sess.run(r_nested, {x: 1.5})) for _ in range(2)] + [float(sess.run(count))]))
            out.append(ffcluster.outcome(tf, lambda: [float(sess.run(r_nested_defun, {x: 7.0}))]))

            # A function added to the graph after the session started (ExtendSession with a
            # function library), called as an op on the ps and by RemoteCall.
            @tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
            def late(a):
                return a * a - 3.0

            with tf.device("/job:ps/task:0"):
                r_late = late(x)
            with tf.device("/job:worker/task:0"):
                r_late_remote = functional_ops.remote_call(args=[x], Tout=[tf.float32],
                                                           f=late.get_concrete_function(), target=PS)
            out.append(ffcluster.outcome(tf, lambda: [float(sess.run(r_late, {x: 4.0}))]))
            out.append(ffcluster.outcome(tf, lambda: [float(v) for v in sess.run(r_late_remote, {x: 5.0})]))

            # TF 1.x `Defun`s added late, one calling the other: each call is a node whose op
            # type is the function's name (in the graph and inside the outer function's body).
            @function.Defun(tf.float32)
            def late_sq(a):
                return a * a - 3.0

            @function.Defun(tf.float32)
            def late_outer(a):
                return late_sq(a) + late_sq(a * 2.0)

            with tf.device("/job:ps/task:0"):
                r_defun = late_outer(x)
            with tf.device("/job:worker/task:0"):
                r_defun_worker = late_sq(x) * 2.0
            out.append(ffcluster.outcome(tf, lambda: [float(sess.run(r_defun, {x: 3.0}))]))
            out.append(ffcluster.outcome(tf, lambda: [float(sess.run(r_defun_worker, {x: -1.5}))]))
    return out


def close(w, g):
    if not isinstance(w, tuple) or w[0] != "ok":
        return w == g
    return g[0] == "ok" and np.allclose(np.hstack([np.ravel(v) for v in w[1]]).astype(float),
                                        np.hstack([np.ravel(v) for v in g[1]]).astype(float))


def run_mode(mode):
    tf = ffcluster.tf_in_mode(mode)
    want, got = ffcluster.on_both([("ps", 1), ("worker", 1)], lambda t: scenarios(tf, t))
    ffcluster.report(mode, want, got, close)


if __name__ == "__main__":
    ffcluster.main(__file__, run_mode)
