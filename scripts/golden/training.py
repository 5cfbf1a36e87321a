"""Golden values for the optimizer apply ops: initial variable and slot values, one
ResourceApply* step in TensorFlow 2.21, and the values after it. The Apply* (ref) and
ResourceApply* kernels share one functor in TensorFlow, so both ferroflow forms are checked
against these numbers.

Writes crates/kernels/src/state/training/golden.json (read by a unit test there; the
tests/golden runner cannot feed variables)."""
import sys

# scripts/golden/random.py would shadow the standard library's `random`: take this folder
# off the path until numpy and TensorFlow are imported.
HERE = sys.path.pop(0)

import json  # noqa: E402
import os  # noqa: E402

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

sys.path.append(HERE)
from common import tensor  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "crates", "kernels", "src", "state", "training",
                   "golden.json")

rs = np.random.RandomState(42)
SHAPE = (3, 4)


def normal(dt):
    return rs.randn(*SHAPE).astype(dt)


def positive(dt):
    return rs.uniform(0.1, 1.0, SHAPE).astype(dt)


# op: (slot initializers, [(arg name, value or None for the gradient)], attr variants)
SPECS = {
    "ApplyGradientDescent": ([normal], [("alpha", 0.1), ("delta", None)], [{}]),
    "ApplyMomentum": ([normal, normal], [("lr", 0.1), ("grad", None), ("momentum", 0.9)],
                      [{"use_nesterov": False}, {"use_nesterov": True}]),
    "ApplyAdagrad": ([normal, positive], [("lr", 0.1), ("grad", None)],
                     [{"update_slots": True}, {"update_slots": False}]),
    "ApplyAdagradV2": ([normal, positive], [("lr", 0.1), ("epsilon", 0.01), ("grad", None)],
                       [{"update_slots": True}, {"update_slots": False}]),
    "ApplyAdam": ([normal, normal, positive],
                  [("beta1_power", 0.9 ** 3), ("beta2_power", 0.999 ** 3), ("lr", 0.01), ("beta1", 0.9),
                   ("beta2", 0.999), ("epsilon", 1e-3), ("grad", None)],
                  [{"use_nesterov": False}, {"use_nesterov": True}]),
    "ApplyRMSProp": ([normal, positive, normal],
                     [("lr", 0.01), ("rho", 0.9), ("momentum", 0.5), ("epsilon", 1e-3), ("grad", None)], [{}]),
}

cases = []
for dt in [np.float32, np.float64]:
    for op, (inits, args, variants) in SPECS.items():
        for attrs in variants:
            slots = [f(dt) for f in inits]
            argv = [np.array(v, dt) if v is not None else normal(dt) for _, v in args]
            tvars = [tf.Variable(s) for s in slots]
            kwargs = {name: tf.constant(a) for (name, _), a in zip(args, argv)}
            slot_names = {"ApplyGradientDescent": ["var"], "ApplyMomentum": ["var", "accum"],
                          "ApplyAdagrad": ["var", "accum"], "ApplyAdagradV2": ["var", "accum"],
                          "ApplyAdam": ["var", "m", "v"], "ApplyRMSProp": ["var", "ms", "mom"]}[op]
            for n, v in zip(slot_names, tvars):
                kwargs[n] = v.handle
            getattr(tf.raw_ops, "Resource" + op)(**kwargs, **attrs)
            want = [v.numpy() for v in tvars]
            name = "%s_%s%s" % (op, np.dtype(dt).name, "".join("_%s=%s" % kv for kv in attrs.items()))
            cases.append({"name": name, "op": op, "dtype": np.dtype(dt).name, "attrs": attrs,
                          "slots": [tensor(s) for s in slots], "args": [tensor(a) for a in argv],
                          "want": [tensor(w) for w in want]})

with open(OUT, "w") as f:
    json.dump({"generator": "scripts/golden/training.py (TensorFlow 2.21)", "cases": cases}, f)
print("wrote", len(cases), "cases to", OUT)
