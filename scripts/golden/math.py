"""Golden values for the math kernels, computed by TensorFlow 2.21 (tf.raw_ops, CPU).

Run once with the venv: `.venv/bin/python scripts/golden/math.py`; writes
crates/kernels/tests/golden/math.json.

Not covered on purpose: Round on integers (TF 2.21 returns 0 for every integer, a bug; ferroflow
returns the input, as documented) and string inputs (the golden format has no strings; unit
tests cover them)."""
import importlib.util
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# This file is named math.py: drop its directory from the import path so that it does not
# shadow the standard library's `math`, and load common.py by path.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

_spec = importlib.util.spec_from_file_location("golden_common", os.path.join(_HERE, "common.py"))
_common = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_common)
tensor, with_tolerance, write = _common.tensor, _common.with_tolerance, _common.write

R = tf.raw_ops
rng = np.random.RandomState(20240521)
cases = []

NP = {"float32": np.float32, "float64": np.float64, "int32": np.int32, "int64": np.int64,
      "uint8": np.uint8, "bool": np.bool_}


def ty(name):
    return {"type": name}


def add(name, op, attrs, inputs, kwargs, rtol=None, atol=None):
    """Runs `tf.raw_ops.<op>(**kwargs)` and records the case."""
    def const(v):
        if isinstance(v, np.ndarray):
            return tf.constant(v)  # keeps the numpy dtype (no default-type conversion)
        if isinstance(v, list):
            return [const(x) for x in v]
        return v
    out = getattr(R, op)(**{k: const(v) for k, v in kwargs.items()})
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    c = {"name": name, "op": op, "attrs": attrs, "inputs": [tensor(x) for x in inputs],
         "outputs": [tensor(o.numpy()) for o in outs]}
    cases.append(with_tolerance(c, rtol, atol))


def rand(dtype, shape, lo=-5, hi=5, nonzero=False):
    if dtype in ("float32", "float64"):
        a = rng.uniform(lo, hi, size=shape).astype(NP[dtype])
        if nonzero:
            a[np.abs(a) < 0.1] = 0.5
        return a
    if dtype == "bool":
        return rng.rand(*shape) > 0.5
    if dtype == "uint8":
        lo = max(lo, 1 if nonzero else 0)
        return rng.randint(lo, max(hi, lo + 1) + 1, size=shape).astype(np.uint8)
    a = rng.randint(lo, hi + 1, size=shape).astype(NP[dtype])
    if nonzero:
        a[a == 0] = 3
    return a


BCAST_SHAPES = [
    ([3, 4], [3, 4]),
    ([], [5]),
    ([5], []),
    ([4, 5], [5]),
    ([4, 5], [4, 1]),
    ([2, 1, 3], [1, 4, 1]),
    ([2, 3, 4], [3, 1]),
    ([2, 3, 1, 2], [3, 5, 1]),
]

NUM = ["float32", "float64", "int32", "int64", "uint8"]
SIGNED = ["float32", "float64", "int32", "int64"]
FLOATS = ["float32", "float64"]

BINARY = {
    "Add": NUM, "AddV2": NUM, "Sub": NUM, "Mul": NUM, "RealDiv": FLOATS, "Div": NUM,
    "Maximum": NUM, "Minimum": NUM, "Pow": SIGNED, "FloorDiv": NUM, "FloorMod": NUM,
    "SquaredDifference": SIGNED, "DivNoNan": FLOATS,
}

for op, types in BINARY.items():
    for dt in types:
        shapes = BCAST_SHAPES if dt in ("float32", "int32") else BCAST_SHAPES[::3]
        for sa, sb in shapes:
            divides = op in ("Div", "FloorDiv", "FloorMod", "RealDiv")
            if op == "Pow":
                if dt.startswith("int"):
                    a, b = rand(dt, sa, -4, 4), rand(dt, sb, 0, 6)
                else:
                    a, b = rand(dt, sa, 0.1, 3), rand(dt, sb, -3, 3)
            elif dt == "uint8":
                a, b = rand(dt, sa, 0, 250), rand(dt, sb, 0, 250, nonzero=divides)
                if op == "Sub":
                    a, b = rand(dt, sa, 0, 255), rand(dt, sb, 0, 255)
            else:
                a, b = rand(dt, sa), rand(dt, sb, nonzero=divides and dt.startswith("int"))
            if op == "DivNoNan":
                b = np.where(rng.rand(*sb) < 0.3, 0, b).astype(NP[dt])
            name = "%s_%s_%s_%s" % (op, dt, "x".join(map(str, sa)) or "s", "x".join(map(str, sb)) or "s")
            add(name, op, {"T": ty(dt)}, [a, b], {"x": a, "y": b}, rtol=1e-5 if dt != "float64" else 1e-12)

# Special float values.
sp = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.5, 3.0], np.float32)
sq = np.array([1.0, np.nan, 2.0, -0.0, 0.0, np.inf, -2.5, -np.inf], np.float32)
for op in ["Maximum", "Minimum", "Add", "Mul", "RealDiv", "FloorDiv", "FloorMod", "DivNoNan", "Pow"]:
    add(op + "_special", op, {"T": ty("float32")}, [sp, sq], {"x": sp, "y": sq})
# Integer edge cases: wrapping and floor semantics at the extremes.
mn = np.int32(-2**31)
ia = np.array([mn, mn, mn + 1, mn, 7, -7, 2**31 - 1, -9], np.int32)
ib = np.array([2, 3, 2, -3, mn, mn, 2, 4], np.int32)
for op in ["FloorDiv", "FloorMod", "Div", "Add", "Sub", "Mul", "SquaredDifference"]:
    add(op + "_int32_edges", op, {"T": ty("int32")}, [ia, ib], {"x": ia, "y": ib})
pa = np.array([2, 3, -2, 0, 0, -1, 7], np.int64)
pb = np.array([62, 40, 63, 0, 5, 7, 1], np.int64)
add("Pow_int64_wrap", "Pow", {"T": ty("int64")}, [pa, pb], {"x": pa, "y": pb})

# Comparisons (small integer ranges so ties occur).
for op in ["Greater", "GreaterEqual", "Less", "LessEqual", "Equal", "NotEqual"]:
    types = NUM + (["bool"] if op in ("Equal", "NotEqual") else [])
    for dt in types:
        for sa, sb in (BCAST_SHAPES if dt == "float32" else BCAST_SHAPES[:5:2]):
            if dt in FLOATS:
                a, b = rand(dt, sa, -2, 2).round(), rand(dt, sb, -2, 2).round()
            else:
                a, b = rand(dt, sa, 0, 3), rand(dt, sb, 0, 3)
            attrs = {"T": ty(dt)}
            kw = {"x": a, "y": b}
            if op in ("Equal", "NotEqual"):
                attrs["incompatible_shape_error"] = {"b": True}
            name = "%s_%s_%s_%s" % (op, dt, "x".join(map(str, sa)) or "s", "x".join(map(str, sb)) or "s")
            add(name, op, attrs, [a, b], kw)
    if op in ("Equal", "NotEqual"):
        x, y = np.array([1, 2], np.int32), np.array([1, 2, 3], np.int32)
        add(op + "_incompatible_scalar", op, {"T": ty("int32"), "incompatible_shape_error": {"b": False}},
            [x, y], {"x": x, "y": y, "incompatible_shape_error": False})
    add(op + "_special", op, {"T": ty("float32")} | (
        {"incompatible_shape_error": {"b": True}} if op in ("Equal", "NotEqual") else {}), [sp, sq],
        {"x": sp, "y": sq})

for op in ["LogicalAnd", "LogicalOr"]:
    for sa, sb in BCAST_SHAPES:
        a, b = rand("bool", sa), rand("bool", sb)
        add("%s_%s_%s" % (op, "x".join(map(str, sa)) or "s", "x".join(map(str, sb)) or "s"), op, {}, [a, b],
            {"x": a, "y": b})
lx = rand("bool", [3, 4])
add("LogicalNot", "LogicalNot", {}, [lx], {"x": lx})

# Unary.
UNARY = {
    "Neg": SIGNED, "Square": NUM, "Sqrt": FLOATS, "Rsqrt": FLOATS, "Exp": FLOATS, "Log": FLOATS,
    "Log1p": FLOATS, "Tanh": FLOATS, "Sigmoid": FLOATS, "Floor": FLOATS, "Ceil": FLOATS,
    "Round": FLOATS, "Abs": SIGNED, "Sign": SIGNED, "Reciprocal": FLOATS, "Inv": FLOATS,
}
for op, types in UNARY.items():
    for dt in types:
        for shape in ([2, 3, 4], [], [7]):
            if op in ("Sqrt", "Rsqrt", "Log", "Reciprocal", "Inv"):
                x = rand(dt, shape, 0.05, 20)
            elif op == "Log1p":
                x = rand(dt, shape, -0.9, 5)
            elif op == "Exp":
                x = rand(dt, shape, -20, 20)
            elif op in ("Tanh", "Sigmoid"):
                x = rand(dt, shape, -12, 12)
            elif op in ("Round", "Floor", "Ceil"):
                x = (rand(dt, shape, -8, 8) * 2).round() / 2 if dt in FLOATS else rand(dt, shape)
            elif dt == "uint8":
                x = rand(dt, shape, 0, 255)
            else:
                x = rand(dt, shape, -100, 100)
            name = "%s_%s_%s" % (op, dt, "x".join(map(str, shape)) or "s")
            add(name, op, {"T": ty(dt)}, [x], {"x": x}, rtol=2e-6 if dt == "float32" else 1e-12, atol=1e-7)
    if "float32" in types:
        add(op + "_special", op, {"T": ty("float32")}, [sp], {"x": sp}, atol=1e-7)
big = np.array([-100, -30, -17, -9, -1e-4, 1e-4, 0.3, 9, 17, 30, 100], np.float32)
for op in ["Tanh", "Sigmoid", "Exp"]:
    add(op + "_range", op, {"T": ty("float32")}, [big], {"x": big}, rtol=2e-6, atol=1e-30)
iedge = np.array([mn, -5, 0, 5, 2**31 - 1], np.int32)
for op in ["Neg", "Abs", "Sign", "Square"]:
    add(op + "_int32_edges", op, {"T": ty("int32")}, [iedge], {"x": iedge})

for op in ["TanhGrad", "SigmoidGrad", "SqrtGrad", "RsqrtGrad", "ReciprocalGrad", "InvGrad"]:
    for dt in FLOATS:
        y, dy = rand(dt, [3, 5], 0.1, 2), rand(dt, [3, 5])
        add("%s_%s" % (op, dt), op, {"T": ty(dt)}, [y, dy], {"y": y, "dy": dy})

# AddN.
for dt in NUM:
    for n in (1, 2, 3, 5):
        xs = [rand(dt, [3, 4], 0, 100) for _ in range(n)]
        add("AddN_%s_%d" % (dt, n), "AddN", {"T": ty(dt), "N": {"i": n}}, xs, {"inputs": xs})

# Select / SelectV2.
for dt in NUM + ["bool"]:
    t, e = rand(dt, [4, 3]), rand(dt, [4, 3])
    for cshape in ([], [4], [4, 3]):
        c = rand("bool", cshape)
        add("Select_%s_cond%d" % (dt, len(cshape)), "Select", {"T": ty(dt)}, [c, t, e],
            {"condition": c, "x": t, "y": e})
    tv, ev = rand(dt, [5]), rand(dt, [5])
    c = rand("bool", [5])
    add("Select_%s_vectors" % dt, "Select", {"T": ty(dt)}, [c, tv, ev], {"condition": c, "x": tv, "y": ev})
for dt in ["float32", "int64", "bool"]:
    for cs, ts, es in [([2, 1], [3], []), ([], [2, 3], [2, 3]), ([4, 3], [4, 3], [4, 3]), ([3], [2, 1], [1, 3]),
                       ([2, 1, 4], [3, 1], [1])]:
        c, t, e = rand("bool", cs), rand(dt, ts), rand(dt, es)
        add("SelectV2_%s_%s_%s_%s" % (dt, "x".join(map(str, cs)) or "s", "x".join(map(str, ts)) or "s",
                                      "x".join(map(str, es)) or "s"),
            "SelectV2", {"T": ty(dt)}, [c, t, e], {"condition": c, "t": t, "e": e})

# Cast: every pair, with truncation and out-of-range values.
CAST_SRC = {
    "float32": np.array([0.0, -0.0, 1.5, -1.5, 2.7, -2.7, 255.9, 300.0, -1.0, 1e10, -1e10, np.nan, 65.25],
                        np.float32),
    "float64": np.array([0.0, 1.5, -1.5, 2.9999999, -2.7, 255.9, 300.0, -1.0, 3e9, -3e9, 1e20, np.nan,
                         1.0000000001, 1e300], np.float64),
    "int32": np.array([0, 1, -1, 255, 256, 300, -300, 2**31 - 1, -2**31, 16777217], np.int32),
    "int64": np.array([0, 1, -1, 255, 300, 2**40 + 5, -2**33 - 1, 2**63 - 1, 9007199254740993], np.int64),
    "uint8": np.array([0, 1, 127, 128, 255], np.uint8),
    "bool": np.array([True, False, True]),
}
for src, x in CAST_SRC.items():
    for dst in NP:
        if src == dst:
            continue
        for trunc in ([False, True] if src == "float32" and dst == "int32" else [False]):
            add("Cast_%s_%s%s" % (src, dst, "_trunc" if trunc else ""), "Cast",
                {"SrcT": ty(src), "DstT": ty(dst), "Truncate": {"b": trunc}}, [x],
                {"x": x, "DstT": tf.as_dtype(dst), "Truncate": trunc})

# BroadcastGradientArgs.
for i, (a, b) in enumerate([([2, 1, 3], [3]), ([1, 1], [1]), ([0, 1], [1]), ([2, 3], [2, 3]), ([], []),
                            ([4, 1, 5, 1], [3, 1, 1]), ([1], [7, 1, 2]), ([5, 2], [])]):
    for dt in ("int32", "int64"):
        sa, sb = np.array(a, NP[dt]), np.array(b, NP[dt])
        add("BroadcastGradientArgs_%d_%s" % (i, dt), "BroadcastGradientArgs", {"T": ty(dt)}, [sa, sb],
            {"s0": sa, "s1": sb})

# Reductions.
AXES = [0, -1, [0, 2], [1], [-3, -1, 1], [], [0, 1, 2], [2, 0]]
for op in ["Sum", "Mean", "Max", "Min", "Prod"]:
    for dt in NUM:
        for axes in (AXES if dt == "float32" else AXES[:3] + AXES[5:6]):
            for keep in (False, True):
                lo, hi = (1, 3) if op == "Prod" else (0, 50)
                x = rand(dt, [3, 4, 5], lo, hi) if dt == "uint8" else rand(dt, [3, 4, 5], -hi, hi)
                if op == "Prod" and dt in FLOATS:
                    x = rand(dt, [3, 4, 5], 0.5, 1.5)
                ax = np.array(axes, np.int32)
                name = "%s_%s_%s_%s" % (op, dt, "_".join(map(str, np.atleast_1d(axes))) or "none",
                                        "keep" if keep else "drop")
                add(name, op, {"T": ty(dt), "Tidx": ty("int32"), "keep_dims": {"b": keep}}, [x, ax],
                    {"input": x, "axis": ax, "keep_dims": keep}, rtol=1e-5 if dt != "float64" else 1e-12)
    x = rand("float32", [2, 6, 3])
    ax = np.array([1, -1], np.int64)
    add(op + "_int64_axes", op, {"T": ty("float32"), "Tidx": ty("int64"), "keep_dims": {"b": True}}, [x, ax],
        {"input": x, "axis": ax, "keep_dims": True})
    x = rand("float32", [40, 90], 0, 1) if op != "Prod" else rand("float32", [40, 90], 0.99, 1.01)
    for axes in ((0, 1, [0, 1]) if op in ("Sum", "Mean") else ([0, 1],)):
        ax = np.array(axes, np.int32)
        add("%s_large_%s" % (op, "_".join(map(str, np.atleast_1d(axes)))), op,
            {"T": ty("float32"), "Tidx": ty("int32"), "keep_dims": {"b": False}}, [x, ax],
            {"input": x, "axis": ax, "keep_dims": False}, rtol=2e-5)
    xn = np.array([[1.0, np.nan, 2.0], [3.0, 4.0, -np.inf]], np.float32)
    for axes in (0, 1):
        ax = np.array(axes, np.int32)
        add("%s_special_%d" % (op, axes), op, {"T": ty("float32"), "Tidx": ty("int32"), "keep_dims": {"b": False}},
            [xn, ax], {"input": xn, "axis": ax, "keep_dims": False})
    for dt in ("float32", "int32", "uint8"):
        xe = np.zeros([0, 3], NP[dt])
        ax = np.array(0, np.int32)
        add("%s_empty_%s" % (op, dt), op, {"T": ty(dt), "Tidx": ty("int32"), "keep_dims": {"b": False}}, [xe, ax],
            {"input": xe, "axis": ax, "keep_dims": False})
xi = np.array([2**31 - 1, 2**31 - 1, 5], np.int32)
add("Mean_int32_wide", "Mean", {"T": ty("int32"), "Tidx": ty("int32"), "keep_dims": {"b": False}},
    [xi, np.array(0, np.int32)], {"input": xi, "axis": np.array(0, np.int32), "keep_dims": False})
xi = np.array([-7, -2, -2, 4], np.int64)
add("Mean_int64_trunc", "Mean", {"T": ty("int64"), "Tidx": ty("int32"), "keep_dims": {"b": False}},
    [xi, np.array(0, np.int32)], {"input": xi, "axis": np.array(0, np.int32), "keep_dims": False})

# ArgMax / ArgMin.
for op in ["ArgMax", "ArgMin"]:
    for dt in NUM + ["bool"]:
        x = rand(dt, [3, 4, 5], 0, 6)
        for d in (0, 1, 2, -1, -3):
            for out in ("int64", "int32"):
                if out == "int32" and d not in (1, -1):
                    continue
                dim = np.array(d, np.int32)
                add("%s_%s_%d_%s" % (op, dt, d, out), op,
                    {"T": ty(dt), "Tidx": ty("int32"), "output_type": ty(out)}, [x, dim],
                    {"input": x, "dimension": dim, "output_type": tf.as_dtype(out)})
    xn = np.array([[np.nan, 1.0, 2.0], [1.0, np.nan, 0.0], [np.nan] * 3, [-np.inf, -3.4028235e38, -np.inf]],
                  np.float32)
    dim = np.array(1, np.int64)
    add(op + "_special", op, {"T": ty("float32"), "Tidx": ty("int64"), "output_type": ty("int64")}, [xn, dim],
        {"input": xn, "dimension": dim, "output_type": tf.int64})
    xv = rand("float32", [700])
    dim = np.array(0, np.int32)
    add(op + "_vector", op, {"T": ty("float32"), "Tidx": ty("int32"), "output_type": ty("int64")}, [xv, dim],
        {"input": xv, "dimension": dim, "output_type": tf.int64})

write("math", cases)
