"""Golden values for SparseConditionalAccumulator (run once with the venv:
`.venv/bin/python scripts/golden/sparse_accumulator.py`); prints each case's take outputs
(indices, values, dense shape), which are copied by hand into
crates/kernels/tests/unit/data_flow/sparse_accumulator.rs (`golden_*` tests). Each case
applies sparse gradients (local_step, indices, values, shape or None) to one accumulator in
a local TensorFlow 2.21 session (TF 1.x behaviour) and takes `num_required` of them."""
import os
import sys

sys.path.pop(0)  # scripts/golden/random.py would shadow the standard library
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

tf.compat.v1.disable_v2_behavior()

rs = np.random.RandomState(7)


def vals(n, w, dt):
    # Multiples of 1/64 within (-2, 2): exact in float16 too, so inputs are the same numbers.
    return (rs.randint(-127, 128, size=(n, w)) / 64.0).astype(dt)


def case(name, dtype, shape, grads, num_required, reduction="MEAN", global_step=None):
    g = tf.Graph()
    with g.as_default():
        acc = tf.compat.v1.SparseConditionalAccumulator(dtype, shape=shape, reduction_type=reduction)
        applies = [acc.apply_grad(tf.constant(i, tf.int64), tf.constant(v, dtype), s, local_step=st)
                   for st, i, v, s in grads]
        take = acc.take_grad(num_required)
        with tf.compat.v1.Session() as sess:
            if global_step is not None:
                sess.run(acc.set_global_step(global_step))
            for a in applies:
                sess.run(a)
            idx, v, dense = sess.run(take)
    print(f"== {name} ({np.dtype(dtype.as_numpy_dtype).name}, {reduction}, shape {shape})")
    for st, i, gv, s in grads:
        print(f"  apply step {st} indices {list(i)} shape {s} values {np.asarray(gv).reshape(-1).tolist()}")
    print(f"  take {num_required}: indices {idx.tolist()}")
    print(f"  values {v.reshape(-1).tolist()}")
    print(f"  shape {dense.tolist()}")


f32, f64, f16 = tf.float32, tf.float64, tf.float16
case("mean_float32_overlapping", f32, [6, 3],
     [(0, [0, 2, 5], vals(3, 3, np.float32), [6, 3]), (0, [2, 3], vals(2, 3, np.float32), None),
      (0, [0, 3, 5], vals(3, 3, np.float32), [6, 3])], 3)
case("sum_float64_overlapping", f64, [6, 3],
     [(0, [1, 4], vals(2, 3, np.float64) / 3.0, None), (0, [0, 1, 4], vals(3, 3, np.float64) / 7.0, None)], 2, "SUM")
case("mean_float16_rounding", f16, [4, 2],
     [(0, [1], [[1.0, 2.0]], None), (0, [1, 2], [[1.0, 3.0], [0.1, 0.2]], None), (0, [1], [[1.0, 3.0]], None)], 3)
case("mean_unsorted_repeated", f32, [4, 2],
     [(0, [3, 1, 3], [[1, 1], [2, 2], [3, 3]], None), (0, [3, 3], [[10, 10], [20, 20]], None),
      (0, [0, 3], [[5, 5], [7, 7]], None)], 3)
case("unknown_shape_rank3", f64, None,
     [(0, [2, 0], np.arange(8.0).reshape(2, 2, 2), None), (0, [0, 2], np.ones((2, 2, 2)), None)], 2)
case("scalar_shape_like_sync_replicas", f32, (),
     [(0, [4], [[0.5, 0.25]], [9, 2]), (0, [1, 4], [[1.0, 1.0], [0.5, 0.75]], [9, 2])], 2)
case("stale_dropped", f32, [4, 2],
     [(3, [0], [[100.0, 100.0]], None), (4, [2], [[1.5, 2.5]], None), (9, [2], [[0.5, 0.5]], None)], 2,
     global_step=4)
