"""tf_keras's legacy optimizers whose graph-mode updates are ops of their own
(`ResourceApplyKerasMomentum`, `ResourceSparseApplyKerasMomentum`,
`ResourceApplyAdamWithAmsgrad`), run by `Model.fit` with the Keras session on a cluster
(1 ps holding the variables by `replica_device_setter` + 1 worker): the same models on a
TensorFlow cluster and on a ferroflow cluster must give the same losses and weights.

- two Dense layers, `SGD(0.1, momentum=0.9, nesterov=True)`, mean squared error;
- the same with `Adam(0.05, amsgrad=True)`;
- an Embedding layer (a sparse gradient: the sparse momentum op), `SGD(0.1, momentum=0.9)`,
  sparse categorical cross-entropy."""

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

tf.compat.v1.disable_eager_execution()

rng = np.random.RandomState(41)
X = rng.randn(32, 4).astype(np.float32)
Y = (np.sin(X[:, :1]) - 0.5 * X[:, 1:2] * X[:, 3:4]).astype(np.float32)
TOKENS = rng.randint(0, 12, (32, 6)).astype(np.int32)
LABELS = (TOKENS.sum(axis=1) % 3).astype(np.int32)


def fit(target, out, name, layers, optimizer, loss, x, y):
    tf_keras.backend.clear_session()
    g = tf.Graph()
    with g.as_default():
        with tf.compat.v1.device(tf.compat.v1.train.replica_device_setter(ps_tasks=1, worker_device="/job:worker/task:0")):
            model = tf_keras.Sequential(layers())
            model.compile(optimizer=optimizer(), loss=loss)
            model.build(x.shape)
        sess = tf.compat.v1.Session(target)
        tf_keras.backend.set_session(sess)
        w = np.random.RandomState(9)
        model.set_weights([w.uniform(-0.5, 0.5, v.shape).astype(np.float32) for v in model.get_weights()])
        out[name + " fit loss"] = ffcluster.outcome(
            tf, lambda: [float(v) for v in model.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0)
                         .history["loss"]])
        out[name + " weights"] = [v.ravel().tolist() for v in model.get_weights()]
        sess.close()
    tf_keras.backend.clear_session()


def scenarios(target):
    out = {}
    legacy = tf_keras.optimizers.legacy
    dense = lambda: [tf_keras.layers.Dense(6, activation="tanh"), tf_keras.layers.Dense(1)]  # noqa: E731
    fit(target, out, "SGD nesterov", dense, lambda: legacy.SGD(0.1, momentum=0.9, nesterov=True), "mse", X, Y)
    fit(target, out, "Adam amsgrad", dense, lambda: legacy.Adam(0.05, amsgrad=True), "mse", X, Y)
    embed = lambda: [tf_keras.layers.Embedding(12, 4), tf_keras.layers.GlobalAveragePooling1D(),  # noqa: E731
                     tf_keras.layers.Dense(3)]
    fit(target, out, "Embedding SGD momentum", embed, lambda: legacy.SGD(0.1, momentum=0.9),
        tf_keras.losses.SparseCategoricalCrossentropy(from_logits=True), TOKENS, LABELS)
    return out


want, got = ffcluster.on_both([("ps", 1), ("worker", 1)], scenarios)
n = ffcluster.compare(want, got, "keras optimizers")
print(f"test_keras_optimizers: OK ({n} scenarios equal TensorFlow's)")
