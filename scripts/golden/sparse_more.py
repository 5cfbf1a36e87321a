"""Golden values for SparseReduceMax and SparseDenseCwiseAdd/Mul/Div (TensorFlow 2.21,
eager raw ops): unordered indices, groups without values (0), keep_dims, negative and
empty axes, dense sides of every broadcast rank. Run as the header of common.py says,
with <family> = sparse_more."""
import numpy as np

from common import case_list, write

rs = np.random.RandomState(42)
cases, case = case_list()


ind = np.array([[1, 2, 0], [0, 0, 1], [0, 2, 1], [2, 1, 1], [0, 0, 0]], np.int64)
shape = np.array([3, 3, 2], np.int64)
for dt in ["float32", "float64", "int32", "int64"]:
    vals = rs.randint(-9, 9, 5).astype(dt)
    for axes in [[0], [1], [-1], [0, 2], [], [0, 1, 2]]:
        for keep in [False, True]:
            name = "reduce_max_%s_%s_%s" % (dt, "_".join(map(str, axes)) or "none", "keep" if keep else "drop")
            case(name, "SparseReduceMax", [("input_indices", ind), ("input_values", vals), ("input_shape", shape),
                                           ("reduction_axes", np.array(axes, np.int32))], {"T": dt},
                 {"keep_dims": keep})
for dt in ["float32", "float64", "int32", "int64"]:
    vals = rs.randint(-9, 9, 5).astype(dt)
    for dshape in [(3, 3, 2), (3, 1, 2), (2,), (1,), (), (3, 1)]:
        dense = rs.randint(1, 9, dshape).astype(dt)
        if dshape == (3, 1):
            dense = rs.randint(1, 9, (1, 3, 1)).astype(dt)
        for op in ["SparseDenseCwiseAdd", "SparseDenseCwiseMul", "SparseDenseCwiseDiv"]:
            if op.endswith("Div") and dt.startswith("int"):
                continue
            name = "%s_%s_%s" % (op, dt, "x".join(map(str, dense.shape)) or "scalar")
            case(name, op, [("sp_indices", ind), ("sp_values", vals), ("sp_shape", shape), ("dense", dense)], {"T": dt})

write("sparse_more", cases)
