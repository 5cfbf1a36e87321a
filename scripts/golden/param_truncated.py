"""Golden values for StatelessParameterizedTruncatedNormal and ParameterizedTruncatedNormal
(TensorFlow 2.21, eager raw ops): each of TensorFlow's three samplers (normal proposals when
1.3 standard deviations of one side lie inside the bounds, uniform proposals on narrow
intervals, the exponential sampler in a tail), bounds mirrored for one-sided lower-infinite
intervals, broadcast parameters, float and double. Outputs are kept small: TensorFlow draws
them in one shard (larger outputs are split across threads, each skipping to its own part
of the stream). Each stateful case has its own seeds, so it is its kernel's first run. Run
as the header of common.py says, with <family> = param_truncated."""
import numpy as np
import tensorflow as tf

from common import case_list, print_error_classes, write

cases, case = case_list()
INF = np.inf
PARAMS = [("randn", 0.0, 1.0, -3.0, 3.0), ("uniform", 1.0, 2.0, 0.5, 1.5), ("tail", 0.0, 1.0, 2.0, INF),
          ("mirrored", 3.0, 0.5, -INF, 1.5), ("far_tail", 0.0, 1.0, 6.0, 7.0), ("away", -1.0, 1.5, 1.0, 4.0),
          ("wide_uniform", 0.0, 1.0, -1.0, 1.0)]
for dt in ["float32", "float64"]:
    for k, (pname, mu, sd, lo, hi) in enumerate(PARAMS):
        for shape in [[7], [3, 4]]:
            p = [np.array(v, dt) for v in (mu, sd, lo, hi)]
            seed = np.array([k + 11, len(shape) * 7], np.int64)
            case("stateless_%s_%s_%s" % (pname, dt, "x".join(map(str, shape))), "StatelessParameterizedTruncatedNormal",
                 [("shape", np.array(shape, np.int64)), ("seed", seed), ("means", p[0]), ("stddevs", p[1]),
                  ("minvals", p[2]), ("maxvals", p[3])], {"dtype": dt, "S": "int64", "Tseed": "int64"}, {})
    # Broadcasting: per-column means and bounds, a [2, 1] stddev.
    means = np.array([0.0, 10.0, -10.0], dt)
    sds = np.array([[1.0], [0.3]], dt)
    los = np.array([-2.0], dt)
    his = np.array([[2.0, 11.0, INF], [0.5, 10.5, -1.0]], dt)
    case("stateless_broadcast_" + dt, "StatelessParameterizedTruncatedNormal",
         [("shape", np.array([5, 2, 3], np.int32)), ("seed", np.array([3, 4], np.int32)), ("means", means),
          ("stddevs", sds), ("minvals", los), ("maxvals", his)], {"dtype": dt, "S": "int32", "Tseed": "int32"}, {})
    # Stateful: per-row parameters, and shared ones (drawn in batches of 100).
    for j, (shape, p) in enumerate([
        ([3, 4], [np.array([0.0, 5.0, -2.0], dt), np.array(1.0, dt), np.array([-1.0, 4.5, -INF], dt),
                  np.array([1.0, INF, -3.0], dt)]),
        ([2, 5], [np.array([0.0], dt), np.array([2.0], dt), np.array(0.5, dt), np.array(1.5, dt)]),
        ([4, 6], [np.array(0.0, dt), np.array(1.0, dt), np.array(-0.4, dt), np.array(0.4, dt)]),
    ]):
        seed = 100 + 10 * j + (dt == "float64")
        case("stateful_%d_%s" % (j, dt), "ParameterizedTruncatedNormal",
             [("shape", np.array(shape, np.int32)), ("means", p[0]), ("stdevs", p[1]), ("minvals", p[2]),
              ("maxvals", p[3])], {"dtype": dt, "T": "int32"}, {"seed": seed, "seed2": 7})

print_error_classes([
    ("negative stddev", lambda: tf.raw_ops.StatelessParameterizedTruncatedNormal(
        shape=[4], seed=[1, 2], means=0.0, stddevs=-1.0, minvals=-1.0, maxvals=1.0)),
    ("minval above maxval", lambda: tf.raw_ops.StatelessParameterizedTruncatedNormal(
        shape=[4], seed=[1, 2], means=0.0, stddevs=1.0, minvals=1.0, maxvals=-1.0)),
    ("both bounds infinite", lambda: tf.raw_ops.StatelessParameterizedTruncatedNormal(
        shape=[4], seed=[1, 2], means=0.0, stddevs=1.0, minvals=-np.inf, maxvals=np.inf)),
    ("incompatible params", lambda: tf.raw_ops.StatelessParameterizedTruncatedNormal(
        shape=[4, 3], seed=[1, 2], means=[0.0, 1.0], stddevs=[1.0, 1.0, 1.0], minvals=-1.0, maxvals=1.0)),
    ("shape not ending in params", lambda: tf.raw_ops.StatelessParameterizedTruncatedNormal(
        shape=[4, 3], seed=[1, 2], means=[0.0, 1.0], stddevs=1.0, minvals=-1.0, maxvals=1.0)),
    ("stateful 2-D means", lambda: tf.raw_ops.ParameterizedTruncatedNormal(
        shape=[2, 5], means=[[0.0]], stdevs=1.0, minvals=-1.0, maxvals=1.0)),
])
write("param_truncated", cases)
