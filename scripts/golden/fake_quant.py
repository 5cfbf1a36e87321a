"""Golden values for the fake-quantization kernels (FakeQuantWithMinMaxArgs/Vars/
VarsPerChannel and their Gradient ops) from TensorFlow 2.21's CPU kernels, written to
crates/kernels/tests/golden/fake_quant.json, and the error class TensorFlow raises for each
bad input (printed). Run it as every generator here runs (common.py's header says how)."""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from common import print_error_classes, tensor, write  # noqa: E402

R = tf.raw_ops
rng = np.random.RandomState(20261206)
cases = []


def case(name, op, inputs, attrs, outs):
    cases.append({"name": name, "op": op, "attrs": attrs, "inputs": [tensor(x) for x in inputs],
                  "outputs": [tensor(np.asarray(o)) for o in outs], "rtol": 1e-6, "atol": 1e-6})


def bits(num_bits, narrow):
    return {"num_bits": {"i": num_bits}, "narrow_range": {"b": narrow}}


x = rng.uniform(-8, 8, (5, 7)).astype(np.float32)
g = rng.uniform(-1, 1, (5, 7)).astype(np.float32)
for lo, hi, nb, narrow in [(-6.0, 6.0, 8, False), (-1.0, 1.0, 4, False), (-2.5, 3.0, 8, True), (0.3, 2.7, 3, False),
                           (-7.0, -0.5, 16, False), (-3.0, 5.0, 2, True)]:
    attrs = dict(bits(nb, narrow), min={"f": lo}, max={"f": hi})
    tag = "%g_%g_%d_%d" % (lo, hi, nb, narrow)
    out = R.FakeQuantWithMinMaxArgs(inputs=x, min=lo, max=hi, num_bits=nb, narrow_range=narrow)
    case("Args_" + tag, "FakeQuantWithMinMaxArgs", [x], attrs, [out.numpy()])
    dx = R.FakeQuantWithMinMaxArgsGradient(gradients=g, inputs=x, min=lo, max=hi, num_bits=nb, narrow_range=narrow)
    case("ArgsGradient_" + tag, "FakeQuantWithMinMaxArgsGradient", [g, x], attrs, [dx.numpy()])
# Ranges as tensors, the all-zero range TensorFlow special-cases among them.
for lo, hi, nb, narrow in [(-6.0, 6.0, 8, False), (-0.8, 1.3, 5, True), (0.0, 0.0, 8, False), (1.0, 4.0, 8, False)]:
    tag = "%g_%g_%d_%d" % (lo, hi, nb, narrow)
    mn, mx = np.float32(lo), np.float32(hi)
    out = R.FakeQuantWithMinMaxVars(inputs=x, min=mn, max=mx, num_bits=nb, narrow_range=narrow)
    case("Vars_" + tag, "FakeQuantWithMinMaxVars", [x, mn, mx], bits(nb, narrow), [out.numpy()])
    outs = R.FakeQuantWithMinMaxVarsGradient(gradients=g, inputs=x, min=mn, max=mx, num_bits=nb, narrow_range=narrow)
    case("VarsGradient_" + tag, "FakeQuantWithMinMaxVarsGradient", [g, x, mn, mx], bits(nb, narrow),
         [o.numpy() for o in outs])
mn = np.array([-6.0, -1.0, 0.0, 0.5, -3.0, -0.2, -5.0], np.float32)
mx = np.array([6.0, 1.0, 0.0, 2.0, -1.0, 0.2, 7.0], np.float32)
for nb, narrow in [(8, False), (4, True)]:
    tag = "%d_%d" % (nb, narrow)
    out = R.FakeQuantWithMinMaxVarsPerChannel(inputs=x, min=mn, max=mx, num_bits=nb, narrow_range=narrow)
    case("PerChannel_" + tag, "FakeQuantWithMinMaxVarsPerChannel", [x, mn, mx], bits(nb, narrow), [out.numpy()])
    outs = R.FakeQuantWithMinMaxVarsPerChannelGradient(gradients=g, inputs=x, min=mn, max=mx, num_bits=nb,
                                                       narrow_range=narrow)
    case("PerChannelGradient_" + tag, "FakeQuantWithMinMaxVarsPerChannelGradient", [g, x, mn, mx], bits(nb, narrow),
         [o.numpy() for o in outs])

write("fake_quant", cases)

print_error_classes([
    ("Args min >= max", lambda: R.FakeQuantWithMinMaxArgs(inputs=x, min=1.0, max=1.0)),
    ("Args num_bits 1", lambda: R.FakeQuantWithMinMaxArgs(inputs=x, num_bits=1)),
    ("Vars num_bits 17", lambda: R.FakeQuantWithMinMaxVars(inputs=x, min=-1.0, max=1.0, num_bits=17)),
    ("Vars min rank 1", lambda: R.FakeQuantWithMinMaxVars(inputs=x, min=[-1.0], max=1.0)),
    ("PerChannel min size", lambda: R.FakeQuantWithMinMaxVarsPerChannel(inputs=x, min=[-1.0], max=[1.0])),
    ("ArgsGradient shapes", lambda: R.FakeQuantWithMinMaxArgsGradient(gradients=g[:2], inputs=x)),
])
