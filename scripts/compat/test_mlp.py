"""A small MLP written with tf.compat.v1 trains on a ferroflow cluster: variables on the
ferroflow ps (/job:ps/task:0), the session on a ferroflow worker's master, a few hundred
GradientDescent steps. The loss curve must equal TensorFlow's own local run within float
tolerance. Both resource variables (TF2's default) and ref variables are exercised."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

tf.compat.v1.disable_eager_execution()

STEPS = 300
rng = np.random.RandomState(7)
X = rng.randn(64, 4).astype(np.float32)
Y = (np.sin(X[:, :1]) + 0.5 * X[:, 1:2] * X[:, 2:3]).astype(np.float32)
W1 = (rng.randn(4, 16) * 0.5).astype(np.float32)
B1 = np.zeros(16, np.float32)
W2 = (rng.randn(16, 1) * 0.5).astype(np.float32)
B2 = np.zeros(1, np.float32)


def train(target, ps_device, worker_device, use_resource):
    g = tf.Graph()
    with g.as_default():
        with tf.device(ps_device):
            def var(name, v):
                return tf.compat.v1.get_variable(name, initializer=tf.constant(v), use_resource=use_resource)
            w1, b1, w2, b2 = var("w1", W1), var("b1", B1), var("w2", W2), var("b2", B2)
        with tf.device(worker_device):
            x = tf.compat.v1.placeholder(tf.float32, [None, 4])
            y = tf.compat.v1.placeholder(tf.float32, [None, 1])
            h = tf.nn.relu(tf.matmul(x, w1) + b1)
            pred = tf.matmul(h, w2) + b2
            loss = tf.reduce_mean(tf.square(pred - y))
            step = tf.compat.v1.train.GradientDescentOptimizer(0.05).minimize(loss)
        init = tf.compat.v1.global_variables_initializer()
        losses = []
        with tf.compat.v1.Session(target) as sess:
            sess.run(init)
            for i in range(STEPS):
                lo, _ = sess.run([loss, step], feed_dict={x: X, y: Y})
                losses.append(lo)
            final_w2 = sess.run(w2)
    return np.array(losses), final_w2


servers, flag = ffcluster.cluster({"ps": 1, "worker": 1})
try:
    for use_resource in (True, False):
        ref, ref_w2 = train("", "/cpu:0", "/cpu:0", use_resource)
        got, got_w2 = train(servers["worker"][0].target, "/job:ps/task:0", "/job:worker/task:0", use_resource)
        print(f"resource={use_resource}: loss {got[0]:.5f} -> {got[-1]:.5f} (TensorFlow {ref[0]:.5f} -> {ref[-1]:.5f})")
        assert got[-1] < got[0] * 0.5, "the loss must go down"
        np.testing.assert_allclose(got, ref, rtol=2e-4, atol=2e-5)
        np.testing.assert_allclose(got_w2, ref_w2, rtol=2e-4, atol=2e-5)
    print("test_mlp: OK")
finally:
    for ss in servers.values():
        for s in ss:
            s.kill()
