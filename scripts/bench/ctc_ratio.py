"""Speed of CTC, ferroflow's servers against TensorFlow 2.21's, side by side on this
machine: TensorFlow's Python client runs `tf.compat.v1.nn.ctc_loss` (the `CTCLoss` kernel,
loss and fused gradient) and its gradient with respect to the logits, then a greedy and a
beam-search decode of the same logits, on the worker of a 1 ps + 1 worker cluster of each,
and prints the median step time of each and their ratio.
Usage: .venv/bin/python scripts/bench/ctc_ratio.py [--batch 32] [--time 100] [--classes 40]
[--labels 20] [--beam 8] [--steps 30] (FERROFLOW_BIN overrides the binary)."""
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "compat"))
import bench_args  # noqa: E402
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

tf.compat.v1.disable_eager_execution()

args = bench_args.int_options(batch=32, time=100, classes=40, labels=20, beam=8, steps=30).parse_args()
rng = np.random.RandomState(0)
logits = rng.randn(args.time, args.batch, args.classes).astype(np.float32)
labels = rng.randint(0, args.classes - 1, (args.batch, args.labels))


def timed(s, fetch, feed):
    for _ in range(3):
        s.run(fetch, feed)
    times = []
    for _ in range(args.steps):
        t = time.perf_counter()
        s.run(fetch, feed)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def scenario(target):
    g = tf.Graph()
    with g.as_default(), tf.compat.v1.device("/job:worker/task:0"):
        x = tf.compat.v1.placeholder(tf.float32, logits.shape)
        sparse = tf.sparse.from_dense(tf.constant(labels, tf.int32))
        seq = tf.fill([args.batch], args.time)
        loss = tf.reduce_sum(tf.compat.v1.nn.ctc_loss(sparse, x, seq))
        grad = tf.reduce_sum(tf.gradients(loss, x)[0])
        greedy = tf.nn.ctc_greedy_decoder(x, seq)[1]
        beam = tf.nn.ctc_beam_search_decoder(x, seq, beam_width=args.beam, top_paths=1)[1]
    with tf.compat.v1.Session(target, graph=g) as s:
        feed = {x: logits}
        return timed(s, [loss, grad], feed), timed(s, [greedy, beam], feed)


(tf_loss, tf_dec), (ff_loss, ff_dec) = ffcluster.on_both([("ps", 1), ("worker", 1)], scenario)
print("batch %d, %d steps, %d classes, %d labels, beam %d; median of %d steps"
      % (args.batch, args.time, args.classes, args.labels, args.beam, args.steps))
print("ctc_loss + gradient: TensorFlow's servers %.2f ms, ferroflow's %.2f ms: ferroflow %.2fx TensorFlow's speed"
      % (tf_loss * 1e3, ff_loss * 1e3, tf_loss / ff_loss))
print("greedy + beam decode: TensorFlow's servers %.2f ms, ferroflow's %.2f ms: ferroflow %.2fx TensorFlow's speed"
      % (tf_dec * 1e3, ff_dec * 1e3, tf_dec / ff_dec))
