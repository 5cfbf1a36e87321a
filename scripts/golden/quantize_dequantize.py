"""Golden values for quantize-and-dequantize (TensorFlow 2.21, eager raw ops):
QuantizeAndDequantizeV2 and V4 over every combination of signed_input, num_bits,
range_given, round_mode and narrow_range, one range and per axis (TensorFlow 2.21 refuses a
given range per axis for V2/V4, so those are left out); V3 (num_bits an input, given ranges
per axis too); QuantizeAndDequantizeV4Grad per tensor and per axis; float32 and float64,
ties, NaN and values outside the range. Run as the header of common.py says, with
<family> = quantize_dequantize."""
import itertools

import numpy as np
from common import case_list, write

rs = np.random.RandomState(47)
cases, case = case_list()


def data(shape, dtype, scale=3.0):
    return (rs.randn(*shape) * scale).astype(dtype)


def ranges(x, axis, dtype):
    """A given range (inside the data, so some values clip) for the whole input or per slice."""
    if axis == -1:
        return np.asarray(-1.7, dtype), np.asarray(2.3, dtype)
    d = x.shape[axis]
    lo = -rs.uniform(0.5, 3.0, d).astype(dtype)
    hi = rs.uniform(0.5, 3.0, d).astype(dtype)
    return lo, hi


def attrs(signed, bits, given, mode, narrow, axis):
    return {"signed_input": signed, "num_bits": bits, "range_given": given, "round_mode": mode,
            "narrow_range": narrow, "axis": axis}


n = 0
for op in ["QuantizeAndDequantizeV2", "QuantizeAndDequantizeV4"]:
    for signed, bits, given, mode, narrow in itertools.product([True, False], [2, 4, 8], [False, True],
                                                               ["HALF_TO_EVEN", "HALF_UP"], [False, True]):
        for axis, shape in [(-1, (3, 5)), (0, (3, 5)), (2, (2, 3, 4))]:
            if given and axis != -1:
                continue
            n += 1
            dtype = np.float32 if n % 3 else np.float64
            x = data(shape, dtype)
            lo, hi = ranges(x, axis, dtype) if given else (np.asarray(0, dtype), np.asarray(0, dtype))
            name = "%s_s%d_b%d_g%d_%s_n%d_a%d_%s" % (op[-2:], signed, bits, given, mode, narrow, axis,
                                                      np.dtype(dtype).name)
            case(name, op, [("input", x), ("input_min", lo), ("input_max", hi)], {"T": np.dtype(dtype).name},
                 attrs(signed, bits, given, mode, narrow, axis))

# Exact ties of x * scale (scale 1 for [-127, 127] on signed 8 bits), and one below a half.
ties = np.array([0.49999997, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 126.5, -127.5, 300.0, -300.0], np.float32)
for mode in ["HALF_TO_EVEN", "HALF_UP"]:
    case("ties_" + mode, "QuantizeAndDequantizeV2",
         [("input", ties), ("input_min", np.float32(-127)), ("input_max", np.float32(127))], {"T": "float32"},
         attrs(True, 8, True, mode, False, -1))
# NaN: ignored by the range of the input, kept by the clamp.
special = np.array([np.nan, 1.0, 2.0, -0.75, 0.0], np.float32)
for given in [False, True]:
    case("nan_given%d" % given, "QuantizeAndDequantizeV4",
         [("input", special), ("input_min", np.float32(0)), ("input_max", np.float32(1))], {"T": "float32"},
         attrs(True, 8, given, "HALF_TO_EVEN", False, -1))
# A range that excludes 0, and wide bit counts.
for bits, signed in [(16, True), (30, True), (61, True), (62, False)]:
    x = data((6,), np.float64)
    case("wide_b%d_s%d" % (bits, signed), "QuantizeAndDequantizeV2",
         [("input", x), ("input_min", np.float64(0.5)), ("input_max", np.float64(4.0))], {"T": "float64"},
         attrs(signed, bits, True, "HALF_TO_EVEN", False, -1))
case("positive_range", "QuantizeAndDequantizeV4",
     [("input", data((7,), np.float32)), ("input_min", np.float32(1.0)), ("input_max", np.float32(5.0))],
     {"T": "float32"}, attrs(True, 8, True, "HALF_TO_EVEN", False, -1))

# V3: num_bits an input, half to even.
for signed, given, narrow, bits in itertools.product([True, False], [True, False], [False, True], [3, 8]):
    for axis, shape in [(-1, (4, 3)), (1, (4, 3)), (0, (2, 3, 2))]:
        n += 1
        dtype = np.float32 if n % 2 else np.float64
        x = data(shape, dtype)
        lo, hi = ranges(x, axis, dtype)
        name = "V3_s%d_g%d_n%d_b%d_a%d_%s" % (signed, given, narrow, bits, axis, np.dtype(dtype).name)
        case(name, "QuantizeAndDequantizeV3",
             [("input", x), ("input_min", lo), ("input_max", hi), ("num_bits", np.int32(bits))],
             {"T": np.dtype(dtype).name},
             {"signed_input": signed, "range_given": given, "narrow_range": narrow, "axis": axis})
# V3 with a reversed per-axis range (allowed per axis; the scale comes from the ends).
x = data((2, 3), np.float32)
case("V3_reversed_per_axis", "QuantizeAndDequantizeV3",
     [("input", x), ("input_min", np.array([0.0, 5.0, 2.0], np.float32)),
      ("input_max", np.array([1.0, 2.0, 3.0], np.float32)), ("num_bits", np.int32(8))], {"T": "float32"},
     {"signed_input": True, "range_given": True, "narrow_range": False, "axis": 1})

# V4Grad: the gradient where the input is in [min, max].
for axis, shape, dtype in [(-1, (4, 5), np.float32), (0, (3, 4), np.float32), (1, (3, 4), np.float64),
                           (2, (2, 2, 3), np.float32), (-1, (6,), np.float64)]:
    x = data(shape, dtype)
    g = data(shape, dtype, 1.0)
    lo, hi = ranges(x, axis, dtype)
    case("V4Grad_a%d_%s" % (axis, np.dtype(dtype).name), "QuantizeAndDequantizeV4Grad",
         [("gradients", g), ("input", x), ("input_min", lo), ("input_max", hi)], {"T": np.dtype(dtype).name},
         {"axis": axis})
write("quantize_dequantize", cases)
