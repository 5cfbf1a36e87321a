"""Golden values for FractionalMaxPool / FractionalAvgPool and their gradients (TensorFlow
2.21, eager raw ops). The forward cases are deterministic with fixed seeds, so they pin
TensorFlow's pooling sequences as well as the pooled values: random and pseudo-random
sequences, overlapping or not, ratios that divide a size (no draw) and that do not, every
value type. The gradient cases take the sequences TensorFlow drew as inputs. Run as the
header of common.py says, with <family> = fractional_pool."""
import numpy as np
import tensorflow as tf

from common import case_list, print_error_classes, write

rs = np.random.RandomState(62)
cases, case = case_list()

GEOMS = [("r15_16", [1.0, 1.5, 1.6, 1.0], (2, 7, 9, 2)), ("r13_17", [1.0, 1.3, 1.7, 1.0], (1, 11, 13, 3)),
         ("r2_14", [1.0, 2.0, 1.44, 1.0], (2, 8, 10, 1)), ("r11_11", [1.0, 1.1, 1.1, 1.0], (1, 25, 17, 1))]
SEEDS = [(7, 3), (1, 0), (123, 456), (5, 99)]
for dt in ["float32", "float64", "int32", "int64"]:
    for gi, (gname, ratio, shape) in enumerate(GEOMS):
        for pr in [False, True]:
            for ov in [False, True]:
                seed, seed2 = SEEDS[(gi + 2 * pr + ov) % len(SEEDS)]
                x = rs.randint(-20, 21, shape).astype(dt) if dt.startswith("int") else rs.randn(*shape).astype(dt)
                attrs = {"pooling_ratio": ratio, "pseudo_random": pr, "overlapping": ov, "deterministic": True,
                         "seed": seed, "seed2": seed2}
                name = "%s_%s_%s_%s" % (gname, dt, "pr" if pr else "rand", "ov" if ov else "disjoint")
                for op in ["FractionalMaxPool", "FractionalAvgPool"]:
                    case(op + "_" + name, op, [("value", x)], {"T": dt}, attrs)
                y, rows, cols = tf.raw_ops.FractionalMaxPool(value=x, **attrs)
                dy = (rs.randint(-5, 6, y.shape) if dt.startswith("int") else rs.randn(*y.shape)).astype(dt)
                case("FractionalMaxPoolGrad_" + name, "FractionalMaxPoolGrad",
                     [("orig_input", x), ("orig_output", y.numpy()), ("out_backprop", dy),
                      ("row_pooling_sequence", rows.numpy()), ("col_pooling_sequence", cols.numpy())],
                     {"T": dt}, {"overlapping": ov})
                case("FractionalAvgPoolGrad_" + name, "FractionalAvgPoolGrad",
                     [("orig_input_tensor_shape", np.array(shape, np.int64)), ("out_backprop", dy),
                      ("row_pooling_sequence", rows.numpy()), ("col_pooling_sequence", cols.numpy())],
                     {"T": dt}, {"overlapping": ov})

x = rs.randn(2, 7, 9, 2).astype("float32")
print_error_classes([
    ("ratio above the size", lambda: tf.raw_ops.FractionalMaxPool(value=x, pooling_ratio=[1.0, 8.0, 1.5, 1.0])),
    ("ratio on the batch", lambda: tf.raw_ops.FractionalAvgPool(value=x, pooling_ratio=[2.0, 1.5, 1.5, 1.0])),
    ("ratio below 1", lambda: tf.raw_ops.FractionalAvgPool(value=x, pooling_ratio=[1.0, 0.5, 1.5, 1.0])),
    ("seed without deterministic", lambda: tf.raw_ops.FractionalMaxPool(value=x, pooling_ratio=[1.0, 1.5, 1.5, 1.0],
                                                                         seed=3)),
    ("rank 3", lambda: tf.raw_ops.FractionalMaxPool(value=x[0], pooling_ratio=[1.0, 1.5, 1.5, 1.0])),
    ("short row sequence", lambda: tf.raw_ops.FractionalAvgPoolGrad(
        orig_input_tensor_shape=[2, 7, 9, 2], out_backprop=np.ones((2, 4, 6, 2), np.float32),
        row_pooling_sequence=np.array([0, 2, 4], np.int64), col_pooling_sequence=np.array([0, 2, 3, 5, 6, 8, 9], np.int64))),
    ("row sequence past the input", lambda: tf.raw_ops.FractionalMaxPoolGrad(
        orig_input=x, orig_output=np.ones((2, 4, 6, 2), np.float32), out_backprop=np.ones((2, 4, 6, 2), np.float32),
        row_pooling_sequence=np.array([0, 2, 4, 9, 12], np.int64), col_pooling_sequence=np.array([0, 2, 3, 5, 6, 8, 9], np.int64))),
])
write("fractional_pool", cases)
