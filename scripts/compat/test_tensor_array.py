"""TensorArrays from TensorFlow's Python client on a ferroflow cluster, in TensorFlow 1.x
behaviour (`disable_v2_behavior`: `TensorArrayV3` ops inside Enter/Exit/Switch/Merge loops,
loop gradients through `TensorArrayGradV3` and stacks) and in TensorFlow 2 graph mode
(`disable_eager_execution` only: `While` functions over TensorLists). Each mode runs in its
own process. Every value, error class and training loss equals the same graph run by
TensorFlow in-process: reads, writes, gather/scatter/concat/split, dynamic size, the errors
(write twice, read after clear, index past a fixed size, unwritten element of unknown
shape), `tf.map_fn`, `tf.scan`, a dynamic_rnn-style loop trained 6 steps by gradient
descent, and an array created on the ps and written from the worker."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def values(ps, worker):
    """Fetches with values: name -> tensor."""
    import tensorflow as tf

    out = {}
    with tf.device(worker):
        ta = tf.TensorArray(tf.float32, size=3)
        ta = ta.write(0, [1.0, 2.0]).write(1, [3.0, 4.0]).write(2, [5.0, 6.0])
        out["stack"] = ta.stack()
        ta2 = tf.TensorArray(tf.float32, size=3, clear_after_read=False).unstack([[1.0], [2.0], [3.0]])
        out["gather"] = ta2.gather([2, 0])
        out["read1"] = ta2.read(1)
        out["size"] = ta2.size()
        dyn = tf.TensorArray(tf.int32, size=0, dynamic_size=True)
        for i in range(4):
            dyn = dyn.write(i, tf.constant([i, i * i]))
        out["dyn_stack"] = dyn.stack()
        out["dyn_size"] = dyn.size()
        rag = tf.TensorArray(tf.float32, size=2, infer_shape=False).split([1.0, 2.0, 3.0, 4.0, 5.0], [2, 3])
        out["split_read"] = rag.read(1)
        cat = tf.TensorArray(tf.float32, size=3, infer_shape=False, clear_after_read=False)
        cat = cat.write(0, [1.0]).write(1, [2.0, 3.0]).write(2, [4.0, 5.0, 6.0])
        out["concat"] = cat.concat()
        zeros = tf.TensorArray(tf.float32, size=3, element_shape=[2]).write(1, [7.0, 8.0])
        out["unwritten_zeros"] = zeros.stack()
        out["map_fn"] = tf.map_fn(lambda e: e * e + 1.0, tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
        out["scan"] = tf.scan(lambda a, e: a * 0.5 + e, tf.constant([1.0, 2.0, 3.0, 4.0]), initializer=0.0)
        out["scan_pair"] = tf.scan(lambda a, e: (a[0] + e, a[1] * e), tf.constant([1.0, 2.0, 3.0]),
                                   initializer=(tf.constant(0.0), tf.constant(1.0)))
        x = tf.constant([0.5, -1.0, 2.0])
        y = tf.reduce_sum(tf.map_fn(lambda e: tf.tanh(e) * e, x))
        out["map_fn_grad"] = tf.gradients(y, x)[0]
        s = tf.scan(lambda a, e: a * e, x, initializer=tf.constant(1.5))
        out["scan_grad"] = tf.gradients(tf.reduce_sum(s), x)[0]
    with tf.device(ps):
        # Created on the ps; TensorFlow's client colocates the array with its first write.
        remote = tf.TensorArray(tf.float32, size=2)
    with tf.device(worker):
        remote = remote.write(0, tf.constant(2.5)).write(1, tf.constant(-1.0))
        out["cross_task"] = remote.stack()
    with tf.device(ps):
        # Pinned to the ps: the worker's ops take its handle and run with it, as in TensorFlow.
        pinned = tf.TensorArray(tf.float32, size=2, colocate_with_first_write_call=False)
    with tf.device(worker):
        pinned = pinned.write(0, tf.constant([1.0, 2.0]) * 3.0).write(1, tf.constant([0.5, 0.25]))
        out["pinned_on_ps"] = pinned.stack() + 1.0
    return out


def errors(worker):
    """Fetches that must fail: name -> tensor."""
    import tensorflow as tf

    out = {}
    with tf.device(worker):
        ta = tf.TensorArray(tf.float32, size=2)
        out["write_twice"] = ta.write(0, 1.0).write(0, 2.0).stack()
        t = tf.TensorArray(tf.float32, size=2).write(0, 1.0)
        r0 = t.read(0)
        with tf.control_dependencies([r0]):
            out["read_after_clear"] = t.read(0)
        out["past_size"] = tf.TensorArray(tf.float32, size=2).write(5, 1.0).flow
        out["read_past_size"] = tf.TensorArray(tf.float32, size=2).read(3)
        out["unwritten_unknown_shape"] = tf.TensorArray(tf.float32, size=2).read(1)
        bad = tf.TensorArray(tf.float32, size=2, infer_shape=False).write(0, [1.0]).write(1, [1.0, 2.0])
        out["inconsistent_stack"] = bad.stack()
        out["empty_stack"] = tf.TensorArray(tf.float32, size=0).stack()
        out["split_bad_lengths"] = tf.TensorArray(tf.float32, size=2).split([1.0, 2.0, 3.0], [1, 1]).flow
    return out


def rnn(worker, ps):
    """A dynamic_rnn-style recurrent loop over a TensorArray of inputs; returns loss, train op."""
    import numpy as np
    import tensorflow as tf

    rng = np.random.RandomState(3)
    xs = tf.constant(rng.randn(5, 4, 3).astype(np.float32))  # [time, batch, features]
    target = tf.constant(rng.randn(4, 2).astype(np.float32))
    with tf.device(ps):
        W = tf.compat.v1.get_variable("W", initializer=tf.constant(rng.randn(3, 6).astype(np.float32) * 0.4))
        U = tf.compat.v1.get_variable("U", initializer=tf.constant(rng.randn(6, 6).astype(np.float32) * 0.3))
        V = tf.compat.v1.get_variable("V", initializer=tf.constant(rng.randn(6, 2).astype(np.float32) * 0.5))
    with tf.device(worker):
        inputs = tf.TensorArray(tf.float32, size=5).unstack(xs)
        outputs = tf.TensorArray(tf.float32, size=5)

        def body(t, h, o):
            h = tf.tanh(tf.matmul(inputs.read(t), W) + tf.matmul(h, U))
            return t + 1, h, o.write(t, h)

        _, h, o = tf.while_loop(lambda t, h, o: t < 5, body, [tf.constant(0), tf.zeros([4, 6]), outputs])
        seq = o.stack()
        loss = tf.reduce_mean(tf.square(tf.matmul(h, V) - target)) + 0.1 * tf.reduce_mean(tf.square(seq))
        train = tf.compat.v1.train.GradientDescentOptimizer(0.5).minimize(loss)
    return loss, train


def run_mode(mode, target, ps, worker):
    import numpy as np
    import tensorflow as tf

    res = {}
    g = tf.Graph()
    with g.as_default():
        out = values(ps, worker)
        types = {op.type for op in g.get_operations()}
        with tf.compat.v1.Session(target) as s:
            res["values"] = {k: np.asarray(v).tolist() for k, v in s.run(out).items()}
    res["types"] = sorted(t for t in types if t.startswith(("TensorArray", "TensorList", "Stack")))
    g = tf.Graph()
    with g.as_default():
        errs = errors(worker)
        res["errors"] = {}
        with tf.compat.v1.Session(target) as s:
            for k, v in sorted(errs.items()):
                try:
                    res["errors"][k] = "no error: " + repr(np.asarray(s.run(v)).tolist())
                except tf.errors.OpError as e:
                    res["errors"][k] = type(e).__name__
    g = tf.Graph()
    with g.as_default():
        loss, train = rnn(worker, ps)
        with tf.compat.v1.Session(target) as s:
            s.run(tf.compat.v1.global_variables_initializer())
            res["losses"] = [float(s.run([loss, train])[0]) for _ in range(6)]
    return res


def child(mode):
    import numpy as np
    import tensorflow as tf

    import ffcluster

    ffcluster.tf_in_mode(mode)
    want = run_mode(mode, "", "/cpu:0", "/cpu:0")
    servers, _ = ffcluster.cluster({"ps": 1, "worker": 1})
    got = run_mode(mode, servers["worker"][0].target, "/job:ps/task:0", "/job:worker/task:0")
    if mode == "v1":
        assert {"TensorArrayV3", "TensorArrayGradV3", "TensorArrayScatterV3", "TensorArrayGatherV3"} <= set(got["types"])
    else:
        assert "TensorListReserve" in got["types"], got["types"]
    checks = 0
    for k, v in want["values"].items():
        np.testing.assert_allclose(np.asarray(got["values"][k], dtype=np.float64), np.asarray(v, dtype=np.float64),
                                   rtol=1e-5, atol=1e-6, err_msg=f"{mode}: {k}")
        checks += 1
    for k, v in want["errors"].items():
        # TensorFlow 2's TensorArray (a TensorList) enforces fewer of these rules.
        assert mode == "v2" or not v.startswith("no error"), (mode, k, v)
        assert got["errors"][k] == v, (mode, k, got["errors"][k], v)
        checks += 1
    np.testing.assert_allclose(got["losses"], want["losses"], rtol=1e-4, atol=1e-6, err_msg=f"{mode}: losses")
    assert got["losses"][-1] < got["losses"][0], got["losses"]
    checks += len(want["losses"])
    print(f"  {mode}: {checks} checks equal TensorFlow's ({len(want['values'])} values, {len(want['errors'])} errors "
          f"{sorted(set(want['errors'].values()))}, rnn losses {[round(x, 5) for x in got['losses']]})")
    print("   ", {k: v[:40] for k, v in got["errors"].items()})


if __name__ == "__main__":
    import ffcluster

    ffcluster.main(__file__, child, "tensor array: ok")
