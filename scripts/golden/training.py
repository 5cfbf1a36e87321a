"""Golden values for the optimizer apply ops: initial variable and slot values, one
ResourceApply* (or ResourceSparseApply*) step in TensorFlow 2.21, and the values after it. The Apply* (ref) and
ResourceApply* kernels share one functor in TensorFlow, so both ferroflow forms are checked
against these numbers.

Writes crates/kernels/tests/unit/state/training/golden.json (read by a unit test there; the
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

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "crates", "kernels", "tests", "unit", "state",
                   "training", "golden.json")

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

SLOT_NAMES = {"ApplyGradientDescent": ["var"], "ApplyMomentum": ["var", "accum"],
              "ApplyAdagrad": ["var", "accum"], "ApplyAdagradV2": ["var", "accum"],
              "ApplyAdam": ["var", "m", "v"], "ApplyRMSProp": ["var", "ms", "mom"],
              "ApplyCenteredRMSProp": ["var", "mg", "ms", "mom"],
              "ApplyAdadelta": ["var", "accum", "accum_update"],
              "ApplyFtrl": ["var", "accum", "linear"], "ApplyFtrlV2": ["var", "accum", "linear"],
              "ApplyProximalGradientDescent": ["var"], "ApplyProximalAdagrad": ["var", "accum"],
              "ApplyAdagradDA": ["var", "gradient_accumulator", "gradient_squared_accumulator"]}

cases = []


def apply_resource_op(op, slots, args, argv, attrs, sparse, dt):
    """Runs Resource<op> (its SparseApply form on INDICES when sparse) with `args` valued
    `argv` on variables holding `slots`: its name and the variables after the update."""
    tvars = [tf.Variable(x) for x in slots]
    kwargs = {name: tf.constant(a) for (name, _), a in zip(args, argv)}
    if sparse and "delta" in kwargs:
        kwargs["grad"] = kwargs.pop("delta")
    for n, v in zip(SLOT_NAMES[op], tvars):
        kwargs[n] = v.handle
    if sparse:
        kwargs["indices"] = tf.constant(INDICES, dtype=index_type(dt))
    name_op = op.replace("Apply", "SparseApply") if sparse else op
    getattr(tf.raw_ops, "Resource" + name_op)(**kwargs, **attrs)
    return name_op, tvars


def index_type(dt):
    return np.int32 if dt == np.float32 else np.int64


def add_case(name, op, dt, attrs, slots, argv, want, sparse):
    case = {"name": name, "op": op, "dtype": np.dtype(dt).name, "attrs": attrs,
            "slots": [tensor(x) for x in slots], "args": [tensor(a) for a in argv],
            "want": [tensor(w) for w in want]}
    if sparse:
        case["indices"] = {"dtype": np.dtype(index_type(dt)).name, "data": INDICES}
    cases.append(case)


for dt in [np.float32, np.float64]:
    for op, (inits, args, variants) in SPECS.items():
        for attrs in variants:
            slots = [f(dt) for f in inits]
            argv = [np.array(v, dt) if v is not None else normal(dt) for _, v in args]
            _, tvars = apply_resource_op(op, slots, args, argv, attrs, False, dt)
            name = "%s_%s%s" % (op, np.dtype(dt).name, "".join("_%s=%s" % kv for kv in attrs.items()))
            add_case(name, op, dt, attrs, slots, argv, [v.numpy() for v in tvars], False)

# Added in session 11, drawn from their own generator so the cases above stay unchanged:
# the optimizers added then (dense), and every sparse form on rows [2, 0, 2] of a 4x3
# variable (a repeated index is applied twice, in order).
rs2 = np.random.RandomState(7)


def normal2(shape, dt):
    return rs2.randn(*shape).astype(dt)


def positive2(shape, dt):
    return rs2.uniform(0.1, 1.0, shape).astype(dt)


def small2(shape, dt):
    return (0.1 * rs2.randn(*shape)).astype(dt)


FTRL_ARGS = [("grad", None), ("lr", 0.1), ("l1", 0.5), ("l2", 0.02)]
SPECS2 = [
    # (op, slot initializers, args, attr variants, has a sparse form)
    ("ApplyCenteredRMSProp", [normal2, small2, positive2, normal2],
     [("lr", 0.01), ("rho", 0.9), ("momentum", 0.5), ("epsilon", 1e-3), ("grad", None)], [{}], True),
    ("ApplyAdadelta", [normal2, positive2, positive2], [("lr", 0.5), ("rho", 0.9), ("epsilon", 1e-3), ("grad", None)],
     [{}], True),
    ("ApplyFtrl", [normal2, positive2, normal2], FTRL_ARGS + [("lr_power", -0.5)],
     [{"multiply_linear_by_lr": False}, {"multiply_linear_by_lr": True}], True),
    ("ApplyFtrl", [normal2, positive2, normal2], FTRL_ARGS + [("lr_power", -0.3)],
     [{"multiply_linear_by_lr": False}, {"multiply_linear_by_lr": True}], True),
    ("ApplyFtrlV2", [normal2, positive2, normal2], FTRL_ARGS + [("l2_shrinkage", 0.1), ("lr_power", -0.5)],
     [{"multiply_linear_by_lr": False}, {"multiply_linear_by_lr": True}], True),
    ("ApplyMomentum", [normal2, normal2], [("lr", 0.1), ("grad", None), ("momentum", 0.9)],
     [{"use_nesterov": False}, {"use_nesterov": True}], True),
    ("ApplyAdagrad", [normal2, positive2], [("lr", 0.1), ("grad", None)],
     [{"update_slots": True}, {"update_slots": False}], True),
    ("ApplyAdagradV2", [normal2, positive2], [("lr", 0.1), ("epsilon", 0.01), ("grad", None)],
     [{"update_slots": True}], True),
    ("ApplyRMSProp", [normal2, positive2, normal2],
     [("lr", 0.01), ("rho", 0.9), ("momentum", 0.5), ("epsilon", 1e-3), ("grad", None)], [{}], True),
]
# Added in session 12 (their own generator again): the proximal optimizers and AdagradDA,
# dense and sparse, with and without L1 (where L1 is large enough to zero some weights).
rs3 = np.random.RandomState(11)


def normal3(shape, dt):
    return rs3.randn(*shape).astype(dt)


def positive3(shape, dt):
    return rs3.uniform(0.1, 1.0, shape).astype(dt)


SPECS3 = []
for l1 in [0.0, 0.3]:
    SPECS3 += [
        ("ApplyProximalGradientDescent", [normal3], [("alpha", 0.2), ("l1", 5 * l1), ("l2", 0.05), ("delta", None)],
         [{}], True),
        ("ApplyProximalAdagrad", [normal3, positive3], [("lr", 0.2), ("l1", 5 * l1), ("l2", 0.05), ("grad", None)],
         [{}], True),
        ("ApplyAdagradDA", [normal3, normal3, positive3],
         [("grad", None), ("lr", 0.2), ("l1", l1), ("l2", 0.05), ("global_step", np.array(3, np.int64))], [{}], True),
    ]
NEW3 = {spec[0] for spec in SPECS3}
INDICES = [2, 0, 2]

for dt in [np.float32, np.float64]:
    for op, inits, args, variants, has_sparse in SPECS2 + SPECS3:
        forms = ([] if op in SPECS else [False]) + ([True] if has_sparse else [])
        for sparse in forms:
            for attrs in variants:
                shape, gshape = ((4, 3), (len(INDICES), 3)) if sparse else (SHAPE, SHAPE)
                slots = [f(shape, dt) for f in inits]
                draw = normal3 if op in NEW3 else normal2
                argv = [v if isinstance(v, np.ndarray) else np.array(v, dt) if v is not None else draw(gshape, dt)
                        for _, v in args]
                name_op, tvars = apply_resource_op(op, slots, args, argv, attrs, sparse, dt)
                want = [v.numpy() for v in tvars]
                lr_power = dict(args).get("lr_power")
                l1 = dict(args).get("l1") if op in NEW3 else None
                name = "%s_%s%s%s%s" % (name_op, np.dtype(dt).name,
                                      "" if lr_power in (None, -0.5) else "_lr_power=%s" % lr_power,
                                      "" if l1 is None else "_l1=%s" % l1,
                                      "".join("_%s=%s" % kv for kv in attrs.items()))
                add_case(name, name_op, dt, attrs, slots, argv, want, sparse)

# Added in session 38 (their own generator): AdaMax (tf_keras's Adamax), dense only, as
# TensorFlow has it; the second step starts from a v that the gradient's magnitude exceeds
# in some elements and not in others.
rs4 = np.random.RandomState(38)
SLOT_NAMES["ApplyAdaMax"] = ["var", "m", "v"]
for dt in [np.float32, np.float64]:
    slots = [rs4.randn(*SHAPE).astype(dt), rs4.randn(*SHAPE).astype(dt), rs4.uniform(0.1, 1.5, SHAPE).astype(dt)]
    args = [("beta1_power", 0.9 ** 3), ("lr", 0.01), ("beta1", 0.9), ("beta2", 0.999), ("epsilon", 1e-3),
            ("grad", None)]
    argv = [np.array(v, dt) if v is not None else rs4.randn(*SHAPE).astype(dt) for _, v in args]
    _, tvars = apply_resource_op("ApplyAdaMax", slots, args, argv, {}, False, dt)
    add_case("ApplyAdaMax_%s" % np.dtype(dt).name, "ApplyAdaMax", dt, {}, slots, argv, [v.numpy() for v in tvars],
             False)

# Added in session 61 (their own generator): tf_keras's resource-only optimizers
# (KerasMomentum, dense and sparse, and AdamWithAmsgrad, whose vhat starts above v in some
# elements and below in others) and the sign optimizers (AddSign, PowerSign), with a zero
# gradient element and m and grad of both agreeing and opposite signs.
rs5 = np.random.RandomState(61)
SLOT_NAMES.update({"ApplyKerasMomentum": ["var", "accum"], "ApplyAdamWithAmsgrad": ["var", "m", "v", "vhat"],
                   "ApplyAddSign": ["var", "m"], "ApplyPowerSign": ["var", "m"]})


def normal5(shape, dt):
    return rs5.randn(*shape).astype(dt)


def positive5(shape, dt):
    return rs5.uniform(0.1, 1.0, shape).astype(dt)


def grad5(shape, dt):
    g = rs5.randn(*shape).astype(dt)
    g.flat[1] = 0
    return g


SPECS5 = [
    # (op, slot initializers, args, attr variants, has a sparse form)
    ("ApplyKerasMomentum", [normal5, normal5], [("lr", 0.1), ("grad", None), ("momentum", 0.9)],
     [{"use_nesterov": False}, {"use_nesterov": True}], True),
    ("ApplyAdamWithAmsgrad", [normal5, normal5, positive5, positive5],
     [("beta1_power", 0.9 ** 3), ("beta2_power", 0.999 ** 3), ("lr", 0.01), ("beta1", 0.9), ("beta2", 0.999),
      ("epsilon", 1e-3), ("grad", None)], [{}], False),
    ("ApplyAddSign", [normal5, normal5], [("lr", 0.1), ("alpha", 1.0), ("sign_decay", 0.5), ("beta", 0.9),
                                          ("grad", None)], [{}], False),
    ("ApplyPowerSign", [normal5, normal5], [("lr", 0.1), ("logbase", float(np.e)), ("sign_decay", 0.5),
                                            ("beta", 0.9), ("grad", None)], [{}], False),
]
for dt in [np.float32, np.float64]:
    for op, inits, args, variants, has_sparse in SPECS5:
        for sparse in [False] + ([True] if has_sparse else []):
            for attrs in variants:
                shape, gshape = ((4, 3), (len(INDICES), 3)) if sparse else (SHAPE, SHAPE)
                slots = [f(shape, dt) for f in inits]
                argv = [np.array(v, dt) if v is not None else grad5(gshape, dt) for _, v in args]
                name_op, tvars = apply_resource_op(op, slots, args, argv, attrs, sparse, dt)
                name = "%s_%s%s" % (name_op, np.dtype(dt).name, "".join("_%s=%s" % kv for kv in attrs.items()))
                add_case(name, name_op, dt, attrs, slots, argv, [v.numpy() for v in tvars], sparse)

with open(OUT, "w") as f:
    json.dump({"generator": "scripts/golden/training.py (TensorFlow 2.21)", "cases": cases}, f)
print("wrote", len(cases), "cases to", OUT)
