"""Golden values for SparseSplit (tf.sparse.split) from TensorFlow 2.21's CPU kernel, written
to crates/kernels/tests/golden/sparse_split.json (compared exactly): even and uneven splits
(the first dim % num_split pieces one longer), negative split_dim, ranks 1-3, unsorted and
empty inputs, several value types; the outputs are the num_split indices, then the values,
then the shapes. The error class and message for bad inputs are printed
(crates/kernels/src/sparse/split.rs asserts them). Run it as every generator here runs
(common.py's header says how)."""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from common import case_list, io_case, print_error_classes, random_values, write  # noqa: E402

R = tf.raw_ops
rng = np.random.RandomState(20261209)
cases, case = case_list(io_case)


def vals(dtype, n):
    return random_values(rng, dtype, n, [("v%d" % i).encode() for i in range(50)], 100, normal_floats=True)


def add(name, sp, axis, k, dtype, shuffle=False):
    idx, v, shape = sp
    if shuffle:
        p = rng.permutation(len(v))
        idx, v = idx[p], v[p]
    out = R.SparseSplit(split_dim=np.int64(axis), indices=idx, values=v, shape=shape, num_split=k)
    outs = [t.numpy() for part in out for t in part]
    attrs = {"num_split": {"i": k}, "T": {"type": "string" if dtype == "string" else dtype}}
    case(name, "SparseSplit", attrs, [np.int64(axis), idx, v, shape], outs, {"rtol": 0.0, "atol": 0.0})


def sparse(shape, n, dtype):
    total = int(np.prod(shape))
    flat = np.sort(rng.choice(total, size=min(n, total), replace=False))
    idx = np.array(np.unravel_index(flat, shape)).T.astype(np.int64).reshape(-1, len(shape))
    return idx, vals(dtype, len(flat)), np.array(shape, np.int64)


for dtype in ("float32", "int64", "string"):
    for shape, n in [((7, 5), 15), ((4, 6, 3), 30), ((10,), 6)]:
        sp = sparse(shape, n, dtype)
        for axis in range(-len(shape), len(shape)):
            for k in sorted({1, 2, 3, shape[axis]}):
                if k <= shape[axis]:
                    add("%s_%s_axis%d_k%d" % (dtype, "x".join(map(str, shape)), axis, k), sp, axis, k, dtype)
for dtype in ("float64", "int32", "bool", "uint8", "int8", "float16", "complex64"):
    add("types_%s" % dtype, sparse((5, 4), 9, dtype), 0, 2, dtype)
add("unsorted", sparse((6, 6), 20, "float32"), 1, 4, "float32", shuffle=True)
add("empty", (np.zeros((0, 2), np.int64), np.zeros(0, np.float32), np.array([5, 3], np.int64)), 0, 3, "float32")
add("one_per_piece", sparse((5, 2), 10, "int32"), 0, 5, "int32")

write("sparse_split", cases)

SI = np.array([[0, 0], [1, 2], [3, 1], [4, 4]], np.int64)
SV = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
print_error_classes([
    ("too many", lambda: R.SparseSplit(split_dim=0, indices=SI, values=SV, shape=[5, 5], num_split=6)),
    ("axis", lambda: R.SparseSplit(split_dim=2, indices=SI, values=SV, shape=[5, 5], num_split=2)),
    ("axis negative", lambda: R.SparseSplit(split_dim=-3, indices=SI, values=SV, shape=[5, 5], num_split=2)),
    ("out of bounds", lambda: R.SparseSplit(split_dim=0, indices=SI + 3, values=SV, shape=[5, 5], num_split=2)),
    ("values", lambda: R.SparseSplit(split_dim=0, indices=SI, values=SV[:2], shape=[5, 5], num_split=2)),
    ("columns", lambda: R.SparseSplit(split_dim=0, indices=SI, values=SV, shape=[5, 5, 5], num_split=2)),
    ("axis vector", lambda: R.SparseSplit(split_dim=[0], indices=SI, values=SV, shape=[5, 5], num_split=2)),
    ("negative size", lambda: R.SparseSplit(split_dim=0, indices=SI[:0], values=SV[:0], shape=[4, -4],
                                            num_split=2)),
])
