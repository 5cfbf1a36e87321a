"""Callables (MasterService MakeCallable / RunCallable / ReleaseCallable) from TensorFlow's
client: the same scenarios run on a TensorFlow cluster and on a ferroflow cluster (1 ps + 1
worker, the graph split over both) and must give the same values and the same errors.

- `Session._make_callable_from_options` with feeds, fetches and a target across tasks, run
  several times (a variable on the ps is updated by each run);
- a tensor connection (a computed tensor read where a placeholder was);
- run options on a callable (a full trace);
- errors: a fetch naming no node (at MakeCallable), a wrong number of feeds (at run);
- tf_keras (Keras 2) in graph mode with its session on the cluster, which runs every step
  as a callable: `fit`, `evaluate` and `predict` of a model with batch normalization
  (update ops as the callable's targets), variables on the ps by `replica_device_setter`."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# tf.compat.v1.keras is tf_keras (Keras 2), whose backend has set_session.
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
import tensorflow as tf  # noqa: E402
import tf_keras  # noqa: E402
from tensorflow.core.protobuf import config_pb2  # noqa: E402

tf.compat.v1.disable_eager_execution()

rng = np.random.RandomState(3)
X = rng.randn(48, 5).astype(np.float32)
Y = (X[:, :1] * 0.7 - np.tanh(X[:, 1:2] * X[:, 2:3])).astype(np.float32)


def outcome(f):
    return ffcluster.outcome(tf, f)


def arrays(xs):
    return [np.asarray(x).tolist() for x in xs]


def low_level(target, out):
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:worker/task:0"):
            a = tf.compat.v1.placeholder(tf.float32, [], name="a")
            b = tf.compat.v1.placeholder(tf.float32, [2], name="b")
            r1 = tf.add(a, b, name="r1")
            src = tf.multiply(tf.constant(5.0), 2.0, name="src")
            p = tf.compat.v1.placeholder(tf.float32, [], name="p")
            viap = tf.add(p, 1.0, name="viap")
        with tf.device("/job:ps/task:0"):
            v = tf.compat.v1.get_variable("v", initializer=tf.constant([1.0, 2.0]))
            bump = v.assign_add(r1, name="bump")
            r2 = tf.reduce_sum(r1 * r1, name="r2")
            vread = tf.identity(v, name="vread")
        with tf.compat.v1.Session(target) as sess:
            sess.run(v.initializer)
            opts = config_pb2.CallableOptions(feed=[a.name, b.name], fetch=[r1.name, r2.name], target=[bump.op.name])
            fn = sess._make_callable_from_options(opts)
            for i in range(3):
                out[f"run {i}"] = outcome(lambda: arrays(fn(np.float32(i), np.array([1.0, -1.0], np.float32))))
            out["variable after the runs"] = outcome(lambda: sess.run(v).tolist())
            # Fetch only, no feeds; and the same signature made twice.
            only = sess._make_callable_from_options(config_pb2.CallableOptions(fetch=[vread.name]))
            out["fetch only"] = outcome(lambda: arrays(only()))
            # A tensor connection: `p` reads `src` (10.0), so viap = 11; fetching `p` too is
            # TensorFlow's error (a connection's destination counts as fed).
            conn = config_pb2.CallableOptions(fetch=[viap.name, src.name])
            c = conn.tensor_connection.add()
            c.from_tensor, c.to_tensor = src.name, p.name
            out["tensor connection"] = outcome(lambda: arrays(sess._make_callable_from_options(conn)()))
            conn.fetch.append(p.name)
            out["fetching a connected tensor"] = outcome(lambda: sess._make_callable_from_options(conn))
            fed = config_pb2.CallableOptions(feed=[a.name], fetch=[a.name])
            out["fetching a fed tensor"] = outcome(lambda: sess._make_callable_from_options(fed))
            # Run options on the callable (TensorFlow's client returns no step stats from a
            # callable on a cluster: the trace is asked for, the result must still agree).
            traced = config_pb2.CallableOptions(fetch=[r2.name], feed=[a.name, b.name])
            traced.run_options.trace_level = config_pb2.RunOptions.FULL_TRACE
            tfn = sess._make_callable_from_options(traced)
            md = config_pb2.RunMetadata()
            got = tfn(np.float32(1), np.array([0.5, 0.5], np.float32), run_metadata=md)
            out["traced"] = arrays(got)
            # Errors.
            out["fetch naming no node"] = outcome(
                lambda: sess._make_callable_from_options(config_pb2.CallableOptions(fetch=["nope:0"])))
            # TensorFlow's message for this one is a banner; the class must agree.
            out["too few feeds"] = (outcome(lambda: arrays(fn(np.float32(1))))[0], None)


def keras_model(target, out):
    tf_keras.backend.clear_session()
    g = tf.Graph()
    with g.as_default():
        with tf.compat.v1.device(tf.compat.v1.train.replica_device_setter(ps_tasks=1, worker_device="/job:worker/task:0")):
            model = tf_keras.Sequential([
                tf_keras.layers.Dense(8, activation="relu", input_shape=(5,)),
                tf_keras.layers.BatchNormalization(),
                tf_keras.layers.Dense(1),
            ])
            model.compile(optimizer=tf_keras.optimizers.legacy.Adam(0.01), loss="mse", metrics=["mae"])
        sess = tf.compat.v1.Session(target)
        tf.compat.v1.keras.backend.set_session(sess)
        w = np.random.RandomState(5)
        model.set_weights([w.uniform(-0.5, 0.5, x.shape).astype(np.float32) if x.ndim > 1 else
                           np.ones(x.shape, np.float32) * (0.1 if i % 2 else 1.0)
                           for i, x in enumerate(model.get_weights())])
        hist = model.fit(X, Y, batch_size=12, epochs=3, shuffle=False, verbose=0)
        out["keras fit loss"] = [float(x) for x in hist.history["loss"]]
        out["keras fit mae"] = [float(x) for x in hist.history["mae"]]
        out["keras evaluate"] = [float(x) for x in model.evaluate(X, Y, batch_size=16, verbose=0)]
        out["keras predict"] = model.predict(X[:7], batch_size=4, verbose=0).ravel().tolist()
        # BatchNormalization's moving statistics were updated by fit's update ops.
        bn = model.layers[1]
        out["keras moving mean"] = tf_keras.backend.get_value(bn.moving_mean).tolist()
        sess.close()
    tf_keras.backend.clear_session()


def scenarios(target):
    out = {}
    low_level(target, out)
    keras_model(target, out)
    return out


want, got = ffcluster.on_both([("ps", 1), ("worker", 1)], scenarios)
n = ffcluster.compare(want, got, "callables")
print(f"test_callables: OK ({n} scenarios equal TensorFlow's)")
