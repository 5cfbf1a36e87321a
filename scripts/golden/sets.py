"""Golden values for the tf.sets kernels (SetSize, DenseToDenseSetOperation,
DenseToSparseSetOperation, SparseToSparseSetOperation) from TensorFlow 2.21's CPU kernels,
written to crates/kernels/tests/golden/sets.json (compared exactly): every element type,
each set operation (a-b, b-a, intersection, union), ranks 2 and 3, empty groups, repeated
values, unsorted groups without validate_indices. The error class and message for bad
inputs are printed (crates/kernels/src/sparse/sets_tests.rs asserts them). Run it as every
generator here runs (common.py's header says how)."""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from common import case_list, print_error_classes, raw_op_case, write  # noqa: E402

R = tf.raw_ops
rng = np.random.RandomState(20261208)
cases, case = case_list(raw_op_case)
TYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "string")
WORDS = np.array([b"a", b"b", b"ab", b"", b"ba", b"\xc3\xa9", b"zz", b"A"], dtype=object)


def values(dtype, n, spread=6):
    """n values of dtype drawn from a few, so that sets overlap and repeat."""
    if dtype == "string":
        return WORDS[rng.randint(0, len(WORDS), n)]
    lo = 0 if dtype.startswith("u") else -spread // 2
    return rng.randint(lo, lo + spread, n).astype(dtype)


def dense(shape, dtype):
    return values(dtype, int(np.prod(shape))).reshape(shape)


def sparse(shape, dtype, fill=0.6):
    """A sorted sparse set of `shape`: each group keeps a random prefix-free subset of
    positions (some groups empty)."""
    total = int(np.prod(shape))
    keep = np.sort(np.nonzero(rng.rand(total) < fill)[0])
    idx = np.array(np.unravel_index(keep, shape)).T.astype(np.int64).reshape(-1, len(shape))
    return idx, values(dtype, len(keep)), np.array(shape, np.int64)


def sp_args(prefix, sp):
    return [(prefix + "_indices", sp[0]), (prefix + "_values", sp[1]), (prefix + "_shape", sp[2])]


for dtype in TYPES:
    for shape in [(3, 5), (2, 3, 4), (1, 7), (4, 1)]:
        sp = sparse(shape, dtype)
        case("SetSize_%s_%s" % (dtype, "x".join(map(str, shape))), "SetSize", sp_args("set", sp), {"T": dtype},
             attrs={"validate_indices": True})
    for op in ("a-b", "b-a", "intersection", "union"):
        for sa, sb in [((3, 5), (3, 4)), ((2, 2, 3), (2, 2, 6))]:
            tag = "%s_%s_%s" % (op, dtype, "x".join(map(str, sa)))
            a, b = dense(sa, dtype), dense(sb, dtype)
            case("DenseToDense_" + tag, "DenseToDenseSetOperation", [("set1", a), ("set2", b)], {"T": dtype},
                 attrs={"set_operation": op, "validate_indices": True})
            spb = sparse(sb, dtype)
            case("DenseToSparse_" + tag, "DenseToSparseSetOperation", [("set1", a)] + sp_args("set2", spb),
                 {"T": dtype}, attrs={"set_operation": op, "validate_indices": True})
            spa = sparse(sa, dtype, fill=0.4)
            case("SparseToSparse_" + tag, "SparseToSparseSetOperation", sp_args("set1", spa) + sp_args("set2", spb),
                 {"T": dtype}, attrs={"set_operation": op, "validate_indices": True})

# Empty sets and results, a zero last dimension, upper case operation names, and unsorted
# groups without validate_indices (TensorFlow walks runs of entries in order).
E2 = (np.zeros((0, 2), np.int64), np.zeros(0, np.int32), np.array([3, 4], np.int64))
D = np.array([[1, 2, 2], [3, 3, 3], [5, 6, 7]], np.int32)
case("SetSize_empty", "SetSize", sp_args("set", E2), {"T": "int32"}, attrs={"validate_indices": True})
case("SetSize_zero_groups", "SetSize", sp_args("set", (np.zeros((0, 2), np.int64), np.zeros(0, np.int32),
                                                        np.array([0, 4], np.int64))), {"T": "int32"},
     attrs={"validate_indices": True})
case("SetSize_unsorted", "SetSize", sp_args("set", (np.array([[0, 1], [0, 0], [1, 2]], np.int64),
                                                    np.array([1, 2, 3], np.int32), np.array([2, 3], np.int64))),
     {"T": "int32"}, attrs={"validate_indices": False})
for op in ("a-b", "B-A", "Intersection", "UNION"):
    case("DenseToDense_empty_%s" % op, "DenseToDenseSetOperation",
         [("set1", np.zeros((2, 0), np.int32)), ("set2", np.zeros((2, 0), np.int32))], {"T": "int32"},
         attrs={"set_operation": op, "validate_indices": True})
    case("DenseToDense_one_empty_%s" % op, "DenseToDenseSetOperation",
         [("set1", D), ("set2", np.zeros((3, 0), np.int32))], {"T": "int32"},
         attrs={"set_operation": op, "validate_indices": True})
    case("DenseToSparse_empty_%s" % op, "DenseToSparseSetOperation", [("set1", D)] + sp_args("set2", E2[:2] +
                                                                                            (np.array([3, 4], np.int64),)),
         {"T": "int32"}, attrs={"set_operation": op, "validate_indices": True})
    case("DenseToSparse_zero_width_%s" % op, "DenseToSparseSetOperation",
         [("set1", np.zeros((3, 0), np.int32))] + sp_args("set2", (np.array([[1, 0], [1, 1]], np.int64),
                                                                    np.array([4, 4], np.int32),
                                                                    np.array([3, 2], np.int64))),
         {"T": "int32"}, attrs={"set_operation": op, "validate_indices": True})
    case("SparseToSparse_empty_%s" % op, "SparseToSparseSetOperation", sp_args("set1", E2) + sp_args("set2", E2),
         {"T": "int32"}, attrs={"set_operation": op, "validate_indices": True})
    case("SparseToSparse_unsorted_%s" % op, "SparseToSparseSetOperation",
         sp_args("set1", (np.array([[1, 0], [0, 0], [0, 1]], np.int64), np.array([1, 2, 3], np.int32),
                          np.array([2, 2], np.int64)))
         + sp_args("set2", (np.array([[0, 0], [1, 1]], np.int64), np.array([2, 1], np.int32),
                            np.array([2, 5], np.int64))),
         {"T": "int32"}, attrs={"set_operation": op, "validate_indices": False})
    case("DenseToSparse_unsorted_%s" % op, "DenseToSparseSetOperation",
         [("set1", np.array([[1, 2], [3, 4]], np.int32))]
         + sp_args("set2", (np.array([[1, 0], [0, 0]], np.int64), np.array([7, 8], np.int32),
                            np.array([2, 2], np.int64))),
         {"T": "int32"}, attrs={"set_operation": op, "validate_indices": False})

write("sets", cases)

I2 = np.array([[0, 1], [0, 0], [1, 2]], np.int64)
V3 = np.array([1, 2, 3], np.int32)
M = np.array([[1, 2]], np.int32)
print_error_classes([
    ("unsorted", lambda: R.SetSize(set_indices=I2, set_values=V3, set_shape=[2, 3])),
    ("rank 1", lambda: R.SetSize(set_indices=[[0]], set_values=V3[:1], set_shape=[3])),
    ("repeated", lambda: R.SetSize(set_indices=[[0, 0], [0, 0]], set_values=V3[:2], set_shape=[2, 3])),
    ("bounds", lambda: R.SetSize(set_indices=[[0, 3]], set_values=V3[:1], set_shape=[2, 3])),
    ("bounds unvalidated", lambda: R.SetSize(set_indices=[[0, 3]], set_values=V3[:1], set_shape=[2, 3],
                                             validate_indices=False)),
    ("zero dim unvalidated", lambda: R.SetSize(set_indices=[[0, 0]], set_values=V3[:1], set_shape=[2, 0],
                                               validate_indices=False)),
    ("values length", lambda: R.SetSize(set_indices=[[0, 0]], set_values=V3[:2], set_shape=[2, 3])),
    ("index columns", lambda: R.SetSize(set_indices=[[0, 0, 0]], set_values=V3[:1], set_shape=[2, 3])),
    ("negative dim", lambda: R.SetSize(set_indices=np.zeros((0, 2), np.int64), set_values=V3[:0],
                                       set_shape=[2, -3])),
    ("dense rank 1", lambda: R.DenseToDenseSetOperation(set1=[1, 2], set2=[1, 2], set_operation="union")),
    ("dense groups", lambda: R.DenseToDenseSetOperation(set1=M, set2=[[1, 2], [3, 4]], set_operation="union")),
    ("bad operation", lambda: R.DenseToDenseSetOperation(set1=M, set2=M, set_operation="xor")),
    ("sparse groups", lambda: R.SparseToSparseSetOperation(
        set1_indices=[[0, 0]], set1_values=[1], set1_shape=[2, 2], set2_indices=[[0, 0]], set2_values=[1],
        set2_shape=[3, 2], set_operation="union")),
    ("sparse last index unvalidated", lambda: R.DenseToSparseSetOperation(
        set1=[[1, 2], [3, 4]], set2_indices=[[0, 5]], set2_values=[7], set2_shape=[2, 2], set_operation="union",
        validate_indices=False)),
])
