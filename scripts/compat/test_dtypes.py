"""Every dtype TensorProto carries, between TensorFlow 2.21's Python client and a ferroflow
server (TF 1.x graph mode): feeds and fetches of placeholders and constants, a variable of
each dtype (ref and resource) assigned and read, cast chains and the basic arithmetic,
comparisons and reductions. Each value is compared with the same graph run by a local
TensorFlow session."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

tf.compat.v1.disable_v2_behavior()

REAL = ["float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
        "uint32", "uint64"]
COMPLEX = ["complex64", "complex128"]
QUANTIZED = ["qint8", "quint8", "qint16", "quint16", "qint32"]
ALL = REAL + COMPLEX + ["bool", "string"] + QUANTIZED
SIGNED = ["float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64"]
# TensorFlow's CPU kernels for Assign / AssignVariableOp (no qint16; resource: no quint16 either).
REF_VARS = [d for d in ALL if d != "qint16"]
RESOURCE_VARS = [d for d in ALL if d not in ("qint16", "quint16")]


def values(name, shape, seed):
    """Exact sample values (multiples of 1/8 for floats, so every result is exact)."""
    rs = np.random.RandomState(seed)
    n = int(np.prod(shape))
    if name == "string":
        return np.array([("s%d" % rs.randint(100)).encode() for _ in range(n)], object).reshape(shape)
    if name == "bool":
        return rs.rand(*shape) > 0.5
    dt = tf.as_dtype(name)
    if name in COMPLEX:
        return ((rs.randint(-16, 17, n) + 1j * rs.randint(-16, 17, n)) / 8).astype(dt.as_numpy_dtype).reshape(shape)
    if dt.is_floating:
        return (rs.randint(-64, 65, n) / 8).astype(dt.as_numpy_dtype).reshape(shape)
    lo, hi = (0, 250) if name.startswith(("u", "qu")) else (-100, 100)
    ints = rs.randint(lo, hi, n)
    ints[ints == 0] = 3  # divisors
    return np.array(ints.tolist(), dtype=dt.as_numpy_dtype).reshape(shape)


g = tf.Graph()
checks = []  # (label, tensor or op, feeds)
with g.as_default():
    feeds = {}
    placeholders = {}
    init_ops = []
    for i, d in enumerate(ALL):
        dt = tf.as_dtype(d)
        with tf.compat.v1.name_scope(d):
            p = tf.compat.v1.placeholder(dt, shape=[2, 3], name="p")
            feeds[p] = values(d, [2, 3], i)
            placeholders[d] = p
            # A fed second operand: with a constant one TensorFlow's graph optimizer rewrites
            # x / c as x * (1 / c), which rounds differently.
            q = tf.compat.v1.placeholder(dt, shape=[2, 3], name="q")
            feeds[q] = values(d, [2, 3], 400 + i)
            c = tf.constant(values(d, [2, 3], 100 + i), dtype=dt, name="c")  # small: typed *_val fields
            big = tf.constant(values(d, [40, 30], 200 + i), dtype=dt, name="big")  # tensor_content
            checks += [(d + " feed", p), (d + " feed->identity", tf.identity(p)), (d + " const", c),
                       (d + " const big", big)]
            checks.append((d + " reshape", tf.reshape(p, [3, 2])))
            if d not in QUANTIZED or d in ("qint8", "quint8", "qint32", "qint16", "quint16"):
                checks.append((d + " concat", tf.concat([p, c], axis=0)))
            checks.append((d + " stack", tf.stack([p, c])))
            scalar = tf.constant(values(d, [1], 300 + i).reshape([]), dtype=dt, name="scalar")
            checks.append((d + " fill", tf.fill([2, 2], scalar)))
            if d in REAL or d in COMPLEX or d == "bool":
                checks.append((d + " ones_like", tf.ones_like(p)))
            if d in REAL or d in COMPLEX or d in ("bool", "string"):
                checks.append((d + " zeros_like", tf.zeros_like(p)))
            if d in REF_VARS:
                v = tf.compat.v1.Variable(c, name="ref_var", use_resource=False)
                init_ops.append(v.initializer)
                checks.append((d + " ref var read", v.read_value()))
                checks.append((d + " ref var assign", tf.compat.v1.assign(v, p)))
            if d in RESOURCE_VARS:
                rv = tf.compat.v1.Variable(c, name="res_var", use_resource=True)
                init_ops.append(rv.initializer)
                checks.append((d + " resource var read", rv.read_value()))
                with tf.control_dependencies([rv.assign(p)]):
                    checks.append((d + " resource var assign+read", rv.read_value()))
            if d in REAL + COMPLEX:
                checks += [(d + " add", p + q), (d + " sub", p - q), (d + " mul", p * q),
                           (d + " div", tf.raw_ops.Div(x=p, y=q)), (d + " equal", tf.equal(p, q)),
                           (d + " not_equal", tf.not_equal(p, q)), (d + " square", tf.square(p)),
                           (d + " sum", tf.reduce_sum(p, axis=1)), (d + " mean", tf.reduce_mean(p, axis=0)),
                           (d + " add broadcast", tf.raw_ops.AddV2(x=p, y=q[0]))]
            if d in REAL:
                checks += [(d + " maximum", tf.maximum(p, q)), (d + " minimum", tf.minimum(p, q)),
                           (d + " less", tf.less(p, q)), (d + " greater_equal", tf.greater_equal(p, q)),
                           (d + " max", tf.reduce_max(p)), (d + " min", tf.reduce_min(p, axis=1))]
            if d in SIGNED + COMPLEX:
                checks.append((d + " neg", -p))
            if d in SIGNED:
                checks.append((d + " abs", tf.abs(p)))
            if d in ("float16", "bfloat16", "float32", "float64") + tuple(COMPLEX):
                checks.append((d + " realdiv", tf.raw_ops.RealDiv(x=p, y=q)))
    # Cast chains through every numeric type (values small enough to survive int8).
    x = tf.compat.v1.placeholder(tf.float32, shape=[6], name="chain_in")
    feeds[x] = np.array([0.0, 1.5, -2.75, 100.25, 7.875, -0.5], np.float32)
    chain = x
    for d in ["float16", "bfloat16", "float64", "int16", "int8", "complex64", "int32", "uint8", "uint16",
              "complex128", "int64", "uint32", "uint64", "float32", "bool", "float16", "qint8", "int32"]:
        chain = tf.cast(chain, tf.as_dtype(d))
        checks.append(("cast chain -> " + d, chain))
    # Every pair, from fed values (a cast of a cast could be rewritten by TensorFlow's graph
    # optimizer, which ferroflow does not have).
    for s in REAL + COMPLEX + ["bool"] + QUANTIZED:
        for d in REAL + COMPLEX + ["bool"] + QUANTIZED:
            if s != d:
                checks.append(("cast %s -> %s" % (s, d), tf.cast(placeholders[s], tf.as_dtype(d))))
    init = tf.group(*init_ops)


# TensorFlow's bfloat16 -> uint8/uint16 Cast of a negative value is implementation-defined:
# its vectorized loop saturates (0), its scalar loop (small tensors like these) wraps;
# ferroflow saturates. Only the non-negative elements are compared.
BF16_TO_UNSIGNED = ["cast bfloat16 -> " + d for d in ("uint8", "uint16", "quint8", "quint16")]


def same(a, b, rtol=0.0):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind in "fc" or a.dtype.name == "bfloat16":
        a, b = a.astype(np.complex128), b.astype(np.complex128)
        if rtol:
            return np.allclose(a, b, rtol=rtol, atol=0, equal_nan=True)
        return np.array_equal(a, b, equal_nan=True)
    if a.dtype.names:  # quantized: structured numpy dtypes
        return a.tobytes() == b.tobytes()
    return np.array_equal(a, b)


def run_all(target):
    with tf.compat.v1.Session(target, graph=g) as sess:
        sess.run(init)
        # Reads before any assign, then everything (assigns included) in one step each.
        reads = sess.run([t for label, t in checks if label.endswith("var read")], feeds)
        rest = [sess.run(t, feeds) for label, t in checks]
        return reads, rest


server = ffcluster.Server("--port", "0")
print("server ready in %.3f s at %s" % (server.ready_seconds, server.target))
try:
    local_reads, local = run_all("")
    ff_reads, ff = run_all(server.target)
    bad = []
    for a, b, label in zip(local_reads, ff_reads, [lb for lb, _ in checks if lb.endswith("var read")]):
        if not same(a, b):
            bad.append("%s (initial): TensorFlow %r, ferroflow %r" % (label, a, b))
    nonneg = feeds[placeholders["bfloat16"]].astype(np.float32) >= 0
    for (label, _), a, b in zip(checks, local, ff):
        if label in BF16_TO_UNSIGNED:
            a, b = np.asarray(a)[nonneg], np.asarray(b)[nonneg]
        # Complex division: TensorFlow's (Eigen's) algorithm rounds differently in the last bits.
        rtol = 1e-6 if label.startswith("complex") and label.endswith("div") else 0.0
        if not same(a, b, rtol):
            bad.append("%s: TensorFlow %r %s, ferroflow %r %s" % (label, a, np.asarray(a).dtype, b, np.asarray(b).dtype))
    if bad:
        print("\n".join(bad))
        raise SystemExit("test_dtypes: %d of %d checks differ" % (len(bad), len(checks)))
    print("test_dtypes: %d checks over %d dtypes: OK" % (len(checks), len(ALL)))
finally:
    server.kill()
