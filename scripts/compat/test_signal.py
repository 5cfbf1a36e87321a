"""tf.signal and complex numbers on a ferroflow cluster, from TensorFlow's client, against
TensorFlow's own servers:

1. every public `tf.signal` transform (fft/ifft/fft2d/ifft2d/fft3d/ifft3d, rfft/irfft in
   1-3 dims with cropping and padding, stft/inverse_stft, the log-mel and MFCC front end,
   dct/idct of types 1-4, frame, overlap_and_add, fftshift, the windows) and the complex
   parts (`tf.complex`, `real`, `imag`, `abs`, `angle`, `conj`), each with its gradient
   (TensorFlow's Python gradients, which run IRFFT/RFFT/Complex/Real/Imag … on the
   server), computed on the worker with the input on the ps;
2. a user's keyword-spotting model: waveforms → STFT → magnitude → log-mel spectrogram →
   tf_keras Conv2D + BatchNormalization + pooling → Dense, softmax cross-entropy, Adam,
   variables on the ps through `replica_device_setter`, eight training steps: the losses
   must agree to 1e-4 (relative)."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402
import tf_keras as k  # noqa: E402

tf.compat.v1.disable_eager_execution()
S = tf.signal


# TensorFlow 2.21's own RFFT gradient fails to build for a cropping fft_length ("Dimensions
# must be equal, but are 99 and 640") and it has none for RFFT3D; the windows take no input.
NO_GRADIENT = {"windows", "rfft_crop", "irfft_odd", "rfft2d_len", "rfft3d"}


def transforms(target):
    """Each function's value and the gradient of a real scalar of it w.r.t. its input."""
    rng = np.random.RandomState(3)
    wave = rng.uniform(-1, 1, (2, 640)).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        with tf.compat.v1.device("/job:ps/task:0"):
            x = tf.Variable(wave)
            x64 = tf.Variable(wave.astype(np.float64))
        with tf.compat.v1.device("/job:worker/task:0"):
            c = tf.complex(x, tf.reverse(x, [1]) * 0.5)
            c3 = tf.reshape(c, [2, 8, 8, 10])
            x3 = tf.reshape(x, [2, 8, 8, 10])
            spec = S.stft(x, 128, 64, 128)
            mel = S.linear_to_mel_weight_matrix(16, 65, 8000.0, 20.0, 3800.0)
            logmel = tf.math.log(tf.tensordot(tf.abs(spec), mel, 1) + 1e-6)
            cases = {
                "fft": S.fft(c), "ifft": S.ifft(c), "fft2d": S.fft2d(c3), "ifft2d": S.ifft2d(c3),
                "fft3d": S.fft3d(c3), "ifft3d": S.ifft3d(c3),
                "rfft": S.rfft(x), "rfft_pad": S.rfft(x, [700]), "rfft_crop": S.rfft(x, [99]),
                "irfft": S.irfft(S.rfft(x)), "irfft_odd": S.irfft(S.rfft(x, [99]), [99]),
                "rfft2d": S.rfft2d(x3), "irfft2d": S.irfft2d(S.rfft2d(x3)),
                "rfft2d_len": S.rfft2d(x3, [6, 12]), "rfft3d": S.rfft3d(x3),
                "rfft_f64": S.rfft(x64), "irfft_f64": S.irfft(S.rfft(x64)),
                "stft": spec, "logmel": logmel, "mfcc": S.mfccs_from_log_mel_spectrograms(logmel)[..., :13],
                "inverse_stft": S.inverse_stft(spec, 128, 64, 128, window_fn=S.inverse_stft_window_fn(64)),
                "dct1": S.dct(x, type=1), "dct2": S.dct(x, type=2, norm="ortho"), "dct3": S.dct(x, type=3),
                "dct4": S.dct(x, type=4), "idct2": S.idct(x, type=2), "dct2_n": S.dct(x, type=2, n=300),
                "frame": S.frame(x, 100, 30, pad_end=True), "overlap_add": S.overlap_and_add(tf.reshape(x, [2, 16, 40]), 20),
                "fftshift": S.fftshift(c, axes=1), "ifftshift": S.ifftshift(x),
                "complex_abs": tf.abs(c), "angle": tf.math.angle(c), "real": tf.math.real(c),
                "imag": tf.math.imag(c), "conj": tf.math.conj(c),
                "windows": tf.stack([S.hann_window(32), S.hamming_window(32), S.kaiser_window(32), S.vorbis_window(32)]),
            }
            fetch = {}
            for name, t in cases.items():
                fetch[name] = t
                real = tf.math.real(t) + 0.3 * tf.math.imag(t) if t.dtype.is_complex else t
                src = x64 if t.dtype in (tf.float64, tf.complex128) else x
                if name in NO_GRADIENT:
                    continue
                fetch[name + "/grad"] = tf.gradients(tf.reduce_sum(tf.sin(real)), src)[0]
        with tf.compat.v1.Session(target) as s:
            s.run(tf.compat.v1.global_variables_initializer())
            return s.run(fetch)


def keyword_spotting(target):
    rng = np.random.RandomState(5)
    waves = rng.uniform(-1, 1, (48, 1600)).astype(np.float32)
    labels = rng.randint(0, 6, 48).astype(np.int64)
    g = tf.Graph()
    with g.as_default():
        tf.compat.v1.set_random_seed(11)
        k.utils.set_random_seed(11)
        with tf.compat.v1.device(tf.compat.v1.train.replica_device_setter(ps_tasks=1, worker_device="/job:worker/task:0")):
            w = tf.compat.v1.placeholder(tf.float32, [None, 1600])
            y = tf.compat.v1.placeholder(tf.int64, [None])
            train = tf.compat.v1.placeholder_with_default(True, [])
            mag = tf.abs(S.stft(w, 256, 128, 256, pad_end=True))
            mel = S.linear_to_mel_weight_matrix(24, 129, 8000.0, 60.0, 3800.0)
            feat = tf.math.log(tf.tensordot(mag, mel, 1) + 1e-6)[..., None]
            h = k.layers.Conv2D(8, 3, padding="same", use_bias=False)(feat)
            h = k.layers.BatchNormalization()(h, training=train)
            h = k.layers.MaxPooling2D(2)(tf.nn.relu(h))
            h = k.layers.Conv2D(16, 3, padding="same", activation="relu")(h)
            h = k.layers.GlobalAveragePooling2D()(h)
            logits = k.layers.Dense(6)(k.layers.Dropout(0.0)(h))
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
            updates = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)
            with tf.control_dependencies(updates):
                step = tf.compat.v1.train.AdamOptimizer(3e-3).minimize(loss)
            init = tf.compat.v1.global_variables_initializer()
        out = []
        cfg = tf.compat.v1.ConfigProto(allow_soft_placement=True)
        with tf.compat.v1.Session(target, config=cfg) as s:
            s.run(init)
            for i in range(8):
                b = slice((i * 16) % 48, (i * 16) % 48 + 16)
                out.append(float(s.run([loss, step], {w: waves[b], y: labels[b]})[0]))
            out.append(float(s.run(loss, {w: waves[:16], y: labels[:16], train: False})))
        return out


want, got = ffcluster.on_both([("ps", 1), ("worker", 1)], transforms)
bad = []
for name in sorted(want):
    a, b = np.asarray(want[name]), np.asarray(got[name])
    scale = max(float(np.max(np.abs(a))), 1e-3)
    err = float(np.max(np.abs(a - b))) / scale if a.size else 0.0
    ok = a.shape == b.shape and a.dtype == b.dtype and err <= 2e-5
    print("%-20s %-14s %s max error / max |value| = %.1e" % (name, a.dtype, "equal" if ok else "DIFFERS", err))
    if not ok:
        bad.append((name, a.shape, b.shape, a.dtype, b.dtype, err))
assert not bad, bad

want, got = ffcluster.on_both([("ps", 1), ("worker", 1)], keyword_spotting)
worst = max(abs(a - b) / abs(a) for a, b in zip(want, got))
for i, (a, b) in enumerate(zip(want, got)):
    print("step %d: tensorflow %.6f ferroflow %.6f" % (i, a, b))
print("keyword spotting: worst relative loss difference %.2e" % worst)
assert worst <= 1e-4, (want, got)
print("test_signal: OK")
