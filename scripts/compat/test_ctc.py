"""Connectionist temporal classification on a ferroflow cluster, from TensorFlow's client,
against TensorFlow's own servers: a user's text-recognition model (a CRNN: tf_keras
convolutions and pooling, a bidirectional GRU over the image columns, a softmax over the
characters and the blank) trained with Keras's `ctc_batch_cost` (TensorFlow's `CTCLoss`
op and its fused gradient), Adam, variables on the ps through `replica_device_setter`;
then decoded greedily and by beam search (`CTCGreedyDecoder`, `CTCBeamSearchDecoder`, two
paths) and scored by the dense `tf.nn.ctc_loss` of TF 2 (its loops of primitive ops).
The losses must agree to 1e-4 (relative), the decoded labels exactly."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402
import tf_keras as k  # noqa: E402

tf.compat.v1.disable_eager_execution()


def crnn(target):
    rng = np.random.RandomState(5)
    images = rng.uniform(0, 1, (8, 32, 64, 1)).astype(np.float32)
    labels = rng.randint(1, 10, (8, 5)).astype(np.int32)
    label_len = rng.randint(2, 6, (8, 1)).astype(np.int32)
    g = tf.Graph()
    with g.as_default():
        k.utils.set_random_seed(1)
        with tf.compat.v1.device(tf.compat.v1.train.replica_device_setter(ps_tasks=1, worker_device="/job:worker/task:0")):
            x = tf.compat.v1.placeholder(tf.float32, [None, 32, 64, 1])
            y = tf.compat.v1.placeholder(tf.int32, [None, 5])
            y_len = tf.compat.v1.placeholder(tf.int32, [None, 1])
            h = k.layers.Conv2D(8, 3, padding="same", activation="relu")(x)
            h = k.layers.MaxPooling2D(2)(h)
            h = k.layers.Conv2D(16, 3, padding="same", activation="relu")(h)
            h = k.layers.MaxPooling2D((2, 1))(h)
            h = tf.reshape(tf.transpose(h, [0, 2, 1, 3]), [-1, 32, 8 * 16])
            h = k.layers.Bidirectional(k.layers.GRU(16, return_sequences=True))(h)
            logits = k.layers.Dense(11)(h)
            probs = tf.nn.softmax(logits)
            batch = tf.shape(x)[0]
            loss = tf.reduce_mean(k.backend.ctc_batch_cost(y, probs, tf.fill([batch, 1], 32), y_len))
            step = tf.compat.v1.train.AdamOptimizer(1e-2).minimize(loss)
            greedy, greedy_score = k.backend.ctc_decode(probs, tf.fill([batch], 32), greedy=True)
            beam, beam_scores = k.backend.ctc_decode(probs, tf.fill([batch], 32), greedy=False, beam_width=6,
                                                     top_paths=2)
            dense = tf.reduce_mean(tf.nn.ctc_loss(y, logits, tf.reshape(y_len, [-1]), tf.fill([batch], 32),
                                                  logits_time_major=False, blank_index=-1))
            init = tf.compat.v1.global_variables_initializer()
        cfg = tf.compat.v1.ConfigProto(allow_soft_placement=True)
        feed = {x: images, y: labels, y_len: label_len}
        with tf.compat.v1.Session(target, config=cfg) as s:
            s.run(init)
            losses = [float(s.run([loss, step], feed)[0]) for _ in range(6)]
            out = s.run({"greedy": greedy[0], "greedy_score": greedy_score, "beam0": beam[0], "beam1": beam[1],
                         "beam_scores": beam_scores, "dense": dense}, feed)
        return losses, out


want, got = ffcluster.on_both([("ps", 1), ("worker", 1)], crnn)
(wl, wo), (gl, go) = want, got
worst = max(abs(a - b) / abs(a) for a, b in zip(wl, gl))
for i, (a, b) in enumerate(zip(wl, gl)):
    print("step %d: tensorflow %.6f ferroflow %.6f" % (i, a, b))
print("CRNN + CTC: worst relative loss difference %.2e" % worst)
assert worst <= 1e-4, (wl, gl)
for name in ["greedy", "beam0", "beam1"]:
    assert np.array_equal(wo[name], go[name]), (name, wo[name], go[name])
    print("%-8s decoded labels equal (%d x %d)" % (name, *wo[name].shape))
for name in ["greedy_score", "beam_scores", "dense"]:
    a, b = np.asarray(wo[name]), np.asarray(go[name])
    err = float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(a))), 1e-3))
    print("%-12s max error / max |value| = %.1e" % (name, err))
    assert err <= 1e-4, (name, a, b)
print("test_ctc: OK")
