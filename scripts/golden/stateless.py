"""Golden values for the stateless random ops (TensorFlow 2.21): the seed-to-key ops and
the V1 (seed) and V2 (key, counter, alg) samplers, float32/float64 and the integer ones."""
import numpy as np
import tensorflow as tf
from common import tensor, write

tf.compat.v1.disable_eager_execution()
T = {tf.float32: "float32", tf.float64: "float64", tf.int32: "int32", tf.int64: "int64", tf.uint32: "uint32",
     tf.uint64: "uint64"}


def run(fn):
    g = tf.Graph()
    with g.as_default(), tf.compat.v1.Session(graph=g) as s:
        return s.run(fn())


cases = []


def add(name, op, attrs, inputs, outs, rtol=1e-6, atol=1e-7):
    cases.append({"name": name, "op": op, "attrs": attrs, "inputs": [tensor(i) for i in inputs],
                  "outputs": [tensor(o) for o in outs], "rtol": rtol, "atol": atol})


for seed in ([1, 2], [-7, 123456789], [0, 0]):
    for sdt in (np.int32, np.int64):
        s = np.array(seed, sdt)
        k, c = run(lambda: tf.raw_ops.StatelessRandomGetKeyCounter(seed=s))
        add(f"get_key_counter_{seed[0]}_{sdt.__name__}", "StatelessRandomGetKeyCounter",
            {"Tseed": {"type": T[tf.as_dtype(sdt)]}}, [s], [k, c])
        k2, c2, a = run(lambda: tf.raw_ops.StatelessRandomGetKeyCounterAlg(seed=s))
        add(f"get_key_counter_alg_{seed[0]}_{sdt.__name__}", "StatelessRandomGetKeyCounterAlg",
            {"Tseed": {"type": T[tf.as_dtype(sdt)]}}, [s], [k2, c2, a])
        for op in ("StatelessRandomUniform", "StatelessRandomNormal", "StatelessTruncatedNormal"):
            for dt in (tf.float32, tf.float64):
                shape = np.array([3, 5], np.int32)
                out = run(lambda: getattr(tf.raw_ops, op)(shape=shape, seed=s, dtype=dt))
                add(f"{op}_{seed[0]}_{sdt.__name__}_{T[dt]}", op,
                    {"dtype": {"type": T[dt]}, "T": {"type": "int32"}, "Tseed": {"type": T[tf.as_dtype(sdt)]}},
                    [shape, s], [out])
        for dt, lo, hi in ((tf.int32, -5, 9), (tf.int64, 3, 1 << 40)):
            shape = np.array([7], np.int64)
            lo_v, hi_v = np.array(lo, dt.as_numpy_dtype), np.array(hi, dt.as_numpy_dtype)
            out = run(lambda: tf.raw_ops.StatelessRandomUniformInt(shape=shape, seed=s, minval=lo_v, maxval=hi_v))
            add(f"uniform_int_{seed[0]}_{sdt.__name__}_{T[dt]}", "StatelessRandomUniformInt",
                {"dtype": {"type": T[dt]}, "T": {"type": "int64"}, "Tseed": {"type": T[tf.as_dtype(sdt)]}},
                [shape, s, lo_v, hi_v], [out])

key = np.array([0x1234_5678_9abc_def0], np.uint64)
counter = np.array([5, 0xffff_ffff_0000_0001], np.uint64)
alg = np.array(1, np.int32)
for op in ("StatelessRandomUniformV2", "StatelessRandomNormalV2", "StatelessTruncatedNormalV2"):
    for dt in (tf.float32, tf.float64):
        shape = np.array([2, 9], np.int32)
        out = run(lambda: getattr(tf.raw_ops, op)(shape=shape, key=key, counter=counter, alg=alg, dtype=dt))
        add(f"{op}_{T[dt]}", op, {"dtype": {"type": T[dt]}, "Tshape": {"type": "int32"}},
            [shape, key, counter, alg], [out])
for dt in (tf.int32, tf.int64, tf.uint32, tf.uint64):
    shape = np.array([6], np.int32)
    out = run(lambda: tf.raw_ops.StatelessRandomUniformFullIntV2(shape=shape, key=key, counter=counter, alg=alg,
                                                                   dtype=dt))
    add(f"full_int_v2_{T[dt]}", "StatelessRandomUniformFullIntV2", {"dtype": {"type": T[dt]},
                                                                     "Tshape": {"type": "int32"}},
        [shape, key, counter, alg], [out])
for dt, lo, hi in ((tf.int32, -100, 100), (tf.int64, 0, 7)):
    shape = np.array([9], np.int32)
    lo_v, hi_v = np.array(lo, dt.as_numpy_dtype), np.array(hi, dt.as_numpy_dtype)
    out = run(lambda: tf.raw_ops.StatelessRandomUniformIntV2(shape=shape, key=key, counter=counter, alg=alg,
                                                             minval=lo_v, maxval=hi_v))
    add(f"uniform_int_v2_{T[dt]}", "StatelessRandomUniformIntV2", {"dtype": {"type": T[dt]},
                                                                   "Tshape": {"type": "int32"}},
        [shape, key, counter, alg, lo_v, hi_v], [out])
write("stateless", cases)
