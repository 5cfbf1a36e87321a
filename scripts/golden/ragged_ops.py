"""Golden values for RaggedTensorToTensor (TensorFlow 2.21, eager raw ops): ROW_SPLITS and
FIRST_DIM_SIZE + VALUE_ROWIDS partitions, one and two ragged dimensions, values with
uniform inner dimensions, scalar and broadcast defaults, shapes that pad and cut every
dimension, an unknown-rank shape (the scalar -1), string, int and float values, empty rows
and trailing empty rows. Run as the header of common.py says, with <family> = ragged_ops."""
import numpy as np

from common import raw_op_case, write

rs = np.random.RandomState(41)
cases = []


def case(name, shape, values, default, parts, types, tindex="int64", tshape="int64"):
    dt = {np.dtype("float32"): "float32", np.dtype("int64"): "int64", np.dtype("int32"): "int32",
          np.dtype("float64"): "float64"}.get(values.dtype, "string")
    args = [("shape", np.array(shape, tshape)), ("values", values), ("default_value", default),
            ("row_partition_tensors", [np.array(p, tindex) for p in parts])]
    cases.append(raw_op_case(name, "RaggedTensorToTensor", args, {"T": dt, "Tindex": tindex, "Tshape": tshape},
                             {"row_partition_types": list(types), "num_row_partition_tensors": len(parts)}))


splits = [0, 3, 3, 7, 8]
vals = rs.normal(0, 1, 8).astype(np.float32)
for shape, nm in [(-1, "unknown_rank"), ([-1, -1], "unknown_dims"), ([4, 5], "pad"), ([3, 2], "cut"),
                  ([6, -1], "more_rows"), ([-1, 1], "one_col")]:
    case("splits_" + nm, shape, vals, np.array(0.5, np.float32), [splits], ["ROW_SPLITS"])
case("splits_i32_index", [-1, -1], vals, np.array(-1, np.float32), [splits], ["ROW_SPLITS"], "int32", "int32")
case("rowids", [-1, -1], vals, np.array(9, np.float32), [np.array(6, np.int64), [0, 0, 0, 2, 2, 2, 2, 3]],
     ["FIRST_DIM_SIZE", "VALUE_ROWIDS"])
case("rowids_cut", [4, 2], vals, np.array(9, np.float32), [np.array(6, np.int64), [0, 0, 0, 2, 2, 2, 2, 5]],
     ["FIRST_DIM_SIZE", "VALUE_ROWIDS"])
# Values with inner dims [8, 2, 3]; defaults scalar, [3], [2, 1], [2, 3].
inner = rs.normal(0, 1, (8, 2, 3)).astype(np.float32)
for d, nm in [(np.array(0, np.float32), "scalar"), (np.arange(3, dtype=np.float32).reshape(1, 3), "row"),
              (np.array([[7], [8]], np.float32), "col"), (rs.normal(0, 1, (2, 3)).astype(np.float32), "full")]:
    case("inner_default_" + nm, [-1, -1, 2, 3], inner, d, [splits], ["ROW_SPLITS"])
case("inner_cut", [3, 2, -1, -1], inner, np.array(0, np.float32), [splits], ["ROW_SPLITS"])
# Two ragged dimensions: 3 rows of lists of lists.
outer = [0, 2, 2, 4]
inner_splits = [0, 1, 4, 4, 6]
v6 = np.arange(6, dtype=np.int64) + 10
case("two_ragged", -1, v6, np.array(-1, np.int64), [outer, inner_splits], ["ROW_SPLITS", "ROW_SPLITS"])
case("two_ragged_cut", [2, 1, 2], v6, np.array(-1, np.int64), [outer, inner_splits], ["ROW_SPLITS", "ROW_SPLITS"])
case("two_ragged_pad", [4, 3, 4], v6.astype(np.int32), np.array(0, np.int32), [outer, inner_splits],
     ["ROW_SPLITS", "ROW_SPLITS"])
case("two_ragged_rowids", [-1, -1, -1], v6.astype(np.float64), np.array(0.25), [np.array(3, np.int64), [0, 0, 2, 2],
     [0, 1, 1, 1, 3, 3]], ["FIRST_DIM_SIZE", "VALUE_ROWIDS", "VALUE_ROWIDS"])
# Strings (TextVectorization's tokens) and trailing empty rows.
words = np.array([b"the", b"cat", b"sat", b"on", b"a", b"mat"], dtype=object)
case("strings", [-1, 4], words, np.array(b"", dtype=object), [[0, 2, 5, 6, 6, 6]], ["ROW_SPLITS"])
case("strings_cut", [2, 2], words, np.array(b"<pad>", dtype=object), [[0, 2, 5, 6, 6, 6]], ["ROW_SPLITS"])
case("empty_values", [-1, -1], np.zeros(0, np.float32), np.array(1, np.float32), [[0, 0, 0]], ["ROW_SPLITS"])


# RaggedTensorToSparse: one and two ragged levels, inner dense dims, strings, int32 splits.
def to_sparse(name, splits, values, tsplits=np.int64):
    cases.append(raw_op_case(name, "RaggedTensorToSparse",
                             [("rt_nested_splits", [np.array(sp, tsplits) for sp in splits]),
                              ("rt_dense_values", values)],
                             {"T": str(values.dtype) if values.dtype != object else "string",
                              "Tsplits": np.dtype(tsplits).name},
                             {"RAGGED_RANK": len(splits)}))


to_sparse("to_sparse_1", [[0, 3, 3, 5]], np.arange(5, dtype=np.float32))
to_sparse("to_sparse_2", [outer, inner_splits], v6, np.int32)
to_sparse("to_sparse_inner", [[0, 1, 3]], np.arange(9, dtype=np.float64).reshape(3, 3))
to_sparse("to_sparse_strings", [[0, 2, 5, 6, 6, 6]], words)
to_sparse("to_sparse_empty", [[0, 0, 0]], np.zeros(0, np.float32))

write("ragged_ops", cases)
