"""Speed of the tf.signal front end of an audio model, ferroflow's servers against
TensorFlow 2.21's, side by side on this machine: TensorFlow's Python client runs
stft → |·| → log-mel → MFCC and the gradient of their sum with respect to the waveforms
(RFFT, IRFFT, ComplexAbs, DCT …) on the worker of a 1 ps + 1 worker cluster of each, and
prints the median step time of each and their ratio.

Usage: .venv/bin/python scripts/bench/signal_ratio.py [--batch 16] [--samples 16000] [--steps 30]
(FERROFLOW_BIN overrides the binary)."""

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "compat"))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

tf.compat.v1.disable_eager_execution()
S = tf.signal

ap = argparse.ArgumentParser()
ap.add_argument("--batch", type=int, default=16)
ap.add_argument("--samples", type=int, default=16000)
ap.add_argument("--steps", type=int, default=30)
args = ap.parse_args()
wave = np.random.RandomState(0).uniform(-1, 1, (args.batch, args.samples)).astype(np.float32)


def scenario(target):
    g = tf.Graph()
    with g.as_default(), tf.compat.v1.device("/job:worker/task:0"):
        w = tf.compat.v1.placeholder(tf.float32, wave.shape)
        mag = tf.abs(S.stft(w, 400, 160, 512))
        mel = S.linear_to_mel_weight_matrix(40, 257, 16000.0, 20.0, 7600.0)
        logmel = tf.math.log(tf.tensordot(mag, mel, 1) + 1e-6)
        mfcc = S.mfccs_from_log_mel_spectrograms(logmel)[..., :13]
        loss = tf.reduce_sum(mfcc) + tf.reduce_sum(logmel)
        grad = tf.gradients(loss, w)[0]
        out = tf.reduce_sum(grad)
    with tf.compat.v1.Session(target, graph=g) as s:
        for _ in range(3):
            s.run(out, {w: wave})
        times = []
        for _ in range(args.steps):
            t = time.perf_counter()
            s.run(out, {w: wave})
            times.append(time.perf_counter() - t)
    return statistics.median(times)


tf_s, ff_s = ffcluster.on_both([("ps", 1), ("worker", 1)], scenario)
print("stft + log-mel + MFCC and its gradient, batch %d x %d samples, median of %d steps"
      % (args.batch, args.samples, args.steps))
print("TensorFlow's servers %.2f ms, ferroflow's %.2f ms: ferroflow %.2fx TensorFlow's speed"
      % (tf_s * 1e3, ff_s * 1e3, tf_s / ff_s))
