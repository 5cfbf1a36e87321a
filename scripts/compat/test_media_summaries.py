"""TensorFlow 1.x's image, audio, text and tensor summaries computed on a ferroflow worker,
from TensorFlow's client, against TensorFlow's own servers: `tf.compat.v1.summary.image`
(uint8 images; float, half and double images with negative values and a NaN pixel, which
TensorFlow maps to uint8 its own way; `max_outputs` of 1 and 3), `tf.compat.v1.summary.audio`
(mono and stereo), `tf.compat.v1.summary.text` and `tensor_summary`, merged with
`merge_all`. Each summary value must equal TensorFlow's: the tags, the image sizes and
decoded pixels (the PNG bytes themselves may differ: another zlib), the WAV bytes, the
tensors and their plugin metadata."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402
from tensorflow.core.framework import summary_pb2  # noqa: E402

tf.compat.v1.disable_eager_execution()
tf.get_logger().setLevel("ERROR")


def build():
    rng = np.random.RandomState(4)
    u8 = rng.randint(0, 256, size=[3, 5, 4, 3]).astype(np.uint8)
    f = rng.randn(2, 4, 6, 1).astype(np.float32)
    f[1, 2, 3, 0] = np.nan
    pos = (rng.rand(2, 3, 3, 4) * 7).astype(np.float64)
    half = rng.randn(1, 4, 4, 3).astype(np.float16)
    mono = (rng.rand(2, 50) * 2 - 1).astype(np.float32)
    stereo = (rng.rand(1, 30, 2) * 2.4 - 1.2).astype(np.float32)
    with tf.compat.v1.device("/job:worker/task:0"):
        tf.compat.v1.summary.image("u8", tf.constant(u8), max_outputs=3)
        tf.compat.v1.summary.image("f", tf.constant(f) * 1.0, max_outputs=1)
        tf.compat.v1.summary.image("d", tf.constant(pos) + 0.0, max_outputs=5)
        tf.compat.v1.summary.image("h", tf.constant(half) * tf.constant(1.0, tf.float16))
        tf.compat.v1.summary.audio("mono", tf.constant(mono), 8000.5, max_outputs=2)
        tf.compat.v1.summary.audio("stereo", tf.constant(stereo), tf.constant(22050.0), max_outputs=1)
        tf.compat.v1.summary.text("notes", tf.constant([["a", "b"], ["c", "dé"]]))
        tf.compat.v1.summary.tensor_summary("t", tf.constant(np.arange(6, dtype=np.int64).reshape(2, 3)) * 2)
    return tf.compat.v1.summary.merge_all()


def values(target):
    g = tf.Graph()
    with g.as_default():
        merged = build()
        with tf.compat.v1.Session(target) as s:
            raw = s.run(merged)
    out = []
    summ = summary_pb2.Summary.FromString(raw)
    with tf.Graph().as_default(), tf.compat.v1.Session() as local:
        png = tf.compat.v1.placeholder(tf.string)
        decoded = tf.io.decode_png(png)
        for v in summ.value:
            kind = v.WhichOneof("value")
            if kind == "image":
                pixels = local.run(decoded, {png: v.image.encoded_image_string})
                out.append((v.tag, kind, v.image.height, v.image.width, v.image.colorspace, pixels.tolist()))
            elif kind == "audio":
                a = v.audio
                out.append((v.tag, kind, a.sample_rate, a.num_channels, a.length_frames, a.content_type,
                            a.encoded_audio_string))
            else:
                out.append((v.tag, kind, tf.make_ndarray(v.tensor).tolist(), str(v.tensor.dtype),
                            v.metadata.SerializeToString()))
    return out


want, got = ffcluster.on_both([("ps", 1), ("worker", 1)], values)
assert len(want) == len(got), ([w[:2] for w in want], [g[:2] for g in got])
for w, g in zip(want, got):
    assert w == g, (w[:5], g[:5])
    print("%-16s %-6s equal" % (w[0], w[1]))
print("test_media_summaries: OK (%d summary values)" % len(want))
