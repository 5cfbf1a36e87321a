"""A user's model built the way a user writes one: a convolutional VAE on MNIST (tf_keras
layers in TF 1.x graph mode, a Conv2DTranspose decoder, reparameterization with fed noise,
KL + Bernoulli loss) with a spectral-norm penalty (`tf.linalg.svd`, whose Python gradient
runs `Svd` with vectors) on the latent Dense kernel, Adam, variables on the ps through
`replica_device_setter`. Six training steps on TensorFlow's servers and on ferroflow's:
the losses must agree to 1e-4 (relative)."""

import gzip
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402
import tf_keras as k  # noqa: E402

tf.compat.v1.disable_eager_execution()

data = os.path.join(ffcluster.ROOT, "data", "mnist", "train-images-idx3-ubyte.gz")
with gzip.open(data) as f:
    imgs = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 28, 28, 1)[:64].astype(np.float32) / 255.0



def scenario(target):
    g = tf.Graph()
    with g.as_default():
        tf.compat.v1.set_random_seed(7)
        k.utils.set_random_seed(7)
        with tf.compat.v1.device(tf.compat.v1.train.replica_device_setter(ps_tasks=1, worker_device="/job:worker/task:0")):
            x = tf.compat.v1.placeholder(tf.float32, [None, 28, 28, 1])
            eps = tf.compat.v1.placeholder(tf.float32, [None, 4])
            h = k.layers.Conv2D(8, 3, strides=2, padding="same", activation="relu")(x)
            h = k.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu")(h)
            h = k.layers.Flatten()(h)
            lat = k.layers.Dense(8)
            ml = lat(h)
            mu, logvar = ml[:, :4], ml[:, 4:]
            z = mu + tf.exp(0.5 * logvar) * eps
            d = k.layers.Dense(7 * 7 * 16, activation="relu")(z)
            d = k.layers.Reshape((7, 7, 16))(d)
            d = k.layers.Conv2DTranspose(8, 3, strides=2, padding="same", activation="relu")(d)
            logits = k.layers.Conv2DTranspose(1, 3, strides=2, padding="same")(d)
            rec = tf.reduce_sum(tf.nn.sigmoid_cross_entropy_with_logits(labels=x, logits=logits), [1, 2, 3])
            kl = -0.5 * tf.reduce_sum(1 + logvar - tf.square(mu) - tf.exp(logvar), 1)
            spec = tf.linalg.svd(lat.kernel, compute_uv=False)[0]
            loss = tf.reduce_mean(rec + kl) + 0.1 * spec
            step = tf.compat.v1.train.AdamOptimizer(1e-3).minimize(loss)
            init = tf.compat.v1.global_variables_initializer()
        rng = np.random.RandomState(0)
        out = []
        cfg = tf.compat.v1.ConfigProto(allow_soft_placement=True)
        with tf.compat.v1.Session(target, config=cfg) as s:
            s.run(init)
            for i in range(6):
                b = imgs[(i * 16) % 64:(i * 16) % 64 + 16]
                l, sp, _ = s.run([loss, spec, step], {x: b, eps: rng.normal(size=(16, 4)).astype(np.float32)})
                out.append((float(l), float(sp)))
        return out


want, got = ffcluster.on_both([("ps", 1), ("worker", 1)], scenario)
for w, g_ in zip(want, got):
    print("tensorflow loss %.6f spectral norm %.6f, ferroflow %.6f %.6f, relative %.2e"
          % (w[0], w[1], g_[0], g_[1], abs(w[0] - g_[0]) / abs(w[0])))
worst = max(abs(w[0] - g_[0]) / abs(w[0]) for w, g_ in zip(want, got))
print("worst relative loss difference", worst)
assert worst <= 1e-4, (want, got)
assert all(abs(w[1] - g_[1]) <= 1e-4 * abs(w[1]) for w, g_ in zip(want, got)), "spectral norms differ"
print("test_vae_svd: OK")
