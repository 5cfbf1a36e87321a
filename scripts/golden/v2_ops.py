"""Golden values for the V2 forms of ops ferroflow has in another version: MatrixDiagV2,
MatrixDiagPartV2, MatrixSetDiagV2 (V3 without `align`: every diagonal left-aligned) and
MaxPoolV2, MaxPoolGradV2, MaxPoolGradGradV2 (ksize and strides as inputs) (TensorFlow 2.21,
eager raw ops). Run as the header of common.py says, with <family> = v2_ops."""
import numpy as np
import tensorflow as tf

from common import case_list, print_error_classes, write

rs = np.random.RandomState(61)
cases, case = case_list()

f32 = lambda *s: rs.randn(*s).astype(np.float32)  # noqa: E731
f64 = lambda *s: rs.randn(*s)  # noqa: E731

# MatrixDiag*V2: bands above, below and across the main diagonal of wide and tall matrices.
for shape, k in [((2, 4, 5), (0, 0)), ((2, 4, 5), (-1, 2)), ((3, 6), (-2, 1)), ((2, 5, 3), (1, 2)),
                 ((5, 3), (-3, -1))]:
    md = f32(*shape)
    kk = np.array(k, np.int32) if k[0] != k[1] else np.int32(k[0])
    tag = "%dx%d_%d_%d" % (shape[-2], shape[-1], k[0], k[1])
    tag = tag.replace("-", "m")
    case("diag_part_v2_" + tag, "MatrixDiagPartV2", [("input", md), ("k", kk), ("padding_value", np.float32(9))],
         {"T": "float32"})
    part = tf.raw_ops.MatrixDiagPartV2(input=md, k=kk, padding_value=np.float32(9)).numpy()
    newd = f32(*part.shape)
    case("set_diag_v2_" + tag, "MatrixSetDiagV2", [("input", md), ("diagonal", newd), ("k", kk)], {"T": "float32"})
    case("diag_v2_" + tag, "MatrixDiagV2", [("diagonal", newd), ("k", kk), ("num_rows", np.int32(-1)),
         ("num_cols", np.int32(-1)), ("padding_value", np.float32(-1))], {"T": "float32"})
    case("diag_v2_fixed_" + tag, "MatrixDiagV2", [("diagonal", newd), ("k", kk), ("num_rows", np.int32(shape[-2])),
         ("num_cols", np.int32(shape[-1])), ("padding_value", np.float32(0))], {"T": "float32"})
case("diag_part_v2_f64", "MatrixDiagPartV2", [("input", f64(3, 4)), ("k", np.array([-1, 1], np.int32)),
     ("padding_value", np.float64(0))], {"T": "float64"})
case("diag_v2_i32", "MatrixDiagV2", [("diagonal", np.arange(6, dtype=np.int32).reshape(2, 3)),
     ("k", np.array([0, 1], np.int32)), ("num_rows", np.int32(-1)), ("num_cols", np.int32(-1)),
     ("padding_value", np.int32(7))], {"T": "int32"})

# MaxPool*V2: SAME and VALID, overlapping and disjoint windows.
for dtype, name in [(np.float32, "float32"), (np.float64, "float64")]:
    for ks, st, pad in [((2, 2), (2, 2), "VALID"), ((3, 3), (2, 2), "SAME"), ((2, 3), (1, 2), "VALID")]:
        x = rs.permutation(2 * 5 * 6 * 3).reshape(2, 5, 6, 3).astype(dtype)  # no ties
        ksize, strides = np.array([1, *ks, 1], np.int32), np.array([1, *st, 1], np.int32)
        attrs = {"padding": pad, "data_format": "NHWC"}
        tag = "%s_%d%d_%d%d_%s" % (name, *ks, *st, pad.lower())
        case("max_pool_v2_" + tag, "MaxPoolV2", [("input", x), ("ksize", ksize), ("strides", strides)],
             {"T": name}, attrs)
        y = tf.raw_ops.MaxPoolV2(input=tf.constant(x), ksize=ksize, strides=strides, padding=pad).numpy()
        g = rs.randn(*y.shape).astype(dtype)
        case("max_pool_grad_v2_" + tag, "MaxPoolGradV2", [("orig_input", x), ("orig_output", y), ("grad", g),
             ("ksize", ksize), ("strides", strides)], {"T": name}, attrs)
        gg = rs.randn(*x.shape).astype(dtype)
        case("max_pool_grad_grad_v2_" + tag, "MaxPoolGradGradV2", [("orig_input", x), ("orig_output", y),
             ("grad", gg), ("ksize", ksize), ("strides", strides)], {"T": name}, attrs)
case("max_pool_v2_int32", "MaxPoolV2", [("input", rs.randint(-9, 9, (1, 4, 4, 2)).astype(np.int32)),
     ("ksize", np.array([1, 2, 2, 1], np.int32)), ("strides", np.array([1, 2, 2, 1], np.int32))], {"T": "int32"},
     {"padding": "VALID", "data_format": "NHWC"})

write("v2_ops", cases)

# The error classes the kernel tests assert.
x = f32(1, 4, 4, 1)
print_error_classes([
    ("ksize of 3", lambda: tf.raw_ops.MaxPoolV2(input=x, ksize=[1, 2, 2], strides=[1, 1, 1, 1], padding="VALID")),
    ("batch ksize", lambda: tf.raw_ops.MaxPoolV2(input=x, ksize=[2, 2, 2, 1], strides=[1, 1, 1, 1], padding="VALID")),
    ("zero stride", lambda: tf.raw_ops.MaxPoolV2(input=x, ksize=[1, 2, 2, 1], strides=[1, 0, 1, 1], padding="VALID")),
    ("diag v2 bad k", lambda: tf.raw_ops.MatrixDiagPartV2(input=f32(3, 3), k=[2, 1], padding_value=0.0)),
])
