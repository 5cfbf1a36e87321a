"""Golden values for the gamma, Poisson and binomial samplers (TensorFlow 2.21, graph mode,
fixed seeds; each stateful case is the FIRST run of a freshly created kernel): RandomGamma,
StatelessRandomGammaV2/V3, RandomPoissonV2, RandomPoisson, StatelessRandomPoisson,
StatelessRandomBinomial, and RandomGammaGrad (the gamma samplers' gradient). All values
are TensorFlow's bit for bit (rtol = atol = 0): alphas below, at and above 1, rates 0,
below 10 and from 10 up, binomials by inversion and by BTRS, probabilities 0 and 1,
broadcast counts and probs, every rate, parameter and output type. Run as the header of
common.py says, with <family> = random_dists. With `sys.argv += ['--print'];` added at the
start of that command it prints the values the unit tests in
crates/kernels/tests/unit/random/{gamma,poisson,binomial}.rs hold instead."""
import sys

import numpy as np
import tensorflow as tf

from common import tensor, write

tf.compat.v1.disable_eager_execution()

cases = []


def run(fn, times=1):
    """fn's value in a fresh graph and session, run `times` times (a stateful kernel
    continues its stream from run to run)."""
    g = tf.Graph()
    with g.as_default():
        out = fn()
        with tf.compat.v1.Session(graph=g) as s:
            vals = [s.run(out) for _ in range(times)]
    return vals[0] if times == 1 else vals


def add(name, op, attrs, inputs, fn, rtol=0.0, atol=0.0):
    cases.append({"name": name, "op": op, "attrs": attrs, "inputs": [tensor(i) for i in inputs],
                  "outputs": [tensor(run(fn))], "rtol": rtol, "atol": atol})


def ty(d):
    return {"type": tf.as_dtype(d).name}


def i(v):
    return {"i": v}


# RandomGamma: output shape + alpha.shape; alpha < 1, == 1, > 1 and large.
ALPHAS = np.array([0.3, 1.0, 2.5, 50.0, 1e-3, 0.999, 1.0001, 1e4])
for dt in (np.float32, np.float64, np.float16):
    for shape, alpha, seed, seed2 in (([5], ALPHAS, 7, 11), ([2, 3], ALPHAS[:3].reshape(3, 1), 123, 0),
                                      ([4], np.array(0.7), 0, 9)):
        a = np.asarray(alpha, dt)
        sh = np.array(shape, np.int32)
        add(f"RandomGamma_{np.dtype(dt).name}_{'x'.join(map(str, shape))}_{seed}_{seed2}", "RandomGamma",
            {"T": ty(dt), "S": ty(np.int32), "seed": i(seed), "seed2": i(seed2)}, [sh, a],
            lambda: tf.raw_ops.RandomGamma(shape=sh, alpha=a, seed=seed, seed2=seed2))
sh64 = np.array([3], np.int64)
a_big = np.array([[0.05, 7.0], [1.0, 300.0]], np.float64)
add("RandomGamma_int64_shape_matrix_alpha", "RandomGamma",
    {"T": ty(np.float64), "S": ty(np.int64), "seed": i(-5), "seed2": i(1 << 40)}, [sh64, a_big],
    lambda: tf.raw_ops.RandomGamma(shape=sh64, alpha=a_big, seed=-5, seed2=1 << 40))

# Stateless gamma: V2 (seed) and V3 (key, counter, alg; 1 = Philox, 3 = auto-select).
for dt in (np.float32, np.float64, np.float16):
    a = ALPHAS[:4].astype(dt)
    for seed_dt in (np.int32, np.int64):
        seed = np.array([5, -6], seed_dt)
        sh = np.array([3, 4], np.int32)
        add(f"StatelessRandomGammaV2_{np.dtype(dt).name}_{np.dtype(seed_dt).name}", "StatelessRandomGammaV2",
            {"dtype": ty(dt), "T": ty(np.int32), "Tseed": ty(seed_dt)}, [sh, seed, a],
            lambda: tf.raw_ops.StatelessRandomGammaV2(shape=sh, seed=seed, alpha=a))
    key = np.array([0x1234_5678_9abc_def0], np.uint64)
    counter = np.array([5, 0xffff_ffff_0000_0001], np.uint64)
    for alg in (1, 3):
        alg_v = np.array(alg, np.int32)
        sh = np.array([3, 1, 4], np.int64)
        a2 = a.reshape(1, 4)
        add(f"StatelessRandomGammaV3_{np.dtype(dt).name}_alg{alg}", "StatelessRandomGammaV3",
            {"dtype": ty(dt), "shape_dtype": ty(np.int64)}, [sh, key, counter, alg_v, a2],
            lambda: tf.raw_ops.StatelessRandomGammaV3(shape=sh, key=key, counter=counter, alg=alg_v, alpha=a2))

# Poisson: rates 0, below 10, 10 and above, negative; every rate and output type.
RATES = np.array([0.0, 0.5, 3.0, 9.99, 10.0, 25.0, 1000.0, -1.0])
for r_dt in (np.float32, np.float64, np.float16, np.int32, np.int64):
    for o_dt in (np.float32, np.float64, np.float16, np.int32, np.int64):
        rate = RATES.astype(r_dt)
        sh = np.array([3], np.int32)
        seed = 3 + len(cases)
        add(f"RandomPoissonV2_{np.dtype(r_dt).name}_{np.dtype(o_dt).name}", "RandomPoissonV2",
            {"R": ty(r_dt), "dtype": ty(o_dt), "S": ty(np.int32), "seed": i(seed), "seed2": i(4)}, [sh, rate],
            lambda: tf.raw_ops.RandomPoissonV2(shape=sh, rate=rate, seed=seed, seed2=4, dtype=o_dt))
big_rates = np.array([[1e6, 12.5], [2e9, 64.0]], np.float64)
sh = np.array([2, 2], np.int64)
add("RandomPoissonV2_large_rates_int64", "RandomPoissonV2",
    {"R": ty(np.float64), "dtype": ty(np.int64), "S": ty(np.int64), "seed": i(77), "seed2": i(0)}, [sh, big_rates],
    lambda: tf.raw_ops.RandomPoissonV2(shape=sh, rate=big_rates, seed=77, seed2=0, dtype=tf.int64))
# An infinite rate gives the output type's infinity (0 for integers). (Rates far above an
# integer or half output's largest value make TensorFlow loop forever: not run.)
edge = np.array([np.inf, -np.inf, 1e30], np.float64)
sh = np.array([2], np.int32)
add("RandomPoissonV2_infinite_rates_float", "RandomPoissonV2",
    {"R": ty(np.float64), "dtype": ty(np.float64), "S": ty(np.int32), "seed": i(8), "seed2": i(9)}, [sh, edge],
    lambda: tf.raw_ops.RandomPoissonV2(shape=sh, rate=edge, seed=8, seed2=9, dtype=tf.float64))
edge_i = np.array([np.inf, -np.inf, 40.0], np.float32)
add("RandomPoissonV2_infinite_rates_int32", "RandomPoissonV2",
    {"R": ty(np.float32), "dtype": ty(np.int32), "S": ty(np.int32), "seed": i(8), "seed2": i(9)}, [sh, edge_i],
    lambda: tf.raw_ops.RandomPoissonV2(shape=sh, rate=edge_i, seed=8, seed2=9, dtype=tf.int32))
# The deprecated RandomPoisson cannot be built by TensorFlow 2.21's client (removed from
# GraphDef version 25 on); its kernel is RandomPoissonV2's with R = dtype, so those values.
for dt in (np.float32, np.float64, np.float16):
    rate = RATES.astype(dt)
    sh = np.array([2, 1], np.int32)
    add(f"RandomPoisson_v1_{np.dtype(dt).name}", "RandomPoisson",
        {"dtype": ty(dt), "S": ty(np.int32), "seed": i(21), "seed2": i(22)}, [sh, rate],
        lambda: tf.raw_ops.RandomPoissonV2(shape=sh, rate=rate, seed=21, seed2=22, dtype=dt))
for r_dt, o_dt, seed_dt in ((np.float32, np.int32, np.int64), (np.float64, np.float64, np.int32),
                            (np.int64, np.int64, np.int64), (np.float16, np.float16, np.int32),
                            (np.int32, np.float32, np.int64)):
    lam = RATES.astype(r_dt).reshape(2, 4)
    sh = np.array([3, 2, 4], np.int32)
    seed = np.array([11, 12], seed_dt)
    add(f"StatelessRandomPoisson_{np.dtype(r_dt).name}_{np.dtype(o_dt).name}", "StatelessRandomPoisson",
        {"Rtype": ty(r_dt), "dtype": ty(o_dt), "T": ty(np.int32), "Tseed": ty(seed_dt)}, [sh, seed, lam],
        lambda: tf.raw_ops.StatelessRandomPoisson(shape=sh, seed=seed, lam=lam, dtype=o_dt))

# Binomial: inversion (count * p < 10) and BTRS, p above 0.5 (count - k), p 0 and 1,
# count 0, negative and fractional, count * p at 10; counts and probs broadcast.
COUNTS = np.array([10.0, 100.0, 5.0, 1000.0, 0.0, 7.0, 50.0, 20.0, 20.0, 19.9, -3.0, 4.5, 1e4, 33.0, 100.0, 60.0])
PROBS = np.array([0.3, 0.3, 0.9, 0.6, 0.5, 0.0, 1.0, 0.97, 0.5, 0.5, 0.2, 0.2, 0.001, 0.3, 0.1, 0.51])
for t_dt in (np.float32, np.float64, np.float16):
    for o_dt in (np.float32, np.float64, np.float16, np.int32, np.int64):
        counts, probs = COUNTS.astype(t_dt), PROBS.astype(t_dt)
        sh = np.array([3, 16], np.int32)
        seed = np.array([1, 2 + len(cases)], np.int64)
        add(f"StatelessRandomBinomial_{np.dtype(t_dt).name}_{np.dtype(o_dt).name}", "StatelessRandomBinomial",
            {"T": ty(t_dt), "dtype": ty(o_dt), "S": ty(np.int32), "Tseed": ty(np.int64)},
            [sh, seed, counts, probs],
            lambda: tf.raw_ops.StatelessRandomBinomial(shape=sh, seed=seed, counts=counts, probs=probs, dtype=o_dt))
counts = np.array([[5.0], [40.0], [1e3]], np.float32)
probs = np.array([0.1, 0.45, 0.8, 0.99], np.float32)
sh = np.array([2, 3, 4], np.int64)
seed = np.array([-9, 4], np.int32)
add("StatelessRandomBinomial_broadcast_3x1_by_4", "StatelessRandomBinomial",
    {"T": ty(np.float32), "dtype": ty(np.int32), "S": ty(np.int64), "Tseed": ty(np.int32)},
    [sh, seed, counts, probs],
    lambda: tf.raw_ops.StatelessRandomBinomial(shape=sh, seed=seed, counts=counts, probs=probs, dtype=tf.int32))
c_scalar, p_vec = np.array(12.0, np.float64), np.array([0.25, 0.75, np.nan], np.float64)
sh = np.array([5, 3], np.int32)
seed = np.array([3, 3], np.int64)
add("StatelessRandomBinomial_scalar_count_nan_prob", "StatelessRandomBinomial",
    {"T": ty(np.float64), "dtype": ty(np.float64), "S": ty(np.int32), "Tseed": ty(np.int64)},
    [sh, seed, c_scalar, p_vec],
    lambda: tf.raw_ops.StatelessRandomBinomial(shape=sh, seed=seed, counts=c_scalar, probs=p_vec,
                                               dtype=tf.float64))
inf_c, p2 = np.array([np.inf], np.float64), np.array([0.3], np.float64)
sh = np.array([4, 1], np.int32)
add("StatelessRandomBinomial_infinite_count", "StatelessRandomBinomial",
    {"T": ty(np.float64), "dtype": ty(np.float64), "S": ty(np.int32), "Tseed": ty(np.int64)},
    [sh, seed, inf_c, p2],
    lambda: tf.raw_ops.StatelessRandomBinomial(shape=sh, seed=seed, counts=inf_c, probs=p2, dtype=tf.float64))

# RandomGammaGrad: both series and continued fraction, the edges, broadcasting (computed in
# the element type as Eigen computes it, so float32 too is exact).
grid_a = np.array([0.01, 0.3, 1.0, 2.5, 10.0, 150.0])
grid_x = np.array([1e-4, 0.05, 0.7, 1.0, 3.0, 12.0, 160.0, 400.0])
ga, gx = [v.reshape(-1) for v in np.meshgrid(grid_a, grid_x, indexing="ij")]
ga = np.concatenate([ga, [1.0, 0.5, 2.0, 0.0, -1.0, np.nan, 2.0, 2.0, 2.0, np.inf, 3.0]])
gx = np.concatenate([gx, [0.0, -1.0, np.inf, 1.0, 1.0, 1.0, np.nan, 1e-300, 1e300, 5.0, 3.0]])
for dt in (np.float64, np.float32):
    a, x = ga.astype(dt), gx.astype(dt)
    add(f"RandomGammaGrad_{np.dtype(dt).name}", "RandomGammaGrad", {"T": ty(dt)}, [a, x],
        lambda: tf.raw_ops.RandomGammaGrad(alpha=a, sample=x))
a_col, x_mat = np.array([[0.5], [4.0]], np.float32), np.array([[0.2, 1.5, 6.0], [3.0, 4.5, 9.0]], np.float32)
add("RandomGammaGrad_broadcast", "RandomGammaGrad", {"T": ty(np.float32)}, [a_col, x_mat],
    lambda: tf.raw_ops.RandomGammaGrad(alpha=a_col, sample=x_mat))


def print_unit_values():
    """The values the Rust unit tests hold (second runs of stateful kernels included)."""
    np.set_printoptions(precision=17, floatmode="unique", linewidth=120)
    a = np.array([0.3, 1.0, 2.5, 50.0])
    print("RandomGamma f64 [3] x alpha, seeds 7, 11, runs 1 and 2:")
    for v in run(lambda: tf.raw_ops.RandomGamma(shape=[3], alpha=a, seed=7, seed2=11), times=2):
        print(repr(v.ravel()))
    print("RandomGamma f32 [2] x [0.5, 4], seeds 1, 2:",
          repr(run(lambda: tf.raw_ops.RandomGamma(shape=[2], alpha=np.array([0.5, 4.0], np.float32),
                                                  seed=1, seed2=2)).ravel()))
    print("StatelessRandomGammaV3 f64 shape [2, 4], key 42, counter [7, 0], alg 3:",
          repr(run(lambda: tf.raw_ops.StatelessRandomGammaV3(
              shape=[2, 4], key=np.array([42], np.uint64), counter=np.array([7, 0], np.uint64),
              alg=np.int32(3), alpha=a)).ravel()))
    r = np.array([0.0, 2.0, 10.0, 250.0])
    print("RandomPoissonV2 f64 -> int64 [3] x rates, seeds 3, 4, runs 1 and 2:")
    for v in run(lambda: tf.raw_ops.RandomPoissonV2(shape=[3], rate=r, seed=3, seed2=4, dtype=tf.int64), times=2):
        print(repr(v.ravel()))
    print("StatelessRandomPoisson f32 -> int32 shape [3, 4], seed [5, 6]:",
          repr(run(lambda: tf.raw_ops.StatelessRandomPoisson(shape=[3, 4], seed=np.array([5, 6], np.int64),
                                                             lam=r.astype(np.float32), dtype=tf.int32)).ravel()))
    c = np.array([10.0, 100.0, 0.0, 50.0, 1e4], np.float64)
    p = np.array([0.3, 0.7, 0.5, 1.0, 0.02], np.float64)
    print("StatelessRandomBinomial f64 -> int64 shape [2, 5], seed [1, 2]:",
          repr(run(lambda: tf.raw_ops.StatelessRandomBinomial(shape=[2, 5], seed=np.array([1, 2], np.int64),
                                                              counts=c, probs=p, dtype=tf.int64)).ravel()))
    print("StatelessRandomBinomial f32 counts [[4], [40]] probs [0.25, 0.9] -> f32 shape [2, 2, 2], seed [7, 8]:",
          repr(run(lambda: tf.raw_ops.StatelessRandomBinomial(
              shape=[2, 2, 2], seed=np.array([7, 8], np.int32), counts=np.array([[4.0], [40.0]], np.float32),
              probs=np.array([0.25, 0.9], np.float32), dtype=tf.float32)).ravel()))
    ga = np.array([0.3, 2.5, 2.5, 40.0])
    gx = np.array([0.02, 1.7, 6.0, 38.0])
    print("RandomGammaGrad f64:", repr(run(lambda: tf.raw_ops.RandomGammaGrad(alpha=ga, sample=gx)).ravel()))
    print("RandomGammaGrad f32:", repr(run(lambda: tf.raw_ops.RandomGammaGrad(
        alpha=ga.astype(np.float32), sample=gx.astype(np.float32))).ravel()))


if "--print" in sys.argv:
    print_unit_values()
else:
    write("random_dists", cases)
