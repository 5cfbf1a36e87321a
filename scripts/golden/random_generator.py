"""Golden values for the ops of tf.random.Generator from TensorFlow 2.21's CPU kernels,
written to crates/kernels/tests/golden/stateful/random_generator.json: sequences of
RngReadAndSkip, RngSkip, StatefulUniform, StatefulStandardNormalV2, StatefulTruncatedNormal,
StatefulUniformInt, StatefulUniformFullInt and StatefulRandomBinomial on one int64 state
variable, each step with its draws (or TensorFlow's error class) and the state after it.
Run it as every generator here runs (common.py's header says how)."""
import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from common import OUT, tensor  # noqa: E402

R = tf.raw_ops
rng = np.random.RandomState(20261206)
CODES = {tf.errors.InvalidArgumentError: "InvalidArgument", tf.errors.UnimplementedError: "Unimplemented",
         tf.errors.FailedPreconditionError: "FailedPrecondition", tf.errors.NotFoundError: "NotFound"}
cases = []


def step(var, op, args, attrs):
    """Runs raw op `op` on the state variable and `args` ((name, array)); returns the step."""
    kw = {k: tf.constant(v) for k, v in args}
    kw.update({k: tf.as_dtype(v) for k, v in attrs.items() if k == "dtype"})
    s = {"op": op, "attrs": {k: {"type": v} for k, v in attrs.items()}, "inputs": [tensor(np.asarray(v)) for _, v in args]}
    if op in ("StatefulUniformInt", "StatefulRandomBinomial"):
        kw.pop("dtype", None) if op == "StatefulUniformInt" else None
    try:
        out = getattr(R, op)(resource=var.handle, **kw)
        s["outputs"] = [] if out is None or isinstance(out, tf.Operation) else [tensor(out.numpy())]
    except tuple(CODES) as e:
        s["error"] = CODES[type(e)]
        print(op, "->", s["error"], e.message.splitlines()[0][:120])
    s["state"] = tensor(var.numpy())
    return s


def sequence(name, state, steps, dtype=np.int64):
    var = tf.Variable(np.asarray(state, dtype))
    cases.append({"name": name, "state": tensor(var.numpy()),
                  "steps": [step(var, *st) for st in steps]})


def shape(*d, dt=np.int64):
    return ("shape", np.array(d, dt))


ALG = ("algorithm", np.int64(1))


def ras(alg, delta):
    return ("RngReadAndSkip", [("alg", np.int32(alg)), ("delta", np.uint64(delta))], {})


def dist(op, dtype, *dims, dt=np.int64):
    return (op, [ALG, shape(*dims, dt=dt)], {"dtype": dtype, "shape_dtype": np.dtype(dt).name})


def uint(dtype, lo, hi, *dims):
    np_t = np.dtype(dtype).type
    return ("StatefulUniformInt", [ALG, shape(*dims), ("minval", np_t(lo)), ("maxval", np_t(hi))],
            {"dtype": dtype, "shape_dtype": "int64"})


def binom(counts, probs, dims, t="float64", out="int64"):
    return ("StatefulRandomBinomial", [ALG, ("shape", np.array(dims, np.int32)), ("counts", np.asarray(counts, t)),
                                       ("probs", np.asarray(probs, t))], {"S": "int32", "T": t, "dtype": out})


# RngReadAndSkip: Philox and auto-select, carries across the low word, wrapping deltas,
# (A state longer than 3 words is left out: TensorFlow 2.21's kernel then writes past its
# output and corrupts its heap.)
sequence("read_and_skip_seq", [7, 0, 3], [ras(1, 12), ras(3, 1), ras(1, 0), ras(1, 2**56 + 3)])
sequence("read_and_skip_carry", [-1, 5, 11], [ras(1, 1), ras(1, 2**64 - 1), ras(3, 2**57)])
sequence("read_and_skip_high_carry", [-256, -1, 9], [ras(1, 1), ras(1, 3)])
# Errors: unknown algorithms, ThreeFry (XLA only), short states, a matrix, a float state.
sequence("read_and_skip_bad_alg", [1, 2, 3], [ras(0, 1), ras(5, 1), ras(1, 1)])
sequence("read_and_skip_threefry", [1, 2], [ras(2, 3)])
sequence("read_and_skip_threefry_3", [1, 2, 3], [ras(2, 3)])
sequence("read_and_skip_short", [1, 2], [ras(1, 3), ras(5, 3)])
sequence("read_and_skip_matrix", [[1, 2, 3]], [ras(1, 3)])
sequence("read_and_skip_float", [1.0, 2.0, 3.0], [ras(1, 3), ras(5, 3)], dtype=np.float32)
# RngSkip.
sequence("skip_seq", [1, 2, 3], [("RngSkip", [ALG, ("delta", np.int64(5))], {}),
                                 ("RngSkip", [ALG, ("delta", np.int64(-1))], {}),
                                 ("RngSkip", [("algorithm", np.int64(3)), ("delta", np.int64(1))], {})])
# The stateful samplers, interleaved on one state, several seeds-as-states.
for i, st in enumerate([[0, 0, 7], [12345, 0, 987654321], [-3, 77, -2**62]]):
    sequence("samplers_%d" % i, st, [
        dist("StatefulUniform", "float32", 3, 4),
        dist("StatefulStandardNormalV2", "float32", 5),
        dist("StatefulTruncatedNormal", "float64", 2, 3, dt=np.int32),
        dist("StatefulUniform", "float64", 7),
        dist("StatefulUniformFullInt", "int64", 3),
        dist("StatefulUniformFullInt", "uint32", 5),
        dist("StatefulUniformFullInt", "uint64", 2),
        dist("StatefulUniformFullInt", "int32", 9),
        uint("int32", -5, 10, 11),
        uint("int64", -2**40, 2**40, 4),
        dist("StatefulStandardNormalV2", "float64", 0),
        dist("StatefulTruncatedNormal", "float32", 130),
        ras(1, 4),
        dist("StatefulStandardNormalV2", "float32", 2, 2),
    ])
sequence("samplers_errors", [1, 2, 3], [
    uint("int32", 5, 5, 3),
    uint("int64", 9, 1, 0),
    ("StatefulUniform", [("algorithm", np.int64(2)), shape(2)], {"dtype": "float32", "shape_dtype": "int64"}),
    ("StatefulUniform", [("algorithm", np.int64(3)), shape(2)], {"dtype": "float32", "shape_dtype": "int64"}),
    ("StatefulUniform", [("algorithm", np.int32(1)), shape(2)], {"dtype": "float32", "shape_dtype": "int64"}),
    ("StatefulUniform", [ALG, shape(-1)], {"dtype": "float32", "shape_dtype": "int64"}),
    dist("StatefulUniform", "float32", 1),
])
sequence("samplers_short_state", [1, 2], [dist("StatefulUniform", "float32", 2),
                                         ("StatefulUniform", [("algorithm", np.int64(4)), shape(2)],
                                          {"dtype": "float32", "shape_dtype": "int64"})])
# The binomial sampler: BTRS and inversion, probabilities above 0.5, batches and samples.
# Each sequence starts with a skip of nothing: TensorFlow's binomial kernel writes the moved
# counter to the buffer it had before copying a shared one (here the variable's initial
# value, still held by the eager runtime), so on a fresh variable the move would be lost.
# In graph mode (the Generator after its initializer) the counter moves as here.
sequence("binomial", [3, 0, 42], [
    ras(1, 0),
    binom([10.0, 20.0, 30.0], [0.5, 0.5, 0.5], [3]),
    binom([100.0], [0.3], [4, 1]),
    binom([[5.0], [50.0]], [0.2, 0.9, 0.05], [3, 2, 3], t="float32", out="float32"),
    binom(7.0, 0.75, [6], out="int32"),
    binom([1.0, 2.0], [0.5, 0.5], [0, 2]),
    binom([1000.0], [0.01], [5, 1], out="float64"),
])
sequence("binomial_errors", [3, 0, 42], [
    ras(1, 0),
    binom([1.0, 2.0], [0.5, 0.5, 0.5], [3]),
    binom([1.0, 2.0], [0.5, 0.5], [2, 3]),
    ("StatefulRandomBinomial", [("algorithm", np.int64(2)), ("shape", np.array([2], np.int32)),
                                ("counts", np.array([3.0, 4.0])), ("probs", np.array([0.5, 0.5]))],
     {"S": "int32", "T": "float64", "dtype": "int64"}),
    binom([4.0], [0.5], [3, 1]),
])
sequence("binomial_short_state", [3, 0], [binom([4.0], [0.5], [2, 1])])

os.makedirs(os.path.join(OUT, "stateful"), exist_ok=True)
path = os.path.join(OUT, "stateful", "random_generator.json")
with open(path, "w") as f:
    json.dump({"generator": "scripts/golden/random_generator.py (TensorFlow 2.21)", "cases": cases}, f)
print("wrote", len(cases), "sequences,", sum(len(c["steps"]) for c in cases), "steps to", path)
