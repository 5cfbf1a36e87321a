"""Golden values for the stateful random ops (seeded: TensorFlow's Philox streams are
reproduced bit for bit). Each case is the FIRST run of a freshly created kernel."""
import sys

# This file's name shadows the standard library's `random`: take its folder off the path
# until numpy and TensorFlow are imported.
HERE = sys.path.pop(0)

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

sys.path.append(HERE)
from common import tensor, write  # noqa: E402

tf.compat.v1.disable_eager_execution()

TYPES = {tf.float32: "float32", tf.float64: "float64", tf.int32: "int32", tf.int64: "int64"}


def run(fn):
    g = tf.Graph()
    with g.as_default():
        out = fn()
        with tf.compat.v1.Session(graph=g) as s:
            return s.run(out)


cases = []


def add(name, op, attrs, inputs, make, rtol=1e-6, atol=1e-7):
    out = run(make)
    cases.append({"name": name, "op": op, "attrs": attrs, "inputs": [tensor(i) for i in inputs],
                  "outputs": [tensor(out)], "rtol": rtol, "atol": atol})


def seeded(op, dtype, shape, seed, seed2, idx=np.int32):
    shape_np = np.array(shape, dtype=idx)
    raw = getattr(tf.raw_ops, op)
    attrs = {"dtype": {"type": TYPES[dtype]}, "T": {"type": TYPES[tf.as_dtype(idx)]},
             "seed": {"i": seed}, "seed2": {"i": seed2}}
    name = "%s_%s_%s_%d_%d" % (op, TYPES[dtype], "x".join(map(str, shape)) or "scalar", seed, seed2)
    add(name, op, attrs, [shape_np],
        lambda: raw(shape=tf.constant(shape_np), dtype=dtype, seed=seed, seed2=seed2))


for op in ["RandomUniform", "RandomStandardNormal", "TruncatedNormal"]:
    for dtype in [tf.float32, tf.float64]:
        seeded(op, dtype, [7], 1, 2)
        seeded(op, dtype, [3, 5, 4], 87654321, 0, np.int64)
        seeded(op, dtype, [], 0, 5)
        seeded(op, dtype, [1000], -7, 123456789012)
        seeded(op, dtype, [0, 3], 3, 3)

for tout, lo, hi in [(np.int32, -5, 17), (np.int64, -(2 ** 40), 2 ** 41 + 3), (np.int32, 0, 2 ** 31 - 1)]:
    attrs = {"Tout": {"type": TYPES[tf.as_dtype(tout)]}, "T": {"type": "int32"}, "seed": {"i": 9},
             "seed2": {"i": 4}}
    shp = np.array([33], np.int32)
    add("RandomUniformInt_%s_%d_%d" % (TYPES[tf.as_dtype(tout)], lo, hi), "RandomUniformInt", attrs,
        [shp, np.array(lo, tout), np.array(hi, tout)],
        lambda: tf.raw_ops.RandomUniformInt(shape=tf.constant(shp), minval=tf.constant(lo, tout),
                                            maxval=tf.constant(hi, tout), seed=9, seed2=4))

rs = np.random.RandomState(0)
for shape, seed in [([10], 1), ([6, 3], 42), ([1, 4], 7), ([100], 5)]:
    x = rs.randn(*shape).astype(np.float32)
    add("RandomShuffle_%s_%d" % ("x".join(map(str, shape)), seed), "RandomShuffle",
        {"T": {"type": "float32"}, "seed": {"i": seed}, "seed2": {"i": 0}}, [x],
        lambda: tf.raw_ops.RandomShuffle(value=tf.constant(x), seed=seed, seed2=0), rtol=0, atol=0)

write("random", cases)
