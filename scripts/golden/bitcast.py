"""Golden values for Bitcast (tf.bitcast) from TensorFlow 2.21's CPU kernel, written to
crates/kernels/tests/golden/bitcast.json: same-size, narrowing and widening casts of
numbers, complex and quantized types (quantized as their integer bits), scalars and empty
tensors. Run it as every generator here runs (common.py's header says how)."""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from common import io_case, write  # noqa: E402

rng = np.random.RandomState(20261206)
cases = []


def bc(name, x, to):
    x = np.asarray(x)
    out = tf.raw_ops.Bitcast(input=tf.constant(x), type=tf.as_dtype(to)).numpy()
    attrs = {"T": {"type": str(x.dtype)}, "type": {"type": to}}
    cases.append(io_case("Bitcast_" + name, "Bitcast", attrs, [x], out, {"rtol": 0.0, "atol": 0.0}))


bc("i64_to_u64", np.array([-1, 0, 1, -2**63, 2**62 + 5], np.int64), "uint64")
bc("u64_to_i64", np.array([2**64 - 1, 7, 2**63], np.uint64), "int64")
bc("i64_state_to_u64_counter", np.array([[123456789012345, -98765]], np.int64), "uint64")
bc("f32_to_i32", np.array([1.0, -2.5, 0.0, -0.0, np.inf, 3.4e38], np.float32), "int32")
bc("i32_to_f32", np.array([[0x3F800000, 0x7F800000], [1, -1]], np.int32), "float32")
bc("f64_to_i64", rng.randn(2, 3), "int64")
bc("i32_to_i64", np.array([[1, 2], [3, -4], [-1, -1]], np.int32), "int64")
bc("u8_to_f32", rng.randint(0, 255, (2, 4)).astype(np.uint8), "float32")
bc("i64_to_i32", np.array([2**40 + 3, -5], np.int64), "int32")
bc("i64_to_u8", np.array([[0x0102030405060708]], np.int64), "uint8")
bc("f32_to_f16", np.array([1.0, -7.25], np.float32), "float16")
bc("f16_to_u16", np.array([1.0, -2.0, 65504.0], np.float16), "uint16")
bc("i16_to_i8", np.array([258, -1, 127], np.int16), "int8")
bc("i8_pairs_to_i16", np.array([[1, 1], [-1, -1]], np.int8), "int16")
bc("c64_to_f64", np.array([1 + 2j, -3.5 - 0.25j], np.complex64), "float64")
bc("c128_to_c64_pairs", np.array([1.5 - 2j], np.complex128), "float32")
bc("u32_to_f32_scalar", np.uint32(0x40490FDB), "float32")
bc("i64_scalar_to_i32", np.int64(-3), "int32")
bc("empty_i32_to_i16", np.zeros((0, 3), np.int32), "int16")
bc("same_type", np.array([1.5, 2.5], np.float32), "float32")
write("bitcast", cases)
