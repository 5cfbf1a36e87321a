"""Shared helpers for the golden-value generators (run once with the venv, from the repo
root: `.venv/bin/python -P -c "import sys; sys.path.append('scripts/golden');
__file__='scripts/golden/<family>.py'; exec(open(__file__).read())"` -- the generators
array.py, math.py and random.py would shadow the standard library if their directory came
first on sys.path). They run ops in TensorFlow 2.21 and write
crates/kernels/tests/golden/<family>.json in the format read by crates/kernels/tests/golden.rs.
The fixture generators (scripts/fixtures/fixture_io.py) use `num` and `tensor` too."""
import json
import math
import os
import re

import numpy as np

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "crates", "kernels", "tests", "golden")


def num(x):
    """A number as JSON: nan and infinities as strings."""
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


NAMES = ("float32", "float64", "int32", "int64", "uint8", "bool", "float16", "bfloat16", "int8",
         "int16", "uint16", "uint32", "uint64", "complex64", "complex128")


def tensor(a):
    """A value as JSON: complex data is flat (real, imaginary) pairs; strings are text, or
    hex bytes under "hex" when one of them is not UTF-8."""
    # A scalar string comes back as bytes: an object array keeps its trailing NUL bytes
    # (numpy's fixed-width "S" dtype drops them).
    a = np.array(a, dtype=object) if isinstance(a, bytes) else np.asarray(a)
    if a.dtype.kind in "OSU":
        raw = [x if isinstance(x, bytes) else str(x).encode() for x in a.reshape(-1)]
        try:
            return {"dtype": "string", "shape": list(a.shape), "data": [x.decode() for x in raw]}
        except UnicodeDecodeError:
            return {"dtype": "string", "shape": list(a.shape), "hex": [x.hex() for x in raw]}
    name = str(a.dtype)
    assert name in NAMES, name
    if a.dtype.kind in "iub":
        data = [int(v) for v in a.reshape(-1)]
    elif a.dtype.kind == "c":
        data = [num(p) for v in a.reshape(-1) for p in (v.real, v.imag)]
    else:
        data = [num(v) for v in a.reshape(-1)]
    return {"dtype": name, "shape": list(a.shape), "data": data}


def dt(a):
    """The dtype name of a value as the case format writes it ("string" for text)."""
    a = np.asarray(a)
    return "string" if a.dtype.kind in "OSU" else str(a.dtype)


def blob(b):
    """A scalar string input that keeps its trailing NUL bytes."""
    return np.array(b, dtype=object)


def random_values(rng, dtype, n, words, high, normal_floats=False):
    """`n` random values of `dtype` from `rng`: strings drawn from `words`, bools fair coins,
    floats standard normal when `normal_floats`, anything else integers in [0, high)."""
    if dtype == "string":
        return np.array(words, dtype=object)[rng.randint(0, len(words), n)]
    if dtype == "bool":
        return rng.rand(n) < 0.5
    if normal_floats and dtype.startswith("float"):
        return rng.randn(n).astype(dtype)
    return rng.randint(0, high, n).astype(dtype)


def write(family, cases):
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, family + ".json")
    with open(path, "w") as f:
        json.dump({"generator": "scripts/golden/%s.py (TensorFlow 2.21)" % family, "cases": cases}, f)
    print("wrote", len(cases), "cases to", path)


def attr_json(v):
    """A plain attr value as the golden case format writes it."""
    if isinstance(v, bool):
        return {"b": v}
    if isinstance(v, int):
        return {"i": v}
    if isinstance(v, float):
        return {"f": v}
    if isinstance(v, str):
        return {"s": v}
    if isinstance(v, tuple):
        return {"shape": list(v)}
    if isinstance(v, list) and v and isinstance(v[0], str):
        return {"list_s": v}
    if isinstance(v, list) and v and isinstance(v[0], float):
        return {"list_f": v}
    if isinstance(v, list):
        return {"list_i": v}
    raise ValueError(v)


def with_tolerance(c, rtol=None, atol=None):
    """Case `c` with its own tolerances, where given."""
    if rtol is not None:
        c["rtol"] = rtol
    if atol is not None:
        c["atol"] = atol
    return c


# Number attrs of list inputs: TensorFlow infers them from the lists.
NUMBER_ATTRS = {"N", "num_row_partition_tensors", "RAGGED_RANK"}
OUT_TYPES = {"out_type", "index_type", "Tout", "output_type", "dtype", "out_idx", "output_dtype", "Targmax",
             "Tsplits"}


def raw_op_case(name, op, args, types, attrs=None, py=None, rtol=None, atol=None):
    """A case running `tf.raw_ops.<op>`. args: ordered (input name, array or list of
    arrays); types: type attrs {attr: dtype name}; attrs: the other attrs, passed to
    TensorFlow as well (every attr is listed, since the Rust test fills no defaults); py:
    Python keyword names where they differ from the op's."""
    import tensorflow as tf

    attrs = attrs or {}

    def arr(v):
        return [tf.constant(np.asarray(x)) for x in v] if isinstance(v, list) else tf.constant(np.asarray(v))

    kw = {(py or {}).get(k, k): arr(v) for k, v in args}
    pyattrs = {k: (list(v) if isinstance(v, tuple) else v) for k, v in attrs.items() if k not in NUMBER_ATTRS}
    kw.update({(py or {}).get(k, k): v for k, v in pyattrs.items()})
    # Output-type attrs are not inferred from the inputs: TensorFlow must be told them too.
    kw.update({(py or {}).get(k, k): tf.as_dtype(v) for k, v in types.items() if k in OUT_TYPES})
    while True:
        try:
            out = getattr(tf.raw_ops, op)(**kw)
            break
        except TypeError as e:
            # A type attr TensorFlow infers from an input (not an output-only one): drop it.
            bad = re.search(r"unexpected keyword argument '(\w+)'", str(e))
            if not bad or bad.group(1) not in kw:
                raise
            del kw[bad.group(1)]
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    inputs = []
    for _, v in args:
        inputs.extend(v if isinstance(v, list) else [v])
    ja = {k: attr_json(v) for k, v in attrs.items()}
    for k, v in types.items():
        ja[k] = {"type": v}
    c = {"name": name, "op": op, "attrs": ja, "inputs": [tensor(np.asarray(i)) for i in inputs],
         "outputs": [tensor(o.numpy()) for o in outs]}
    return with_tolerance(c, rtol, atol)


def io_case(name, op, attrs, inputs, outputs, tol):
    """A case from its attrs (as JSON), inputs, outputs (one, or a list) and tolerances."""
    outs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
    c = {"name": name, "op": op, "attrs": attrs, "inputs": [tensor(np.asarray(i)) for i in inputs],
         "outputs": [tensor(np.asarray(o)) for o in outs]}
    c.update(tol)
    return c


def case_list(make=raw_op_case):
    """A generator's list of cases, and its `case(...)`: appends `make(...)` to the list."""
    cases = []
    return cases, lambda *args, **kwargs: cases.append(make(*args, **kwargs))


def print_error_classes(bad):
    """Runs each (what, thunk) of `bad` and prints the error class and first line TensorFlow
    gives (the kernel tests assert the same codes)."""
    import tensorflow as tf

    for what, f in bad:
        try:
            f()
            print(what, "-> no error")
        except tf.errors.OpError as e:
            print(what, "->", type(e).__name__, ":", e.message.splitlines()[0][:160])
