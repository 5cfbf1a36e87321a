"""Golden values for the element-wise math, activation and special-function kernels added
by the math_ext family, computed by TensorFlow 2.21 (tf.raw_ops, CPU).

Run once with the venv from the repo root (see common.py's header):
`.venv/bin/python -P -c "import sys; sys.path.append('scripts/golden'); __file__='scripts/golden/math_ext.py'; exec(open(__file__).read())"`
writes crates/kernels/tests/golden/math_ext.json."""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from common import tensor, with_tolerance, write  # noqa: E402

R = tf.raw_ops
rng = np.random.RandomState(20261202)
cases = []
NP = {"float32": np.float32, "float64": np.float64, "float16": np.float16, "bfloat16": tf.bfloat16.as_numpy_dtype}
INT = {"int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64, "uint8": np.uint8,
       "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64}


SKIPPED = set()


def add(name, op, inputs, kwargs, attrs=None, rtol=None, atol=None):
    """Runs `tf.raw_ops.<op>(**kwargs)` and records the case (skipped when TensorFlow has no
    CPU kernel for the dtype; ferroflow's kernel still computes it, in float32)."""
    try:
        out = getattr(R, op)(**{k: (tf.constant(v) if isinstance(v, np.ndarray) else v) for k, v in kwargs.items()})
    except tf.errors.NotFoundError:
        SKIPPED.add("%s[%s]" % (op, inputs[0].dtype))
        return
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    dt = str(inputs[0].dtype)
    c = {"name": name, "op": op, "attrs": dict({"T": {"type": dt}}, **(attrs or {})),
         "inputs": [tensor(x) for x in inputs], "outputs": [tensor(o.numpy()) for o in outs]}
    cases.append(with_tolerance(c, rtol, atol))


def tol(dt, r32=2e-6, r64=1e-12):
    """Tolerances per dtype: (rtol, atol)."""
    return {"float32": (r32, 1e-6), "float64": (r64, 1e-13), "float16": (2e-3, 1e-3),
            "bfloat16": (1.6e-2, 1e-2)}[dt]


def arr(dt, v):
    return np.array(v, dtype=NP[dt])


SPECIAL = [0.0, -0.0, np.nan, np.inf, -np.inf]

# --- Activations and their gradient ops ---
for dt in ["float32", "float64", "float16", "bfloat16"]:
    r, a = tol(dt)
    x = arr(dt, np.concatenate([rng.uniform(-8, 8, 12), [-40, -35, -34, -16, -13.9, -14, 0, 13.9, 14, 16, 34, 35, 40,
                                                      -5, 5, 4.9, -4.9, np.nan]]).reshape(3, 10))
    g = arr(dt, rng.uniform(-2, 2, x.shape))
    for op in ["Softplus", "Softsign", "Selu"]:
        add("%s_%s" % (op, dt), op, [x], {"features": x}, rtol=r, atol=a)
    add("SoftplusGrad_%s" % dt, "SoftplusGrad", [g, x], {"gradients": g, "features": x}, rtol=r, atol=a)
    add("SoftsignGrad_%s" % dt, "SoftsignGrad", [g, x], {"gradients": g, "features": x}, rtol=r, atol=a)
    y = R.Selu(features=tf.constant(x)).numpy()
    add("SeluGrad_%s" % dt, "SeluGrad", [g, y], {"gradients": g, "outputs": y}, rtol=r, atol=a)
    for alpha in [0.2, 0.01, 1.5, -0.5]:
        at = {"alpha": {"f": alpha}}
        add("LeakyRelu_%s_%s" % (dt, alpha), "LeakyRelu", [x], {"features": x, "alpha": alpha}, at, rtol=r, atol=a)
        add("LeakyReluGrad_%s_%s" % (dt, alpha), "LeakyReluGrad", [g, x],
            {"gradients": g, "features": x, "alpha": alpha}, at, rtol=r, atol=a)
    e = arr(dt, np.zeros([0, 3]))
    add("Softplus_empty_%s" % dt, "Softplus", [e], {"features": e})
    add("SeluGrad_empty_%s" % dt, "SeluGrad", [e, e], {"gradients": e, "outputs": e})

# --- Unary math ---
DOMAIN = {
    "Asin": (-1, 1), "Acos": (-1, 1), "Atanh": (-1, 1), "Erfinv": (-1, 1), "Ndtri": (0, 1), "Acosh": (1, 20),
    "Tan": (-1.5, 1.5), "Sinh": (-20, 20), "Cosh": (-20, 20), "Expm1": (-20, 20), "Lgamma": (-10, 30),
    "Digamma": (-10, 30),
}
EXTRA = {
    "Erfinv": [-1, 1, 1.5, -1.5, 0.999999, -0.9999999, 1e-30, 0.5, -0.5],
    "Ndtri": [0, 1, 1.5, -0.1, 0.5, 1e-30, 0.999999, 1e-10, 0.9999],
    "Erf": [-3.9, 3.9, 4.1, 1e-20, -1e-3, 6, -6], "Erfc": [-3, 10, 30, 0.5, 26, 1e-20],
    "Lgamma": [-1, -2, -2.5, 1, 2, 1e-8, -1e-8, 1e30, -1e30, 0.5, 3.0],
    "Digamma": [-1, -2, -2.5, -0.5, 1, 1e-8, -1e-8, 1e15, 6, 10, 100, -10.25],
    "Rint": [0.5, 1.5, 2.5, -0.5, -1.5, 3.7, -2.2, 1e20],
    "Expm1": [1e-10, -1e-10, 700, -700, 88, 89],
    "Asinh": [1e10, -1e10, 1e-10], "Acosh": [1, 0.5, 1e10], "Atanh": [1, -1, 2, 1e-10],
    "Sin": [1e6, -3.14159], "Cos": [1e6], "Tan": [1.5707], "Asin": [1.5], "Acos": [-1.5, 1],
}
for op in ["Expm1", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh",
           "Erf", "Erfc", "Erfinv", "Ndtri", "Lgamma", "Digamma", "Rint"]:
    lo, hi = DOMAIN.get(op, (-5, 5))
    base = np.concatenate([rng.uniform(lo, hi, 16), EXTRA.get(op, []), SPECIAL])
    for dt in ["float32", "float64", "float16", "bfloat16"]:
        r, a = tol(dt, r32=4e-6 if op in ("Lgamma", "Digamma") else 2e-6, r64=1e-11)
        v = base
        if dt in ("float16", "bfloat16"):
            v = base[np.abs(np.nan_to_num(base, posinf=0, neginf=0)) < 60000]
        x = arr(dt, v)
        if op in ("Lgamma", "Digamma") and dt == "float32":
            # Near the zeros of lgamma and digamma relative error is meaningless.
            a = 1e-5
        add("%s_%s" % (op, dt), op, [x], {"x": x}, rtol=r, atol=a)
    x = np.zeros([2, 0], np.float64)
    add("%s_empty" % op, op, [x], {"x": x})

for op in ["IsNan", "IsInf", "IsFinite"]:
    for dt in ["float32", "float64", "float16", "bfloat16"]:
        x = arr(dt, [0, -0.0, 1, np.nan, np.inf, -np.inf, -3, 1e-30]).reshape(2, 4)
        add("%s_%s" % (op, dt), op, [x], {"x": x})
for dt, t in INT.items():
    info = np.iinfo(t)
    x = np.array([0, 1, 5, info.max, info.min, 77], t)
    add("Invert_%s" % dt, "Invert", [x], {"x": x})

# --- L2Loss ---
for dt in ["float32", "float64", "float16", "bfloat16"]:
    r, a = tol(dt)
    x = arr(dt, rng.uniform(-3, 3, [4, 5]))
    add("L2Loss_%s" % dt, "L2Loss", [x], {"t": x}, rtol=r * 10, atol=a)
    e = arr(dt, np.zeros([0]))
    add("L2Loss_empty_%s" % dt, "L2Loss", [e], {"t": e})
x = rng.uniform(-1, 1, [64, 100]).astype(np.float32)
add("L2Loss_large_float32", "L2Loss", [x], {"t": x}, rtol=1e-5)

# --- EuclideanNorm ---
for dt in ["float32", "float64", "float16", "bfloat16"]:
    r, a = tol(dt)
    x = arr(dt, rng.uniform(-3, 3, [2, 3, 4]))
    for i, (axes, keep) in enumerate([([0], False), ([1, 2], True), ([-1], False), ([], False), ([0, 1, 2], False),
                                      (1, True)]):
        ax = np.array(axes, np.int32)
        add("EuclideanNorm_%s_%d" % (dt, i), "EuclideanNorm", [x, ax],
            {"input": x, "axis": ax, "keep_dims": keep},
            {"Tidx": {"type": "int32"}, "keep_dims": {"b": keep}}, rtol=r, atol=a)
e = np.zeros([0, 3], np.float32)
ax = np.array([0], np.int64)
add("EuclideanNorm_empty", "EuclideanNorm", [e, ax], {"input": e, "axis": ax, "keep_dims": False},
    {"Tidx": {"type": "int64"}, "keep_dims": {"b": False}})

# --- Binary float ops with broadcasting ---
SHAPES = [([3, 4], [3, 4]), ([2, 3], [3]), ([3, 1], [1, 4]), ([], [5]), ([0, 3], [3])]


def pair(op, lo, hi, lo2=None, hi2=None, extra=None):
    for dt in ["float32", "float64", "float16", "bfloat16"]:
        r, a = tol(dt, r32=4e-6, r64=1e-11)
        for i, (sa, sb) in enumerate(SHAPES):
            x = arr(dt, rng.uniform(lo, hi, sa))
            y = arr(dt, rng.uniform(lo if lo2 is None else lo2, hi if hi2 is None else hi2, sb))
            names = {"Atan2": ("y", "x"), "Igamma": ("a", "x"), "Igammac": ("a", "x")}.get(op, ("x", "y"))
            add("%s_%s_%d" % (op, dt, i), op, [x, y], {names[0]: x, names[1]: y}, rtol=r, atol=a)
        if extra is not None:
            xa, ya = extra
            x, y = arr(dt, xa), arr(dt, ya)
            names = {"Atan2": ("y", "x"), "Igamma": ("a", "x"), "Igammac": ("a", "x")}.get(op, ("x", "y"))
            # TensorFlow's float igamma loses ~1e-4 at a = 1000 (its double gives 0.62767894 for
            # P(1000, 1010), its float 0.6276175); ferroflow computes in double.
            rs = 2e-4 if op.startswith("Igamma") and dt == "float32" else r
            add("%s_%s_special" % (op, dt), op, [x, y], {names[0]: x, names[1]: y}, rtol=rs, atol=a)


pair("Atan2", -5, 5, extra=([0, -0.0, 1, 0, np.inf, -np.inf, np.nan, 1], [-0.0, -1, 0, 0, np.inf, 1, 1, np.nan]))
pair("Xlogy", -3, 3, 0.1, 5, extra=([0, 0, 1, np.nan, 0, 2, 0], [0, np.nan, 0, 1, -1, -1, np.inf]))
pair("Xlog1py", -3, 3, -0.9, 5, extra=([0, 0, 1, np.nan, 0, 2], [-1, np.nan, -1, 1, -2, -2]))
pair("Xdivy", -3, 3, 0.5, 5, extra=([0, 0, 1, np.nan, 0, -1], [0, np.nan, 0, 1, np.inf, 0]))
pair("MulNoNan", -3, 3, extra=([np.inf, np.nan, 2, -np.inf, 1], [0, 0, 3, 1, np.nan]))
pair("TruncateDiv", -9, 9, 0.5, 4, extra=([7.5, -7.5, 1, 0, -1], [2, 2, 0, 0, -0.0]))
pair("TruncateMod", -9, 9, 0.5, 4, extra=([7.5, -7.5, 1, np.inf], [2, 2, 0, 1]))
pair("Mod", -9, 9, -4, -0.5, extra=([7.5, -7.5, 1, 5], [2, 2, 0, np.inf]))
pair("Igamma", 0.1, 20, 0, 25, extra=([0, -1, 1, 2, 0.5, np.nan, 1, 1, np.inf, 3, 100, 1000],
                                      [1, 1, 0, 2, np.inf, 1, -1, np.nan, 1, np.inf, 100, 1010]))
pair("Igammac", 0.1, 20, 0, 25, extra=([0, -1, 1, 2, 0.5, np.nan, 1e-5, 0.1, 50], [1, 1, 0, 2, np.inf, 1, 1, 1e-5, 200]))

for dt in ["float32", "float64"]:
    r, a = tol(dt, r32=4e-6, r64=1e-10)
    for i, (sa, sb) in enumerate(SHAPES):
        a1 = arr(dt, rng.uniform(0.1, 20, sa))
        x1 = arr(dt, rng.uniform(0.1, 25, sb))
        add("IgammaGradA_%s_%d" % (dt, i), "IgammaGradA", [a1, x1], {"a": a1, "x": x1}, rtol=r * 10, atol=a)
        n = arr(dt, rng.randint(0, 5, sa))
        q = arr(dt, rng.uniform(0.2, 10, sb))
        add("Polygamma_%s_%d" % (dt, i), "Polygamma", [n, q], {"a": n, "x": q}, rtol=r, atol=a)
        s = arr(dt, rng.uniform(1.1, 8, sa))
        add("Zeta_%s_%d" % (dt, i), "Zeta", [s, q], {"x": s, "q": q}, rtol=r, atol=a)
        x1 = arr(dt, rng.uniform(-3, 3, sa))
        y1 = arr(dt, rng.uniform(-3, 3, sb))
        add("NextAfter_%s_%d" % (dt, i), "NextAfter", [x1, y1], {"x1": x1, "x2": y1}, rtol=0, atol=0)
    a1 = arr(dt, [1, 2, 0.5, 10, 100, 0, -1, 1, 3, 0.01])
    x1 = arr(dt, [1, 0.5, 3, 8, 110, 1, 1, 0, 50, 0.001])
    add("IgammaGradA_%s_special" % dt, "IgammaGradA", [a1, x1], {"a": a1, "x": x1}, rtol=r * 10, atol=a)
    n = arr(dt, [0, 1, 2, 1.5, -1, 3, 1, 1, 2, 1, 0])
    q = arr(dt, [1, 0, -1, 2, 2, -2.5, np.inf, 1e-3, -2.5, -1, -2.5])
    add("Polygamma_%s_special" % dt, "Polygamma", [n, q], {"a": n, "x": q}, rtol=r, atol=a)
    s = arr(dt, [1, 2, 0.5, 2, 2, 3, 2, 3, 3, 2, 2.5, 4, 50, np.nan])
    q = arr(dt, [1, 1, 1, 0, -1, -2.5, np.inf, -1, 0, -2.5, -2.5, 1e-3, 2, 1])
    add("Zeta_%s_special" % dt, "Zeta", [s, q], {"x": s, "q": q}, rtol=r, atol=a)
    x1 = arr(dt, [1, 0, np.nan, 1, -0.0, np.inf])
    y1 = arr(dt, [2, -1, 0, 1, 1, 0])
    add("NextAfter_%s_special" % dt, "NextAfter", [x1, y1], {"x1": x1, "x2": y1}, rtol=0, atol=0)
    # Betainc: same shapes, scalars mixed in, special values.
    a3 = arr(dt, rng.uniform(0.1, 10, [3, 4]))
    b3 = arr(dt, rng.uniform(0.1, 10, [3, 4]))
    x3 = arr(dt, rng.uniform(0, 1, [3, 4]))
    add("Betainc_%s" % dt, "Betainc", [a3, b3, x3], {"a": a3, "b": b3, "x": x3}, rtol=r * 10, atol=a)
    sa, sx = arr(dt, 2.5), arr(dt, 0.3)
    add("Betainc_%s_scalars" % dt, "Betainc", [sa, b3, sx], {"a": sa, "b": b3, "x": sx}, rtol=r * 10, atol=a)
    a3 = arr(dt, [1, 0, -1, 2, 1, np.nan, 0.5, 2, 1e-3, 50])
    b3 = arr(dt, [1, 1, 1, 3, 0, 1, 0.5, 2, 2, 60])
    x3 = arr(dt, [0.5, 0.5, 0.5, 1.5, 0.5, 0.5, 0.9, 1, 0, 0.45])
    add("Betainc_%s_special" % dt, "Betainc", [a3, b3, x3], {"a": a3, "b": b3, "x": x3}, rtol=r * 10, atol=a)

# --- Integer ops ---
for dt, t in INT.items():
    info = np.iinfo(t)
    signed = info.min < 0
    lo = -50 if signed else 0
    for i, (sa, sb) in enumerate(SHAPES):
        x = rng.randint(lo, 100, sa).astype(t)
        y = rng.randint(lo, 100, sb).astype(t)
        for op in ["BitwiseAnd", "BitwiseOr", "BitwiseXor"]:
            add("%s_%s_%d" % (op, dt, i), op, [x, y], {"x": x, "y": y})
    bits = info.bits
    x = np.array([1, 1, 1, 5, 3, info.max, info.min, 7, 100, 1], t)
    y = np.array([0, 3, bits - 1, bits, bits + 9, 1, 1, 2, 1, 2], t)
    if signed:
        x[7], y[9] = -8, -1
    for op in ["LeftShift", "RightShift"]:
        add("%s_%s" % (op, dt), op, [x, y], {"x": x, "y": y})
    if dt in ("int32", "int64") or dt in ("uint8", "uint16", "int16"):
        xs = np.array([7, 7, 9, 0, info.max, 100], t)
        ys = np.array([2, 3, 1, 5, 7, 13], t)
        if signed:
            xs = np.array([7, -7, 7, -7, info.min, 0], t)
            ys = np.array([2, 2, -2, -2, -1, 5], t)
        add("TruncateDiv_%s" % dt, "TruncateDiv", [xs, ys], {"x": xs, "y": ys})
        if dt in ("int32", "int64"):
            add("TruncateMod_%s" % dt, "TruncateMod", [xs, ys], {"x": xs, "y": ys})
            add("Mod_%s" % dt, "Mod", [xs, ys], {"x": xs, "y": ys})
            y1 = np.array(3, t)
            add("Mod_%s_bcast" % dt, "Mod", [xs, y1], {"x": xs, "y": y1})

# --- ApproximateEqual ---
for dt in ["float32", "float64"]:
    if dt in INT:
        x = np.array([1, 5, -3, 7], INT[dt])
        y = np.array([1, 6, -3, 9], INT[dt])
        tols = [1e-5, 1.5, 2.5]
    else:
        x = arr(dt, [1, 1, np.nan, 2, 0.5, np.inf])
        y = arr(dt, [1.00001, 1.1, np.nan, 2.05, 0.5, np.inf])
        tols = [1e-5, 1e-4, 0.1]
    for tl in tols:
        add("ApproximateEqual_%s_%s" % (dt, tl), "ApproximateEqual", [x, y], {"x": x, "y": y, "tolerance": tl},
            {"tolerance": {"f": tl}})

print("no TensorFlow CPU kernel:", " ".join(sorted(SKIPPED)))
write("math_ext", cases)
