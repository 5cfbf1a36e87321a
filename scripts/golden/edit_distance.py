"""Golden values for EditDistance (tf.edit_distance) from TensorFlow 2.21's CPU kernel,
written to crates/kernels/tests/golden/edit_distance.json: random sequences of several types
(strings too), normalize on and off, ranks 2-4, hypothesis and truth of different dense
shapes (the output takes the larger leading dims), groups on one side only (an empty truth
gives inf normalized, both empty 0), NaN values (never equal). The error class and message
for bad inputs are printed (crates/kernels/src/sparse/edit_distance_tests.rs asserts them).
Run it as every generator here runs (common.py's header says how)."""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from common import case_list, print_error_classes, random_values, raw_op_case, write  # noqa: E402

R = tf.raw_ops
rng = np.random.RandomState(20261210)
cases, case = case_list(raw_op_case)


def vals(dtype, n):
    return random_values(rng, dtype, n, [b"a", b"b", b"c", b"\xc3\xa9"], 3)


def seqs(shape, dtype, fill):
    """Sorted sequences: each group of `shape[:-1]` a random-length prefix of the last dim."""
    lead, width = shape[:-1], shape[-1]
    rows = []
    for g in np.ndindex(*lead):
        ln = rng.randint(0, width + 1) if rng.rand() < fill else 0
        rows.extend(list(g) + [p] for p in range(ln))
    idx = np.array(rows, np.int64).reshape(-1, len(shape))
    return idx, vals(dtype, len(idx)), np.array(shape, np.int64)


def add(name, h, t, normalize, dtype):
    case(name, "EditDistance", [("hypothesis_indices", h[0]), ("hypothesis_values", h[1]),
                                ("hypothesis_shape", h[2]), ("truth_indices", t[0]), ("truth_values", t[1]),
                                ("truth_shape", t[2])],
         {"T": dtype}, attrs={"normalize": normalize}, rtol=0.0, atol=0.0)


for dtype in ("int32", "int64", "string", "float32", "bool", "uint8", "float64", "int16"):
    for hs, ts in [((4, 5), (4, 6)), ((2, 3, 4), (2, 3, 4)), ((3, 2, 4), (2, 4, 3)), ((2, 2, 2, 3), (2, 2, 2, 3))]:
        h, t = seqs(hs, dtype, 0.8), seqs(ts, dtype, 0.8)
        for normalize in (False, True):
            add("%s_%s_%s_%d" % (dtype, "x".join(map(str, hs)), "x".join(map(str, ts)), normalize), h, t,
                normalize, dtype)

E = (np.zeros((0, 2), np.int64), np.zeros(0, np.int32), np.array([2, 3], np.int64))
H = (np.array([[0, 0], [0, 1], [1, 0]], np.int64), np.array([1, 2, 3], np.int32), np.array([2, 3], np.int64))
T1 = (np.array([[1, 0], [1, 1]], np.int64), np.array([3, 4], np.int32), np.array([3, 3], np.int64))
NAN = (np.array([[0, 0], [0, 1]], np.int64), np.array([np.nan, 1.0], np.float32), np.array([1, 2], np.int64))
U = (np.array([[1, 0], [0, 0]], np.int64), np.array([1, 2], np.int32), np.array([2, 2], np.int64))
T0 = (np.array([[0, 0]], np.int64), np.array([1], np.int32), np.array([2, 2], np.int64))
for normalize in (False, True):
    add("both_empty_%d" % normalize, E, E, normalize, "int32")
    add("empty_truth_%d" % normalize, H, E, normalize, "int32")
    add("empty_hypothesis_%d" % normalize, E, H, normalize, "int32")
    add("one_sided_groups_%d" % normalize, H, T1, normalize, "int32")
    add("nan_%d" % normalize, NAN, NAN, normalize, "float32")
    add("unsorted_hypothesis_%d" % normalize, U, T0, normalize, "int32")

write("edit_distance", cases)


def ed(h, t, normalize=True):
    return lambda: R.EditDistance(hypothesis_indices=h[0], hypothesis_values=h[1], hypothesis_shape=h[2],
                                  truth_indices=t[0], truth_values=t[1], truth_shape=t[2], normalize=normalize)


V1 = (np.array([[0]], np.int64), np.array([1], np.int32), np.array([1], np.int64))
print_error_classes([
    ("rank 1", ed(V1, V1)),
    ("ranks differ", ed(H, (np.array([[0, 0, 0]], np.int64), np.array([1], np.int32), np.array([1, 1, 2], np.int64)))),
    ("no elements", ed((E[0], E[1], np.array([0, 2], np.int64)), (E[0], E[1], np.array([0, 2], np.int64)))),
    ("outside", ed((np.array([[5, 0]], np.int64), np.array([1], np.int32), np.array([1, 2], np.int64)), T0)),
    ("negative dim", ed((H[0], H[1], np.array([2, -3], np.int64)), H)),
    ("values", ed((H[0], H[1][:2], H[2]), H)),
    ("indices vector", ed((np.array([0, 0], np.int64), H[1][:1], H[2]), H)),
    ("truth columns", ed(H, (np.array([[0, 0, 0]], np.int64), np.array([1], np.int32), np.array([2, 3], np.int64)))),
])
