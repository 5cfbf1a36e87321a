"""Quantization-aware training on a ferroflow cluster, from TensorFlow's client, against
TensorFlow's own servers: a user's CNN whose inputs go through
`fake_quant_with_min_max_args`, whose convolution weights are fake-quantized per output
channel (`fake_quant_with_min_max_vars_per_channel`, ranges from the weights) and whose
activations through learned ranges (`fake_quant_with_min_max_vars` on variables trained
with the model, as `tf.contrib.quantize` and the Model Optimization toolkit set them up);
Adam, variables on the ps through `replica_device_setter`, eight steps. Every op, its
forward kernel and its straight-through gradient run on the worker. The losses and the
learned ranges must agree to 1e-4 (relative)."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

tf.compat.v1.disable_eager_execution()
Q = tf.quantization


def qat(target):
    rng = np.random.RandomState(7)
    images = rng.uniform(0, 1, (32, 12, 12, 1)).astype(np.float32)
    labels = rng.randint(0, 4, 32).astype(np.int64)
    g = tf.Graph()
    with g.as_default():
        tf.compat.v1.set_random_seed(3)
        with tf.compat.v1.device(tf.compat.v1.train.replica_device_setter(ps_tasks=1, worker_device="/job:worker/task:0")):
            x = tf.compat.v1.placeholder(tf.float32, [None, 12, 12, 1])
            y = tf.compat.v1.placeholder(tf.int64, [None])
            w1 = tf.Variable(tf.random.normal([3, 3, 1, 8], stddev=0.5, seed=1))
            w2 = tf.Variable(tf.random.normal([3, 3, 8, 8], stddev=0.2, seed=2))
            w3 = tf.Variable(tf.random.normal([8, 4], stddev=0.3, seed=3))
            act_min = tf.Variable(-1.0)
            act_max = tf.Variable(0.6)

            def qweights(w):
                axes = list(range(len(w.shape) - 1))
                return Q.fake_quant_with_min_max_vars_per_channel(
                    w, tf.reduce_min(w, axes), tf.reduce_max(w, axes), num_bits=8, narrow_range=True)

            h = Q.fake_quant_with_min_max_args(x, 0.0, 1.0, num_bits=8)
            h = tf.nn.relu(tf.nn.conv2d(h, qweights(w1), 1, "SAME"))
            h = Q.fake_quant_with_min_max_vars(h, act_min, act_max, num_bits=8)
            h = tf.nn.relu(tf.nn.conv2d(h, qweights(w2), 2, "SAME"))
            h = Q.fake_quant_with_min_max_vars(h, act_min, act_max, num_bits=6)
            logits = tf.matmul(tf.reduce_mean(h, [1, 2]), qweights(w3))
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
            step = tf.compat.v1.train.AdamOptimizer(1e-2).minimize(loss)
            init = tf.compat.v1.global_variables_initializer()
        out = []
        with tf.compat.v1.Session(target) as s:
            s.run(init)
            for i in range(8):
                b = slice((i * 8) % 32, (i * 8) % 32 + 8)
                out.append(float(s.run([loss, step], {x: images[b], y: labels[b]})[0]))
            out += [float(v) for v in s.run([act_min, act_max])]
        return out


want, got = ffcluster.on_both([("ps", 1), ("worker", 1)], qat)
for i, (a, b) in enumerate(zip(want, got)):
    what = "step %d loss" % i if i < 8 else ("learned min" if i == 8 else "learned max")
    print("%-12s tensorflow %.6f ferroflow %.6f" % (what, a, b))
worst = max(abs(a - b) / max(abs(a), 1e-6) for a, b in zip(want, got))
print("quantization-aware training: worst relative difference %.2e" % worst)
assert worst <= 1e-4, (want, got)
print("test_fake_quant: OK")
