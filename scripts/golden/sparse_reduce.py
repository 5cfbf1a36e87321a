"""Golden values for SparseReduceSumSparse and SparseReduceMaxSparse (tf.sparse.reduce_sum /
reduce_max with output_is_sparse=True), and for the dense SparseReduceSum / SparseReduceMax on
groups large enough for Eigen's packet order to show, from TensorFlow 2.21's CPU kernels,
written to crates/kernels/tests/golden/sparse_reduce.json (compared exactly: the group sums
follow Eigen's packet order); the error class and message for
bad inputs are printed (crates/kernels/src/sparse/reduce_tests.rs asserts them). Run it as
every generator here runs (common.py's header says how)."""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from common import case_list, print_error_classes, raw_op_case, write  # noqa: E402

R = tf.raw_ops
rng = np.random.RandomState(20261207)
cases, case = case_list(raw_op_case)
NP = {"float32": np.float32, "float64": np.float64, "int32": np.int32, "int64": np.int64}


def sparse(shape, n, dtype, spread=1.0):
    """n distinct random index rows of `shape` (shuffled) and values of `dtype`."""
    total = int(np.prod(shape))
    flat = rng.choice(total, size=min(n, total), replace=False)
    idx = np.array(np.unravel_index(flat, shape)).T.astype(np.int64).reshape(-1, len(shape))
    if dtype.startswith("float"):
        vals = (rng.randn(len(flat)) * np.exp(rng.randn(len(flat)) * spread)).astype(NP[dtype])
    else:
        vals = rng.randint(-50, 50, len(flat)).astype(NP[dtype])
    return idx, vals, np.array(shape, np.int64)


def add(name, op, sp, axes, keep, dtype):
    idx, vals, shape = sp
    case(name, op, [("input_indices", idx), ("input_values", vals), ("input_shape", shape),
                    ("reduction_axes", np.array(axes, np.int32))], {"T": dtype}, attrs={"keep_dims": keep},
         rtol=0.0, atol=0.0)


shapes = [((5, 4), 12, [(1,), (0,), (-1,), (0, 1), ()]),
          ((3, 4, 5), 30, [(1,), (0, 2), (-1, -3), (2, 2), (0, 1, 2), (-2,)]),
          ((2, 3, 2, 4), 25, [(1, 3), (0,), (3,), (-4, 2)])]
for op in ("SparseReduceSumSparse", "SparseReduceMaxSparse"):
    for dtype in ("float32", "float64", "int32", "int64"):
        for shape, n, axes_list in shapes:
            sp = sparse(shape, n, dtype)
            for axes in axes_list:
                for keep in (False, True):
                    add("%s_%s_%s_%s_%d" % (op, dtype, "x".join(map(str, shape)),
                                            "_".join(map(str, axes)) or "none", keep), op, sp, axes, keep, dtype)

# Scalar axes, no entries, a rank-1 tensor reduced to a scalar, long groups (Eigen's packet
# order: one group of 40, 77 and 1000 floats), max with NaN and infinities, index rows
# outside the shape (TensorFlow does not check them here).
for op in ("SparseReduceSumSparse", "SparseReduceMaxSparse"):
    idx, vals, shape = sparse((4, 6), 10, "float32")
    case(op + "_scalar_axis", op, [("input_indices", idx), ("input_values", vals), ("input_shape", shape),
                                   ("reduction_axes", np.int32(-1))], {"T": "float32"}, attrs={"keep_dims": True},
         rtol=0.0, atol=0.0)
    add(op + "_empty", op, (np.zeros((0, 3), np.int64), np.zeros(0, np.float32), np.array([2, 3, 4], np.int64)),
        (1,), False, "float32")
    add(op + "_empty_all", op, (np.zeros((0, 2), np.int64), np.zeros(0, np.float64), np.array([2, 3], np.int64)),
        (0, 1), True, "float64")
    add(op + "_rank1", op, sparse((9,), 5, "float32"), (0,), False, "float32")
    add(op + "_rank1_keep", op, sparse((9,), 5, "int64"), (0,), True, "int64")
    for dtype in ("float32", "float64"):
        for rows, cols in [(3, 40), (2, 77), (1, 1000), (4, 19)]:
            add("%s_long_%s_%dx%d" % (op, dtype, rows, cols), op,
                sparse((rows, cols), rows * cols, dtype, spread=3.0), (1,), False, dtype)
    special = np.array([np.nan, 1.0, 2.0, np.nan, -np.inf, -np.inf, np.inf, 3.0, np.nan, np.nan], np.float32)
    sidx = np.array([[0, 0], [0, 1], [1, 0], [1, 1], [2, 0], [2, 1], [3, 0], [3, 1], [4, 0], [4, 1]], np.int64)
    add(op + "_special", op, (sidx, special, np.array([5, 2], np.int64)), (1,), False, "float32")
    oob = np.array([[5, 0], [-1, 2], [0, 0], [0, 9]], np.int64)
    add(op + "_unchecked_rows", op, (oob, np.array([1, 2, 3, 4], np.float32), np.array([2, 3], np.int64)),
        (1,), False, "float32")

# The dense forms share the group reduction: long groups and NaN too.
for op in ("SparseReduceSum", "SparseReduceMax"):
    for dtype in ("float32", "float64"):
        add("%s_long_%s" % (op, dtype), op, sparse((3, 90), 200, dtype, spread=3.0), (1,), False, dtype)
    add(op + "_special", op, (sidx, special, np.array([5, 2], np.int64)), (1,), False, "float32")

write("sparse_reduce", cases)

I2 = np.array([[0, 0], [1, 2]], np.int64)
V2 = np.array([1.0, 2.0], np.float32)
S2 = np.array([2, 3], np.int64)
print_error_classes([
    ("axis 2", lambda: R.SparseReduceSumSparse(input_indices=I2, input_values=V2, input_shape=S2, reduction_axes=[2])),
    ("axis -3", lambda: R.SparseReduceMaxSparse(input_indices=I2, input_values=V2, input_shape=S2, reduction_axes=[-3])),
    ("shape matrix", lambda: R.SparseReduceSumSparse(input_indices=I2, input_values=V2, input_shape=[[2, 3]],
                                                     reduction_axes=[1])),
    ("axes matrix", lambda: R.SparseReduceSumSparse(input_indices=I2, input_values=V2, input_shape=S2,
                                                    reduction_axes=[[1]])),
    ("index columns", lambda: R.SparseReduceSumSparse(input_indices=np.zeros((2, 3), np.int64), input_values=V2,
                                                      input_shape=S2, reduction_axes=[1])),
    ("values length", lambda: R.SparseReduceSumSparse(input_indices=I2, input_values=V2[:1], input_shape=S2,
                                                      reduction_axes=[1])),
    ("negative dim", lambda: R.SparseReduceSumSparse(input_indices=I2, input_values=V2, input_shape=[2, -3],
                                                     reduction_axes=[1])),
])
