"""Golden values for the dtypes beyond float32/float64/int32/int64/uint8/bool: Cast between
every pair of numeric types (and bool), and the basic arithmetic, comparisons and reductions
on half, bfloat16, the narrow integers and complex (TensorFlow 2.21, eager raw ops, CPU).

Run once with the venv: `.venv/bin/python scripts/golden/dtypes.py`; writes
crates/kernels/tests/golden/dtypes.json.

Inputs stay where TensorFlow's CPU Cast is well defined (its vectorized and scalar loops
agree): out-of-range float -> unsigned casts are unit-tested in ferroflow instead."""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

sys.path.append(_HERE)
from common import tensor, with_tolerance, write  # noqa: E402

R = tf.raw_ops
cases = []

TYPES = ["float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
         "uint16", "uint32", "uint64", "complex64", "complex128", "bool"]


def np_type(name):
    return tf.dtypes.as_dtype(name).as_numpy_dtype


def ty(name):
    return {"type": name}


def add(name, op, attrs, inputs, kwargs, rtol=None, atol=None):
    out = getattr(R, op)(**{k: tf.constant(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()})
    c = {"name": name, "op": op, "attrs": attrs, "inputs": [tensor(x) for x in inputs],
         "outputs": [tensor(out.numpy())]}
    cases.append(with_tolerance(c, rtol, atol))


def sample(name):
    """Eight values of a type, exercising rounding, sign and wrapping."""
    if name == "bool":
        return np.array([True, False, True, True, False, False, True, False])
    if name.startswith("complex"):
        return np.array([0, 1.5 - 2j, -2.75 + 0.5j, 100.25j, 7.9 + 7.9j, -0.5, 42 - 1j, 1j], np_type(name))
    if name.startswith("float") or name == "bfloat16":
        return np.array([0.0, 1.5, -2.75, 100.25, 7.9, -0.5, 300.6, 65519.0], np.float64).astype(np_type(name))
    if name.startswith("int"):
        big = {"int8": 127, "int16": 32767, "int32": 2**31 - 1, "int64": 2**40 + 1}[name]
        return np.array([0, 1, -2, 100, big, -128, 42, 3], np_type(name))
    big = {"uint8": 255, "uint16": 65535, "uint32": 2**32 - 1, "uint64": 2**63 + 2**41 + 1}[name]
    return np.array([0, 1, 2, 100, big, 200, 42, 3], np_type(name))


for src in TYPES:
    x = sample(src)
    for dst in TYPES:
        if src != dst:
            add("Cast_%s_%s" % (src, dst), "Cast", {"SrcT": ty(src), "DstT": ty(dst), "Truncate": {"b": False}},
                [x], {"x": x, "DstT": tf.dtypes.as_dtype(dst)}, rtol=0, atol=0)

rs = np.random.RandomState(7)


def rand(name, shape):
    if name.startswith("complex"):
        return (rs.randint(-8, 9, shape) + 1j * rs.randint(-8, 9, shape)).astype(np_type(name)) / 2
    if name in ("float16", "bfloat16"):
        return (rs.randint(-64, 65, shape) / 8.0).astype(np_type(name))
    if name.startswith("float"):
        return rs.uniform(-5, 5, shape).astype(np_type(name))
    info = np.iinfo(np_type(name))
    return rs.randint(max(info.min, -100), min(info.max, 200) + 1, shape).astype(np_type(name))


ARITH = ["float16", "bfloat16", "int8", "uint16", "complex64", "int16", "uint32", "uint64", "complex128"]
for name in ARITH:
    cplx = name.startswith("complex")
    a, b = rand(name, [2, 3]), rand(name, [3])
    if not name.startswith(("float", "bfloat", "complex")):
        b[b == 0] = 3
    ops = ["AddV2", "Sub", "Mul", "Div"] + ([] if cplx else ["Maximum", "Minimum", "Less", "GreaterEqual"])
    ops += ["Equal", "NotEqual"]
    if name in ("float16", "bfloat16") or cplx:
        ops.append("RealDiv")
    if name in ("float16", "bfloat16", "int8", "int16", "complex64", "complex128"):
        ops.append("Add")
    if cplx:
        b = np.where(b == 0, np.array(1 + 1j, b.dtype), b)
    for op in ops:
        add("%s_%s" % (op, name), op, {"T": ty(name)}, [a, b], {"x": a, "y": b},
            rtol=1e-6 if cplx and op in ("Div", "RealDiv") else 0, atol=0)
    unary = ["Square"] + (["Neg"] if name in ("float16", "bfloat16", "int8", "int16") or cplx else [])
    unary += ["Abs"] if name in ("float16", "bfloat16", "int8", "int16") else []
    for op in unary:
        add("%s_%s" % (op, name), op, {"T": ty(name)}, [a], {"x": a}, rtol=0, atol=0)
    axes = np.array([0], np.int32)
    reductions = ["Sum", "Mean", "Prod"] + ([] if cplx else ["Max", "Min"])
    for op in reductions:
        add("%s_%s" % (op, name), op, {"T": ty(name), "Tidx": ty("int32"), "keep_dims": {"b": False}},
            [a, axes], {"input": a, "axis": axes}, rtol=1e-6 if cplx else 0, atol=0)

write("dtypes", cases)
