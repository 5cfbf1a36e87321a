"""Golden values for the sparse-output counts (DenseCountSparseOutput,
SparseCountSparseOutput, RaggedCountSparseOutput: weights, binary output, minlength,
maxlength), the sparse gradient ops SparseAddGrad and
SparseSliceGrad, SparseSparseMaximum/Minimum, SerializeTensor/ParseTensor (byte for byte)
and ApproxTopK (TensorFlow 2.21, eager raw ops). Run as the header of common.py says, with
<family> = sparse_count."""
import numpy as np

from common import case_list, write

rs = np.random.RandomState(5)
cases, case = case_list()


dense1 = np.array([3, 1, 3, 0, 7, 2, 3], np.int64)
dense2 = np.array([[1, 1, 4], [0, 9, 2]], np.int32)
for name, vals, w in [("1d", dense1, None), ("2d", dense2, None),
                      ("1d_w", dense1, rs.uniform(0, 2, dense1.shape).astype(np.float32)),
                      ("2d_w", dense2, rs.uniform(0, 2, dense2.shape).astype(np.float32))]:
    for binary in [False, True]:
        for minl, maxl in [(-1, -1), (12, -1), (-1, 4)]:
            ot = "float32" if w is not None else "int64"
            weights = w if w is not None else np.zeros((0,), np.int64)
            case("dense_%s_%s_%d_%d" % (name, "bin" if binary else "cnt", minl, maxl), "DenseCountSparseOutput",
                 [("values", vals), ("weights", weights)], {"T": str(vals.dtype), "output_type": ot},
                 {"minlength": minl, "maxlength": maxl, "binary_output": binary})
sp_ind = np.array([[0, 1], [0, 3], [1, 0], [2, 2], [2, 4]], np.int64)
sp_vals = np.array([4, 1, 4, 0, 6], np.int64)
sp_shape = np.array([3, 5], np.int64)
for binary in [False, True]:
    case("sparse_%s" % ("bin" if binary else "cnt"), "SparseCountSparseOutput",
         [("indices", sp_ind), ("values", sp_vals), ("dense_shape", sp_shape), ("weights", np.zeros((0,), np.int32))],
         {"T": "int64", "output_type": "int32"}, {"minlength": -1, "maxlength": -1, "binary_output": binary})
case("sparse_1d_w", "SparseCountSparseOutput",
     [("indices", np.array([[0], [2], [3]], np.int64)), ("values", np.array([2, 2, 5], np.int32)),
      ("dense_shape", np.array([4], np.int64)), ("weights", np.array([0.5, 1.5, 2.0]))],
     {"T": "int32", "output_type": "float64"}, {"minlength": 8, "maxlength": -1, "binary_output": False})
case("ragged", "RaggedCountSparseOutput",
     [("splits", np.array([0, 2, 2, 5], np.int64)), ("values", np.array([3, 3, 1, 0, 2], np.int64)),
      ("weights", np.zeros((0,), np.int64))], {"T": "int64", "output_type": "int64"},
     {"minlength": -1, "maxlength": 3, "binary_output": False})

# SparseAddGrad: a and b overlap at [0,1]; the sum dropped [1,1] (thresholded).
a_ind = np.array([[0, 1], [1, 1], [2, 0]], np.int64)
b_ind = np.array([[0, 0], [0, 1], [2, 2]], np.int64)
sum_ind = np.array([[0, 0], [0, 1], [2, 0], [2, 2]], np.int64)
case("add_grad", "SparseAddGrad", [("backprop_val_grad", np.array([1.0, 2.0, 3.0, 4.0], np.float32)),
                                   ("a_indices", a_ind), ("b_indices", b_ind), ("sum_indices", sum_ind)],
     {"T": "float32"})
in_ind = np.array([[0, 0], [1, 2], [2, 1], [3, 3]], np.int64)
case("slice_grad", "SparseSliceGrad", [("backprop_val_grad", np.array([5.0, 6.0])),
                                       ("input_indices", in_ind), ("input_start", np.array([1, 1], np.int64)),
                                       ("output_indices", np.array([[0, 1], [1, 0]], np.int64))], {"T": "float64"})
for op in ["SparseSparseMaximum", "SparseSparseMinimum"]:
    for dt in ["float32", "int32"]:
        case("%s_%s" % (op, dt), op,
             [("a_indices", a_ind), ("a_values", np.array([1, -3, 2]).astype(dt)), ("a_shape", np.array([3, 3], np.int64)),
              ("b_indices", b_ind), ("b_values", np.array([-1, 5, -2]).astype(dt)), ("b_shape", np.array([3, 3], np.int64))],
             {"T": dt})
for name, t in [("f32", np.array([[1.5, -2.0], [0.0, 3.0]], np.float32)), ("i64", np.array([7, -8], np.int64)),
                ("str", np.array([b"ab", b"", b"\xff\x00"], object)), ("bool", np.array(True)),
                ("empty", np.zeros((0, 3), np.float64))]:
    case("serialize_tensor_" + name, "SerializeTensor", [("tensor", t)], {"T": str(t.dtype) if t.dtype != object else "string"})
import tensorflow as tf  # noqa: E402
for name, t, dt in [("f32", np.array([[1.5, -2.0]], np.float32), "float32"), ("str", np.array([b"x", b"yz"], object), "string"),
                    ("i32", np.array(5, np.int32), "int32")]:
    ser = tf.raw_ops.SerializeTensor(tensor=t).numpy()
    case("parse_tensor_" + name, "ParseTensor", [("serialized", np.array(ser, object))], {"out_type": dt})
x = rs.uniform(-1, 1, (3, 10)).astype(np.float32)
x[1, 4] = x[1, 7]  # a tie
# TensorFlow's CPU kernel takes only the last dimension and the largest values.
for k, dim, mx in [(3, -1, True), (1, -1, True), (10, -1, True)]:
    case("approx_top_k_%d_%d_%s" % (k, dim, "max" if mx else "min"), "ApproxTopK", [("input", x)], {"T": "float32"},
         {"k": k, "reduction_dimension": dim, "recall_target": 0.95, "is_max_k": mx,
          "reduction_input_size_override": -1, "aggregate_to_topk": True})

write("sparse_count", cases)
