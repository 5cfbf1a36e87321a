"""Golden values for the CTC kernels (CTCLoss with its fused gradient, CTCGreedyDecoder,
CTCBeamSearchDecoder) from TensorFlow 2.21's CPU kernels, written to
crates/kernels/tests/golden/ctc.json, and the error class TensorFlow raises for each bad
input (printed). Run it as every generator here runs (common.py's header says how)."""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from common import print_error_classes, tensor, with_tolerance, write  # noqa: E402

R = tf.raw_ops
rng = np.random.RandomState(20261206)
cases = []
TOL = {"float32": (2e-5, 2e-6), "float64": (1e-7, 1e-8)}


def case(name, op, inputs, attrs, outs, dt):
    c = {"name": name, "op": op, "attrs": attrs, "inputs": [tensor(x) for x in inputs],
         "outputs": [tensor(np.asarray(o)) for o in outs]}
    cases.append(with_tolerance(c, *TOL[dt]))


def sparse_labels(seqs):
    idx = [[b, i] for b, s in enumerate(seqs) for i in range(len(s))]
    val = [v for s in seqs for v in s]
    return np.array(idx, np.int64).reshape(-1, 2), np.array(val, np.int32)


def loss_case(name, dt, x, seqs, seq_len, collapse=False, merge=True, ignore=False):
    idx, val = sparse_labels(seqs)
    sl = np.array(seq_len, np.int32)
    loss, grad = R.CTCLoss(inputs=tf.constant(x), labels_indices=idx, labels_values=val, sequence_length=sl,
                           preprocess_collapse_repeated=collapse, ctc_merge_repeated=merge,
                           ignore_longer_outputs_than_inputs=ignore)
    attrs = {"T": {"type": dt}, "preprocess_collapse_repeated": {"b": collapse},
             "ctc_merge_repeated": {"b": merge}, "ignore_longer_outputs_than_inputs": {"b": ignore}}
    case(name, "CTCLoss", [x, idx, val, sl], attrs, [loss.numpy(), grad.numpy()], dt)
    if dt == "float64":
        # TensorFlow evaluates the gradient's exponential in single precision (`expf`) for
        # both types, so its float64 gradient is exact only to about one float ulp.
        with_tolerance(cases[-1], 1e-6, 1e-7)


for dt in ["float32", "float64"]:
    # 12 steps, 4 entries, 6 classes (blank = 5); labels with repeats and a label equal to
    # the blank (which ends the sequence).
    x = (rng.randn(12, 4, 6) * 2).astype(dt)
    seqs = [[0, 1, 1, 2], [3], [4, 4, 0], [2, 0, 2, 2, 1]]
    lens = [12, 5, 9, 11]
    loss_case("CTCLoss_%s_default" % dt, dt, x, seqs, lens)
    loss_case("CTCLoss_%s_collapse" % dt, dt, x, seqs, lens, collapse=True)
    loss_case("CTCLoss_%s_no_merge" % dt, dt, x, seqs, lens, merge=False)
    loss_case("CTCLoss_%s_collapse_no_merge" % dt, dt, x, seqs, lens, collapse=True, merge=False)
    loss_case("CTCLoss_%s_blank_label" % dt, dt, x, [[1, 5], [2], [0, 3, 5, 5], [4]], lens)
    # Entries whose labels are longer than their sequence (and one of length 0) are ignored.
    loss_case("CTCLoss_%s_ignore_longer" % dt, dt, x, [[0, 1, 2, 3, 4, 0], [1], [2, 2], [3]], [4, 0, 12, 7],
              ignore=True)
    # Large logits (saturated softmax) and one class only besides the blank.
    big = (rng.randn(7, 2, 3) * 30).astype(dt)
    loss_case("CTCLoss_%s_large" % dt, dt, big, [[0, 1], [1, 1, 0]], [7, 6])
    loss_case("CTCLoss_%s_two_classes" % dt, dt, x[:, :2, :2].copy(), [[0, 0, 0], [0]], [12, 3])

    # Greedy decoding: merge or not, the blank last, first or in the middle.
    logits = rng.randn(10, 3, 5).astype(dt)
    logits[3:6, 0, 2] = 5.0  # a run of one class, to be merged or not
    sl = np.array([10, 6, 0], np.int32)
    for merge in (False, True):
        for blank in (-1, 0, 2):
            out = R.CTCGreedyDecoder(inputs=tf.constant(logits), sequence_length=sl, merge_repeated=merge, blank_index=blank)
            attrs = {"T": {"type": dt}, "merge_repeated": {"b": merge}, "blank_index": {"i": blank}}
            case("CTCGreedyDecoder_%s_merge%d_blank%d" % (dt, merge, blank), "CTCGreedyDecoder", [logits, sl],
                 attrs, [o.numpy() for o in out], dt)

    # Beam search: widths 1, 3 and 12, several paths, merge or not.
    logits = rng.randn(9, 3, 5).astype(dt)
    logits[2:5, 1, 1] = 3.0
    sl = np.array([9, 7, 3], np.int32)
    for width, paths, merge in [(1, 1, True), (3, 2, True), (3, 3, False), (12, 4, True), (12, 2, False)]:
        out = R.CTCBeamSearchDecoder(inputs=tf.constant(logits), sequence_length=sl, beam_width=width, top_paths=paths,
                                     merge_repeated=merge)
        flat = list(out.decoded_indices) + list(out.decoded_values) + list(out.decoded_shape) + [out.log_probability]
        attrs = {"T": {"type": dt}, "beam_width": {"i": width}, "top_paths": {"i": paths},
                 "merge_repeated": {"b": merge}}
        case("CTCBeamSearchDecoder_%s_w%d_p%d_m%d" % (dt, width, paths, merge), "CTCBeamSearchDecoder",
             [logits, sl], attrs, [o.numpy() for o in flat], dt)

write("ctc", cases)

# TensorFlow's error classes for bad input (the kernel tests assert the same codes).
x = tf.zeros([4, 2, 3])
idx = tf.constant([[0, 0], [1, 0]], tf.int64)
val = tf.constant([0, 1], tf.int32)
sl = tf.constant([4, 4], tf.int32)
bad = [
    ("CTCLoss inputs rank 2", lambda: R.CTCLoss(inputs=tf.zeros([4, 3]), labels_indices=idx, labels_values=val,
                                                sequence_length=sl)),
    ("CTCLoss seq_len size", lambda: R.CTCLoss(inputs=x, labels_indices=idx, labels_values=val,
                                               sequence_length=tf.constant([4], tf.int32))),
    ("CTCLoss rows differ", lambda: R.CTCLoss(inputs=x, labels_indices=idx, labels_values=tf.constant([0], tf.int32),
                                              sequence_length=sl)),
    ("CTCLoss seq_len > time", lambda: R.CTCLoss(inputs=x, labels_indices=idx, labels_values=val,
                                                 sequence_length=tf.constant([5, 4], tf.int32))),
    ("CTCLoss empty label", lambda: R.CTCLoss(inputs=x, labels_indices=tf.constant([[0, 0]], tf.int64),
                                              labels_values=tf.constant([0], tf.int32), sequence_length=sl)),
    ("CTCLoss not enough time", lambda: R.CTCLoss(inputs=x, labels_indices=tf.constant([[0, 0], [0, 1], [0, 2], [0, 3], [0, 4], [1, 0]], tf.int64),
                                                  labels_values=tf.constant([0, 1, 0, 1, 0, 1], tf.int32), sequence_length=sl)),
    ("CTCLoss negative label", lambda: R.CTCLoss(inputs=x, labels_indices=idx, labels_values=tf.constant([-1, 0], tf.int32),
                                                 sequence_length=sl)),
    ("CTCLoss unordered", lambda: R.CTCLoss(inputs=x, labels_indices=tf.constant([[1, 0], [0, 0]], tf.int64),
                                            labels_values=val, sequence_length=sl)),
    ("CTCLoss label after blank", lambda: R.CTCLoss(inputs=x, labels_indices=tf.constant([[0, 0], [0, 1], [1, 0]], tf.int64),
                                                    labels_values=tf.constant([2, 0, 1], tf.int32), sequence_length=sl)),
    ("Greedy empty", lambda: R.CTCGreedyDecoder(inputs=tf.zeros([0, 2, 3]), sequence_length=sl)),
    ("Greedy seq_len > time", lambda: R.CTCGreedyDecoder(inputs=x, sequence_length=tf.constant([5, 1], tf.int32))),
    ("Greedy batch", lambda: R.CTCGreedyDecoder(inputs=x, sequence_length=tf.constant([1], tf.int32))),
    ("Greedy blank_index", lambda: R.CTCGreedyDecoder(inputs=x, sequence_length=sl, blank_index=3)),
    ("Beam more paths than width", lambda: R.CTCBeamSearchDecoder(inputs=x, sequence_length=sl, beam_width=2, top_paths=3)),
]
print_error_classes(bad)
