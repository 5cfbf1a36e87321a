"""Sampled losses on a ferroflow cluster, from TensorFlow's client, against TensorFlow's own
servers: a user's skip-gram word2vec (embeddings and output weights on the ps through
`replica_device_setter`, `tf.nn.nce_loss`, as TensorFlow's word2vec tutorial trains it) and a
language-model head trained with `tf.nn.sampled_softmax_loss` (accidental hits removed).
Both draw their negative classes with `LogUniformCandidateSampler` under a graph seed, so the
draws, and with them every loss, must equal TensorFlow's: relative difference <= 1e-4 over
eight steps of each."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

tf.compat.v1.disable_eager_execution()
VOCAB, DIM, BATCH = 500, 16, 32


def model(target, loss_fn):
    rng = np.random.RandomState(9)
    # Zipf-like word ids, as text gives.
    words = np.minimum(rng.zipf(1.3, (8, BATCH)) - 1, VOCAB - 1).astype(np.int64)
    context = np.minimum(rng.zipf(1.3, (8, BATCH, 1)) - 1, VOCAB - 1).astype(np.int64)
    g = tf.Graph()
    with g.as_default():
        tf.compat.v1.set_random_seed(17)
        with tf.compat.v1.device(tf.compat.v1.train.replica_device_setter(ps_tasks=1, worker_device="/job:worker/task:0")):
            x = tf.compat.v1.placeholder(tf.int64, [BATCH])
            y = tf.compat.v1.placeholder(tf.int64, [BATCH, 1])
            emb = tf.Variable(tf.random.uniform([VOCAB, DIM], -1.0, 1.0, seed=1))
            w = tf.Variable(tf.random.truncated_normal([VOCAB, DIM], stddev=DIM ** -0.5, seed=2))
            b = tf.Variable(tf.zeros([VOCAB]))
            h = tf.nn.embedding_lookup(emb, x)
            if loss_fn == "nce":
                loss = tf.reduce_mean(tf.nn.nce_loss(w, b, y, h, num_sampled=24, num_classes=VOCAB))
            else:
                loss = tf.reduce_mean(tf.nn.sampled_softmax_loss(w, b, y, h, num_sampled=24, num_classes=VOCAB,
                                                                 remove_accidental_hits=True))
            step = tf.compat.v1.train.GradientDescentOptimizer(0.5).minimize(loss)
            init = tf.compat.v1.global_variables_initializer()
        with tf.compat.v1.Session(target) as s:
            s.run(init)
            return [float(s.run([loss, step], {x: words[i], y: context[i]})[0]) for i in range(8)]


def both(target):
    return {"nce": model(target, "nce"), "sampled_softmax": model(target, "sampled")}


want, got = ffcluster.on_both([("ps", 1), ("worker", 1)], both)
worst = 0.0
for name in want:
    for i, (a, b) in enumerate(zip(want[name], got[name])):
        print("%-16s step %d: tensorflow %.6f ferroflow %.6f" % (name, i, a, b))
        worst = max(worst, abs(a - b) / abs(a))
print("sampled losses: worst relative difference %.2e" % worst)
assert worst <= 1e-4, (want, got)
print("test_sampled_losses: OK")
