"""Sweep cases: public functions of tf.nn, tf.math, tf.linalg, tf.image, tf.strings,
tf.sparse, tf.io, tf.random, tf.compat.v1.nn (RNNs), feature columns, optimizers, losses
and metrics, each on fed placeholders in graph mode."""

import numpy as np

from harness import Case

R = np.random.default_rng(11)


def u(*shape, lo=-1.0, hi=1.0):
    return R.uniform(lo, hi, size=shape).astype(np.float32)


def pos(*shape):
    return u(*shape, lo=0.1, hi=2.0)


def ints(*shape, hi=5, dtype=np.int32):
    return R.integers(0, hi, size=shape).astype(dtype)


def strs(*shape):
    words = np.array([b"a", b"b c", b"Dog", b"cat 12", b"x,y", b"  hi "], dtype=object)
    return words[R.integers(0, len(words), size=shape)]


def F(name, f, *vals, grads=True, random=False):
    """A case applying `f(tf, *placeholders)` to placeholders fed with `vals`."""

    def build():
        import tensorflow as tf
        feeds, xs = {}, []
        for v in vals:
            v = np.asarray(v)
            dt = tf.string if v.dtype == object else tf.as_dtype(v.dtype)
            p = tf.compat.v1.placeholder(dt, v.shape)
            feeds[p] = v
            xs.append(p)
        y = f(tf, *xs)
        if isinstance(y, dict):
            y = [y[k] for k in sorted(y)]
        if hasattr(y, "indices") and hasattr(y, "dense_shape"):  # SparseTensor
            y = [y.indices, y.values, y.dense_shape]
        ys = list(y) if isinstance(y, (list, tuple)) else [y]
        flat = []
        for t in ys:
            if hasattr(t, "indices") and hasattr(t, "dense_shape"):
                flat += [t.indices, t.values, t.dense_shape]
            elif hasattr(t, "flat_values"):
                flat += [t.flat_values] + list(t.nested_row_splits)
            else:
                flat.append(t)
        return feeds, flat

    return Case(name, build, grads=grads, random=random)


def nn():
    x4 = u(2, 6, 6, 3)
    return [
        F("nn.relu", lambda tf, x: tf.nn.relu(x), u(3, 4)),
        F("nn.relu6", lambda tf, x: tf.nn.relu6(x * 8), u(3, 4)),
        F("nn.elu", lambda tf, x: tf.nn.elu(x), u(3, 4)),
        F("nn.selu", lambda tf, x: tf.nn.selu(x), u(3, 4)),
        F("nn.gelu", lambda tf, x: tf.nn.gelu(x), u(3, 4)),
        F("nn.gelu_approx", lambda tf, x: tf.nn.gelu(x, approximate=True), u(3, 4)),
        F("nn.silu", lambda tf, x: tf.nn.silu(x), u(3, 4)),
        F("nn.softplus", lambda tf, x: tf.nn.softplus(x), u(3, 4)),
        F("nn.softsign", lambda tf, x: tf.nn.softsign(x), u(3, 4)),
        F("nn.leaky_relu", lambda tf, x: tf.nn.leaky_relu(x, 0.1), u(3, 4)),
        F("nn.crelu", lambda tf, x: tf.nn.crelu(x), u(3, 4)),
        F("nn.sigmoid", lambda tf, x: tf.nn.sigmoid(x), u(3, 4)),
        F("nn.softmax", lambda tf, x: tf.nn.softmax(x, axis=0), u(3, 4)),
        F("nn.log_softmax", lambda tf, x: tf.nn.log_softmax(x), u(3, 4)),
        F("nn.bias_add", lambda tf, x, b: tf.nn.bias_add(x, b), u(3, 4), u(4)),
        F("nn.l2_normalize", lambda tf, x: tf.nn.l2_normalize(x, axis=1), u(3, 4)),
        F("nn.l2_loss", lambda tf, x: tf.nn.l2_loss(x), u(3, 4)),
        F("nn.moments", lambda tf, x: tf.nn.moments(x, [0, 1, 2]), x4),
        F("nn.batch_normalization", lambda tf, x, m, v: tf.nn.batch_normalization(x, m, v, 0.1, 1.2, 1e-3),
          x4, u(3), pos(3)),
        F("nn.fused_batch_norm", lambda tf, x, s, o: tf.compat.v1.nn.fused_batch_norm(x, s, o)[:3], x4, pos(3), u(3)),
        F("nn.fused_batch_norm_infer",
          lambda tf, x, s, o, m, v: tf.compat.v1.nn.fused_batch_norm(x, s, o, m, v, is_training=False)[0],
          x4, pos(3), u(3), u(3), pos(3)),
        F("nn.conv1d", lambda tf, x, w: tf.nn.conv1d(x, w, 1, "SAME"), u(2, 7, 3), u(3, 3, 4)),
        F("nn.conv2d", lambda tf, x, w: tf.nn.conv2d(x, w, 2, "VALID"), x4, u(3, 3, 3, 4)),
        F("nn.conv2d_transpose", lambda tf, x, w: tf.nn.conv2d_transpose(x, w, [2, 12, 12, 2], 2), x4, u(3, 3, 2, 3)),
        F("nn.conv3d", lambda tf, x, w: tf.nn.conv3d(x, w, [1] * 5, "SAME"), u(1, 4, 4, 4, 2), u(2, 2, 2, 2, 3)),
        F("nn.depthwise_conv2d", lambda tf, x, w: tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME"), x4,
          u(3, 3, 3, 2)),
        F("nn.separable_conv2d", lambda tf, x, d, p: tf.nn.separable_conv2d(x, d, p, [1, 1, 1, 1], "VALID"), x4,
          u(3, 3, 3, 2), u(1, 1, 6, 4)),
        F("nn.atrous_conv2d", lambda tf, x, w: tf.nn.atrous_conv2d(x, w, 2, "SAME"), x4, u(3, 3, 3, 2)),
        F("nn.max_pool2d", lambda tf, x: tf.nn.max_pool2d(x, 2, 2, "SAME"), x4),
        F("nn.avg_pool2d", lambda tf, x: tf.nn.avg_pool2d(x, 3, 1, "SAME"), x4),
        F("nn.max_pool1d", lambda tf, x: tf.nn.max_pool1d(x, 2, 2, "VALID"), u(2, 6, 3)),
        F("nn.max_pool3d", lambda tf, x: tf.nn.max_pool3d(x, 2, 2, "VALID"), u(1, 4, 4, 4, 2)),
        F("nn.avg_pool3d", lambda tf, x: tf.nn.avg_pool3d(x, 2, 2, "VALID"), u(1, 4, 4, 4, 2)),
        F("nn.max_pool_with_argmax", lambda tf, x: tf.nn.max_pool_with_argmax(x, 2, 2, "VALID")[0], x4),
        F("nn.local_response_normalization", lambda tf, x: tf.nn.local_response_normalization(x, 2), x4),
        F("nn.dropout", lambda tf, x: tf.nn.dropout(x, 0.5, seed=1), u(3, 4), random=True),
        F("nn.softmax_cross_entropy_with_logits",
          lambda tf, x, y: tf.nn.softmax_cross_entropy_with_logits(labels=tf.nn.softmax(y), logits=x), u(3, 4), u(3, 4)),
        F("nn.sparse_softmax_cross_entropy_with_logits",
          lambda tf, x, y: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=x), u(3, 4), ints(3, hi=4)),
        F("nn.sigmoid_cross_entropy_with_logits",
          lambda tf, x, y: tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.sigmoid(y), logits=x), u(3, 4), u(3, 4)),
        F("nn.weighted_cross_entropy_with_logits",
          lambda tf, x, y: tf.nn.weighted_cross_entropy_with_logits(tf.sigmoid(y), x, 2.0), u(3, 4), u(3, 4)),
        F("nn.embedding_lookup", lambda tf, p, i: tf.nn.embedding_lookup(p, i), u(6, 3), ints(4, hi=6)),
        F("nn.embedding_lookup_sparse",
          lambda tf, p: tf.nn.embedding_lookup_sparse(
              p, tf.SparseTensor([[0, 0], [0, 1], [2, 0]], tf.constant([1, 4, 2], tf.int64), [3, 2]), None,
              combiner="mean"), u(6, 3)),
        F("nn.embedding_lookup_sparse_sqrtn",
          lambda tf, p, w: tf.nn.embedding_lookup_sparse(
              p, tf.SparseTensor([[0, 0], [0, 1], [2, 0]], tf.constant([1, 4, 2], tf.int64), [3, 2]),
              tf.SparseTensor([[0, 0], [0, 1], [2, 0]], w, [3, 2]), combiner="sqrtn"), u(6, 3), pos(3)),
        F("nn.top_k", lambda tf, x: tf.nn.top_k(x, 2), u(3, 5)),
        F("nn.in_top_k", lambda tf, x, t: tf.math.in_top_k(t, x, 2), u(3, 5), ints(3), grads=False),
        F("nn.ctc_loss", lambda tf, x: tf.nn.ctc_loss(tf.constant([[1, 2], [1, 0]]), x, tf.constant([2, 1]),
                                                      tf.constant([4, 4]), logits_time_major=False, blank_index=0),
          u(2, 4, 3)),
        F("nn.log_poisson_loss", lambda tf, x, t: tf.nn.log_poisson_loss(t, x), u(3, 4), pos(3, 4)),
        F("nn.compute_average_loss", lambda tf, x: tf.nn.compute_average_loss(x), u(4)),
        F("nn.normalize_moments", lambda tf, m, v: tf.nn.normalize_moments(4.0, m, v, None)[1], u(3), pos(3)),
        F("nn.zero_fraction", lambda tf, x: tf.math.zero_fraction(tf.nn.relu(x)), u(3, 4), grads=False),
        F("nn.space_to_depth", lambda tf, x: tf.nn.space_to_depth(x, 2), x4),
        F("nn.depth_to_space", lambda tf, x: tf.nn.depth_to_space(x, 2), u(1, 2, 2, 8)),
        F("nn.space_to_batch", lambda tf, x: tf.space_to_batch(x, [2, 2], [[0, 0], [0, 0]]), x4),
        F("nn.batch_to_space", lambda tf, x: tf.compat.v1.batch_to_space(x, [[0, 0], [0, 0]], 2), u(4, 2, 2, 1)),
    ]


def math():
    a, b = u(3, 4), u(3, 4)
    cases = []
    for n in ["abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "ceil", "cos", "cosh", "digamma", "erf",
              "erfc", "erfinv", "exp", "expm1", "floor", "is_finite", "is_inf", "is_nan", "lgamma", "log",
              "log1p", "log_sigmoid", "ndtri", "negative", "reciprocal", "rint", "round", "rsqrt", "sigmoid",
              "sign", "sin", "sinh", "softplus", "sqrt", "square", "tan", "tanh", "bessel_i0e", "bessel_i1e",
              "reciprocal_no_nan", "softsign"]:
        v = {"acos": u(3, 4, lo=-0.9, hi=0.9), "asin": u(3, 4, lo=-0.9, hi=0.9), "atanh": u(3, 4, lo=-0.9, hi=0.9),
             "erfinv": u(3, 4, lo=-0.9, hi=0.9), "ndtri": u(3, 4, lo=0.05, hi=0.95),
             "acosh": u(3, 4, lo=1.1, hi=3.0)}.get(n, pos(3, 4) if n in ("log", "sqrt", "rsqrt", "lgamma", "digamma")
                                                   else a)
        cases.append(F("math." + n, lambda tf, x, n=n: getattr(tf.math, n)(x), v))
    for n in ["add", "subtract", "multiply", "divide", "truediv", "floordiv", "floormod", "maximum", "minimum", "pow",
              "squared_difference", "atan2", "xlogy", "xlog1py", "xdivy", "divide_no_nan", "multiply_no_nan",
              "equal", "not_equal", "greater", "less", "greater_equal", "less_equal", "igamma", "igammac",
              "zeta", "polygamma", "truncatediv", "truncatemod", "nextafter"]:
        x, y = a, u(1, 4, lo=0.2, hi=1.5)
        if n in ("pow",):
            x = pos(3, 4)
        if n in ("igamma", "igammac", "zeta", "polygamma"):
            x, y = pos(3, 4) + 1.0, pos(1, 4)
        if n == "polygamma":
            x = np.floor(x)
        cases.append(F("math." + n, lambda tf, x, y, n=n: _binary(tf, n)(x, y), x, y))
    for n in ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_logsumexp",
              "reduce_std", "reduce_variance", "reduce_euclidean_norm", "cumsum", "cumprod", "cumulative_logsumexp",
              "argmax", "argmin", "count_nonzero"]:
        cases.append(F("math." + n, lambda tf, x, n=n: getattr(tf.math, n)(x, axis=1), a))
    cases += [
        F("math.reduce_all", lambda tf, x: tf.math.reduce_all(x > 0, axis=1), a),
        F("math.reduce_any", lambda tf, x: tf.math.reduce_any(x > 0), a),
        F("math.cumsum_exclusive_reverse", lambda tf, x: tf.math.cumsum(x, 1, exclusive=True, reverse=True), a),
        F("math.logical_xor", lambda tf, x, y: tf.math.logical_xor(x > 0, y > 0), a, b),
        F("math.add_n", lambda tf, x, y: tf.math.add_n([x, y, x]), a, b),
        F("math.accumulate_n", lambda tf, x, y: tf.math.accumulate_n([x, y]), a, b),
        F("math.segment_sum", lambda tf, x: tf.math.segment_sum(x, [0, 0, 2]), a),
        F("math.segment_mean", lambda tf, x: tf.math.segment_mean(x, [0, 0, 2]), a),
        F("math.segment_max", lambda tf, x: tf.math.segment_max(x, [0, 1, 1]), a),
        F("math.segment_min", lambda tf, x: tf.math.segment_min(x, [0, 1, 1]), a),
        F("math.segment_prod", lambda tf, x: tf.math.segment_prod(x, [0, 1, 1]), a),
        F("math.unsorted_segment_sum", lambda tf, x: tf.math.unsorted_segment_sum(x, [2, 0, 2], 3), a),
        F("math.unsorted_segment_mean", lambda tf, x: tf.math.unsorted_segment_mean(x, [2, 0, 2], 3), a),
        F("math.unsorted_segment_max", lambda tf, x: tf.math.unsorted_segment_max(x, [2, 0, 2], 3), a),
        F("math.unsorted_segment_min", lambda tf, x: tf.math.unsorted_segment_min(x, [2, 0, 2], 3), a),
        F("math.unsorted_segment_prod", lambda tf, x: tf.math.unsorted_segment_prod(x, [2, 0, 2], 3), a),
        F("math.unsorted_segment_sqrt_n", lambda tf, x: tf.math.unsorted_segment_sqrt_n(x, [2, 0, 2], 3), a),
        F("math.sparse_segment_sum", lambda tf, x: tf.sparse.segment_sum(x, [0, 2, 1], [0, 0, 1]), a),
        F("math.sparse_segment_mean", lambda tf, x: tf.sparse.segment_mean(x, [0, 2, 1], [0, 0, 1]), a),
        F("math.sparse_segment_sqrt_n", lambda tf, x: tf.sparse.segment_sqrt_n(x, [0, 2, 1], [0, 0, 1]), a),
        F("math.top_k", lambda tf, x: tf.math.top_k(x, 3), a),
        F("math.bincount", lambda tf, x: tf.math.bincount(x, minlength=6), ints(8, hi=5), grads=False),
        F("math.confusion_matrix", lambda tf, x, y: tf.math.confusion_matrix(x, y, 5), ints(6), ints(6)),
        F("math.clip_by_value", lambda tf, x: tf.clip_by_value(x, -0.3, 0.4), a),
        F("math.clip_by_norm", lambda tf, x: tf.clip_by_norm(x, 0.5), a),
        F("math.clip_by_global_norm", lambda tf, x, y: tf.clip_by_global_norm([x, y], 0.5)[0], a, b),
        F("math.polyval", lambda tf, x: tf.math.polyval([x, x, 2.0 * x], x), a),
        F("math.scalar_mul", lambda tf, x: tf.math.scalar_mul(3.0, x), a),
        F("math.lbeta", lambda tf, x: tf.math.lbeta(x), pos(3, 4)),
        F("math.betainc", lambda tf, x, y, z: tf.math.betainc(x, y, z), pos(3, 4), pos(3, 4),
          u(3, 4, lo=0.1, hi=0.9)),
        F("math.approx_max_k", lambda tf, x: tf.math.approx_max_k(x, 2), a),
        F("math.invert_permutation", lambda tf, x: tf.math.invert_permutation(x), np.array([2, 0, 1], np.int32)),
        F("math.bitwise", lambda tf, x, y: [tf.bitwise.bitwise_and(x, y), tf.bitwise.bitwise_or(x, y),
                                            tf.bitwise.bitwise_xor(x, y), tf.bitwise.invert(x),
                                            tf.bitwise.left_shift(x, 1), tf.bitwise.right_shift(x, 1)],
          ints(5, hi=100), ints(5, hi=100)),
    ]
    return cases


def _binary(tf, n):
    return getattr(tf.math, n, None) or getattr(tf, n)


def _svd_invariants(tf, x, full):
    s, u_, v = tf.linalg.svd(x, full_matrices=full)
    k = s.shape[-1]
    thin = tf.linalg.matmul(u_[..., :k] * s[..., None, :], v[..., :k], adjoint_b=True)
    return [s, thin, tf.linalg.matmul(u_, u_, adjoint_b=True), tf.linalg.matmul(v, v, adjoint_b=True)]


def _eigh_invariants(tf, x):
    e, v = tf.linalg.eigh(x + tf.linalg.matrix_transpose(x))
    return [e, tf.linalg.matmul(v * e[..., None, :], v, adjoint_b=True), v[..., 0:1, :] * v]


def linalg():
    m = u(3, 3) + 3 * np.eye(3, dtype=np.float32)
    spd = (m @ m.T).astype(np.float32)
    return [
        F("linalg.matmul", lambda tf, x, y: tf.linalg.matmul(x, y, transpose_b=True), u(2, 3, 4), u(2, 5, 4)),
        F("linalg.matvec", lambda tf, x, y: tf.linalg.matvec(x, y), u(3, 4), u(4)),
        F("linalg.einsum.attention", lambda tf, x, y: tf.einsum("bqhd,bkhd->bhqk", x, y), u(2, 3, 2, 4), u(2, 5, 2, 4)),
        F("linalg.einsum.ellipsis", lambda tf, x, y: tf.einsum("...ij,...jk->...ik", x, y), u(2, 3, 4), u(4, 2)),
        F("linalg.einsum.trace", lambda tf, x: tf.einsum("ii", x), m),
        F("linalg.einsum.outer_sum", lambda tf, x, y: tf.einsum("i,j->", x, y), u(3), u(4)),
        F("linalg.tensordot", lambda tf, x, y: tf.tensordot(x, y, [[1], [0]]), u(3, 4), u(4, 2)),
        F("linalg.inv", lambda tf, x: tf.linalg.inv(x), m),
        F("linalg.det", lambda tf, x: tf.linalg.det(x), m),
        F("linalg.slogdet", lambda tf, x: tf.linalg.slogdet(x), m),
        F("linalg.logdet", lambda tf, x: tf.linalg.logdet(x), spd),
        F("linalg.cholesky", lambda tf, x: tf.linalg.cholesky(x), spd),
        F("linalg.qr", lambda tf, x: tf.linalg.qr(x), u(4, 3)),
        F("linalg.svd", lambda tf, x: tf.linalg.svd(x, compute_uv=False), u(4, 3)),
        F("linalg.eigh", lambda tf, x: tf.linalg.eigh(x)[0], spd),
        # Singular and eigen vectors are defined up to sign (TensorFlow's solvers leave it to
        # their iteration): these compare what does not depend on it.
        F("linalg.svd.vectors", lambda tf, x: _svd_invariants(tf, x, False), u(2, 5, 3)),
        F("linalg.svd.full_matrices", lambda tf, x: _svd_invariants(tf, x, True), u(3, 5), grads=False),
        F("linalg.eigh.vectors", lambda tf, x: _eigh_invariants(tf, x), u(2, 4, 4)),
        F("linalg.eigvalsh", lambda tf, x: tf.linalg.eigvalsh(x + tf.linalg.matrix_transpose(x)), u(4, 4)),
        F("linalg.solve", lambda tf, x, y: tf.linalg.solve(x, y), m, u(3, 2)),
        F("linalg.triangular_solve", lambda tf, x, y: tf.linalg.triangular_solve(tf.linalg.band_part(x, -1, 0), y),
          m, u(3, 2)),
        F("linalg.lstsq", lambda tf, x, y: tf.linalg.lstsq(x, y), u(4, 3), u(4, 2)),
        F("linalg.band_part", lambda tf, x: tf.linalg.band_part(x, 1, 0), u(4, 4)),
        F("linalg.diag", lambda tf, x: tf.linalg.diag(x), u(2, 3)),
        F("linalg.diag_part", lambda tf, x: tf.linalg.diag_part(x), u(2, 3, 3)),
        F("linalg.set_diag", lambda tf, x, d: tf.linalg.set_diag(x, d), u(2, 3, 3), u(2, 3)),
        F("linalg.trace", lambda tf, x: tf.linalg.trace(x), u(2, 3, 3)),
        F("linalg.norm", lambda tf, x: tf.linalg.norm(x, axis=1), u(3, 4)),
        F("linalg.global_norm", lambda tf, x, y: tf.linalg.global_norm([x, y]), u(3, 4), u(2)),
        F("linalg.cross", lambda tf, x, y: tf.linalg.cross(x, y), u(2, 3), u(2, 3)),
        F("linalg.normalize", lambda tf, x: tf.linalg.normalize(x, axis=1)[0], u(3, 4)),
        F("linalg.adjoint", lambda tf, x: tf.linalg.adjoint(x), u(2, 3)),
        F("linalg.pinv", lambda tf, x: tf.linalg.pinv(x), u(3, 3)),
        F("linalg.expm", lambda tf, x: tf.linalg.expm(x * 0.3), u(3, 3)),
        F("linalg.cholesky_solve", lambda tf, x, y: tf.linalg.cholesky_solve(tf.linalg.cholesky(x), y), spd, u(3, 2)),
    ]


def cases():
    # Imported here: those modules import this one's helpers. The order fixes the values R
    # draws, so it stays as it was.
    import cases_data
    import cases_later
    import cases_train
    return (nn() + math() + linalg() + cases_data.array() + cases_data.image() + cases_data.strings()
            + cases_data.sparse() + cases_data.random_ops() + cases_train.rnn() + cases_train.optimizers()
            + cases_train.losses_metrics() + cases_train.feature_columns() + cases_later.later())
