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


def array():
    a = u(3, 4)
    return [
        F("array.split", lambda tf, x: tf.split(x, 2, axis=1), a),
        F("array.split_sizes", lambda tf, x: tf.split(x, [1, -1], axis=0), a),
        F("array.unstack", lambda tf, x: tf.unstack(x), a),
        F("array.stack", lambda tf, x: tf.stack([x, x], axis=1), a),
        F("array.concat", lambda tf, x: tf.concat([x, x], 0), a),
        F("array.reverse", lambda tf, x: tf.reverse(x, [1]), a),
        F("array.reverse_sequence", lambda tf, x: tf.reverse_sequence(x, [2, 3, 1], 1, 0), a),
        F("array.roll", lambda tf, x: tf.roll(x, 1, axis=1), a),
        F("array.pad_reflect", lambda tf, x: tf.pad(x, [[1, 1], [2, 2]], "REFLECT"), a),
        F("array.pad_symmetric", lambda tf, x: tf.pad(x, [[1, 1], [2, 2]], "SYMMETRIC"), a),
        F("array.gather_nd", lambda tf, x: tf.gather_nd(x, [[0, 1], [2, 3]]), a),
        F("array.scatter_nd", lambda tf, x: tf.scatter_nd([[0], [2]], x[:2], [4, 4]), a),
        F("array.tensor_scatter_update", lambda tf, x: tf.tensor_scatter_nd_update(x, [[1]], x[:1] * 2), a),
        F("array.tensor_scatter_add", lambda tf, x: tf.tensor_scatter_nd_add(x, [[1]], x[:1] * 2), a),
        F("array.where", lambda tf, x: tf.where(x > 0, x, x * 0.1), a),
        F("array.boolean_mask", lambda tf, x: tf.boolean_mask(x, x[:, 0] > 0), a),
        F("array.one_hot", lambda tf, x: tf.one_hot(x, 4), ints(3), grads=False),
        F("array.tile", lambda tf, x: tf.tile(x, [2, 1]), a),
        F("array.repeat", lambda tf, x: tf.repeat(x, [1, 2, 1], axis=0), a),
        F("array.broadcast_to", lambda tf, x: tf.broadcast_to(x, [2, 3, 4]), a),
        F("array.expand_squeeze", lambda tf, x: tf.squeeze(tf.expand_dims(x, 0)), a),
        F("array.transpose", lambda tf, x: tf.transpose(x), a),
        F("array.slice", lambda tf, x: tf.slice(x, [1, 0], [2, 3]), a),
        F("array.strided_slice", lambda tf, x: x[::-1, 1::2], a),
        F("array.gather", lambda tf, x: tf.gather(x, [2, 0], axis=1), a),
        F("array.gather_batch", lambda tf, x: tf.gather(x, [[1, 0], [2, 2], [0, 3]], axis=1, batch_dims=1), a),
        F("array.sort", lambda tf, x: tf.sort(x, axis=1, direction="DESCENDING"), a),
        F("array.argsort", lambda tf, x: tf.argsort(x, axis=1), a),
        F("array.unique", lambda tf, x: tf.unique(x)[1], ints(6)),
        F("array.unique_with_counts", lambda tf, x: tf.unique_with_counts(x)[2], ints(6)),
        F("array.searchsorted", lambda tf, s, v: tf.searchsorted(s, v), np.sort(u(2, 5), axis=1), u(2, 3), grads=False),
        F("array.sequence_mask", lambda tf, x: tf.sequence_mask(x, 5), np.array([1, 3, 5], np.int32)),
        F("array.meshgrid", lambda tf, x, y: tf.meshgrid(x, y), u(3), u(2)),
        F("array.linspace", lambda tf, x: tf.linspace(x, x + 1.0, 5), np.float32(0.5)),
        F("array.range", lambda tf, x: tf.range(x), np.int32(5)),
        F("array.fill", lambda tf, x: tf.fill([2, 3], x), np.float32(2.0)),
        F("array.zeros_like_ones_like", lambda tf, x: [tf.zeros_like(x), tf.ones_like(x)], a),
        F("array.identity_n", lambda tf, x: tf.identity_n([x, x]), a),
        F("array.ensure_shape", lambda tf, x: tf.ensure_shape(x, [3, 4]), a),
        F("array.dynamic_partition", lambda tf, x: tf.dynamic_partition(x, [0, 1, 0], 2), a),
        F("array.dynamic_stitch", lambda tf, x: tf.dynamic_stitch([[0, 2], [1]], [x[:2], x[2:]]), a),
        F("array.matrix_diag", lambda tf, x: tf.linalg.diag(x, k=1), u(3)),
        F("array.histogram_fixed_width", lambda tf, x: tf.histogram_fixed_width(x, [-1.0, 1.0], 5), a),
        F("array.extract_image_patches", lambda tf, x: tf.image.extract_patches(x, [1, 2, 2, 1], [1, 2, 2, 1],
                                                                                 [1, 1, 1, 1], "VALID"),
          u(1, 4, 4, 2)),
        F("array.fingerprint", lambda tf, x: tf.fingerprint(x), ints(2, 3)),
        F("array.ragged_constant", lambda tf, x: tf.RaggedTensor.from_row_lengths(x, [2, 0, 1]), u(3)),
    ]


def image():
    img = u(2, 6, 6, 3, lo=0.0, hi=1.0)
    return [
        F("image.resize_bilinear", lambda tf, x: tf.image.resize(x, [4, 9]), img),
        F("image.resize_nearest", lambda tf, x: tf.image.resize(x, [4, 9], "nearest"), img),
        F("image.resize_bicubic", lambda tf, x: tf.image.resize(x, [4, 9], "bicubic"), img),
        F("image.resize_area", lambda tf, x: tf.image.resize(x, [4, 3], "area"), img),
        F("image.resize_lanczos3", lambda tf, x: tf.image.resize(x, [4, 9], "lanczos3"), img),
        F("image.resize_antialias", lambda tf, x: tf.image.resize(x, [3, 3], antialias=True), img),
        F("image.resize_v1_align_corners",
          lambda tf, x: tf.compat.v1.image.resize_bilinear(x, [4, 9], align_corners=True), img),
        F("image.resize_with_pad", lambda tf, x: tf.image.resize_with_pad(x, 5, 9), img),
        F("image.crop_and_resize", lambda tf, x: tf.image.crop_and_resize(x, [[0.1, 0.1, 0.8, 0.9]], [1], [3, 3]),
          img),
        F("image.central_crop", lambda tf, x: tf.image.central_crop(x, 0.5), img),
        F("image.crop_to_bounding_box", lambda tf, x: tf.image.crop_to_bounding_box(x, 1, 1, 3, 4), img),
        F("image.pad_to_bounding_box", lambda tf, x: tf.image.pad_to_bounding_box(x, 1, 1, 8, 9), img),
        F("image.flip", lambda tf, x: [tf.image.flip_left_right(x), tf.image.flip_up_down(x),
                                       tf.image.rot90(x), tf.image.transpose(x)], img),
        F("image.adjust_brightness", lambda tf, x: tf.image.adjust_brightness(x, 0.1), img),
        F("image.adjust_contrast", lambda tf, x: tf.image.adjust_contrast(x, 1.5), img),
        F("image.adjust_saturation", lambda tf, x: tf.image.adjust_saturation(x, 1.5), img),
        F("image.adjust_hue", lambda tf, x: tf.image.adjust_hue(x, 0.1), img),
        F("image.adjust_gamma", lambda tf, x: tf.image.adjust_gamma(x, 0.8), img),
        F("image.rgb_to_grayscale", lambda tf, x: tf.image.rgb_to_grayscale(x), img),
        F("image.rgb_to_hsv", lambda tf, x: tf.image.hsv_to_rgb(tf.image.rgb_to_hsv(x)), img),
        F("image.rgb_to_yuv", lambda tf, x: tf.image.yuv_to_rgb(tf.image.rgb_to_yuv(x)), img),
        F("image.per_image_standardization", lambda tf, x: tf.image.per_image_standardization(x), img),
        F("image.total_variation", lambda tf, x: tf.image.total_variation(x), img),
        F("image.image_gradients", lambda tf, x: tf.image.image_gradients(x), img),
        F("image.sobel_edges", lambda tf, x: tf.image.sobel_edges(x), img),
        F("image.psnr_ssim", lambda tf, x, y: [tf.image.psnr(x, y, 1.0), tf.image.ssim(x, y, 1.0, filter_size=3)],
          img, u(2, 6, 6, 3, lo=0.0, hi=1.0)),
        F("image.non_max_suppression", lambda tf, b, s: tf.image.non_max_suppression(b, s, 3, 0.5),
          np.array([[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, 2, 1, 3], [0, 4, 1, 5]], np.float32),
          np.array([0.9, 0.8, 0.7, 0.3], np.float32), grads=False),
        F("image.non_max_suppression_padded",
          lambda tf, b, s: tf.image.non_max_suppression_padded(b, s, 3, 0.5, pad_to_max_output_size=True)[0],
          np.array([[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, 2, 1, 3], [0, 4, 1, 5]], np.float32),
          np.array([0.9, 0.8, 0.7, 0.3], np.float32), grads=False),
        F("image.png_roundtrip", lambda tf, x: tf.io.decode_png(tf.io.encode_png(x)),
          ints(5, 6, 3, hi=255, dtype=np.uint8)),
        F("image.jpeg_encode_shape", lambda tf, x: tf.shape(tf.io.decode_jpeg(tf.io.encode_jpeg(x))),
          ints(8, 8, 3, hi=255, dtype=np.uint8)),
        F("image.convert_image_dtype", lambda tf, x: tf.image.convert_image_dtype(x, tf.float32),
          ints(5, 6, 3, hi=255, dtype=np.uint8)),
        F("image.draw_bounding_boxes", lambda tf, x: tf.image.draw_bounding_boxes(x, [[[0.1, 0.1, 0.5, 0.6]]] * 2,
                                                                                  [[1.0, 0, 0, 1]]), img),
    ]


def strings():
    s = strs(4)
    return [
        F("strings.split", lambda tf, x: tf.strings.split(x), s),
        F("strings.split_v1", lambda tf, x: tf.compat.v1.string_split(x, " "), s),
        F("strings.join", lambda tf, x: tf.strings.join([x, x], "-"), s),
        F("strings.reduce_join", lambda tf, x: tf.strings.reduce_join(x, separator="|"), s),
        F("strings.regex_replace", lambda tf, x: tf.strings.regex_replace(x, "[a-c]", "_"), s),
        F("strings.regex_full_match", lambda tf, x: tf.strings.regex_full_match(x, "[a-z ]+"), s),
        F("strings.substr", lambda tf, x: tf.strings.substr(x, 1, 2), s),
        F("strings.length", lambda tf, x: tf.strings.length(x), s),
        F("strings.length_utf8", lambda tf, x: tf.strings.length(x, "UTF8_CHAR"), s),
        F("strings.lower_upper", lambda tf, x: [tf.strings.lower(x), tf.strings.upper(x)], s),
        F("strings.strip", lambda tf, x: tf.strings.strip(x), s),
        F("strings.to_number", lambda tf, x: tf.strings.to_number(x), np.array([b"1.5", b"-2", b"3e2"], object)),
        F("strings.to_hash_bucket_fast", lambda tf, x: tf.strings.to_hash_bucket_fast(x, 100), s),
        F("strings.to_hash_bucket_strong", lambda tf, x: tf.strings.to_hash_bucket_strong(x, 100, [1, 2]), s),
        F("strings.to_hash_bucket", lambda tf, x: tf.strings.to_hash_bucket(x, 100), s),
        F("strings.as_string", lambda tf, x: tf.strings.as_string(x, precision=3), u(4)),
        F("strings.format", lambda tf, x: tf.strings.format("v={}", x), u(3)),
        F("strings.bytes_split", lambda tf, x: tf.strings.bytes_split(x), s),
        F("strings.ngrams", lambda tf, x: tf.strings.ngrams(tf.strings.split(x), 2), s),
        F("strings.unicode_decode", lambda tf, x: tf.strings.unicode_decode(x, "UTF-8"), s),
        F("strings.unicode_split", lambda tf, x: tf.strings.unicode_split(x, "UTF-8"), s),
        F("strings.base64", lambda tf, x: tf.io.decode_base64(tf.io.encode_base64(x)), s),
        F("io.decode_csv", lambda tf, x: tf.io.decode_csv(x, [[0.0], [0], [""]]),
          np.array([b"1.5,2,a", b"3,4,b"], object)),
        F("io.decode_raw", lambda tf, x: tf.io.decode_raw(x, tf.uint8), s),
        F("io.parse_example", _parse_example, np.array([_example(1), _example(2)], object)),
        F("io.parse_single_example", lambda tf, x: _parse(tf, x, single=True), np.array(_example(3), object)),
        F("io.serialize_tensor", lambda tf, x: tf.io.parse_tensor(tf.io.serialize_tensor(x), tf.float32), u(2, 3)),
    ]


def _example(i):
    import tensorflow as tf
    return tf.train.Example(features=tf.train.Features(feature={
        "f": tf.train.Feature(float_list=tf.train.FloatList(value=[i * 0.5, 1.0])),
        "i": tf.train.Feature(int64_list=tf.train.Int64List(value=[i] * i)),
        "s": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"w%d" % i])),
    })).SerializeToString()


def _parse(tf, x, single=False):
    spec = {"f": tf.io.FixedLenFeature([2], tf.float32), "i": tf.io.VarLenFeature(tf.int64),
            "s": tf.io.FixedLenFeature([], tf.string, default_value="")}
    out = (tf.io.parse_single_example if single else tf.io.parse_example)(x, spec)
    return [out["f"], out["i"], out["s"]]


def _parse_example(tf, x):
    return _parse(tf, x)


def sparse():
    def st(tf, v):
        return tf.SparseTensor([[0, 0], [1, 2], [2, 1]], v, [3, 4])

    v = u(3)
    return [
        F("sparse.to_dense", lambda tf, v: tf.sparse.to_dense(st(tf, v)), v),
        F("sparse.reshape", lambda tf, v: tf.sparse.reshape(st(tf, v), [4, 3]), v),
        F("sparse.reorder", lambda tf, v: tf.sparse.reorder(tf.SparseTensor([[1, 0], [0, 1]], v[:2], [2, 2])), v),
        F("sparse.add", lambda tf, v: tf.sparse.add(st(tf, v), st(tf, v * 2)), v),
        F("sparse.add_dense", lambda tf, v, d: tf.sparse.add(st(tf, v), d), v, u(3, 4)),
        F("sparse.sparse_dense_matmul", lambda tf, v, d: tf.sparse.sparse_dense_matmul(st(tf, v), d), v, u(4, 2)),
        F("sparse.reduce_sum", lambda tf, v: tf.sparse.reduce_sum(st(tf, v), axis=1), v),
        F("sparse.reduce_max", lambda tf, v: tf.sparse.reduce_max(st(tf, v), axis=1), v),
        F("sparse.softmax", lambda tf, v: tf.sparse.softmax(st(tf, v)), v),
        F("sparse.fill_empty_rows",
          lambda tf, v: tf.sparse.fill_empty_rows(tf.SparseTensor([[0, 0], [2, 1]], v[:2], [4, 4]), 0.0), v),
        F("sparse.slice", lambda tf, v: tf.sparse.slice(st(tf, v), [1, 0], [2, 4]), v),
        F("sparse.concat", lambda tf, v: tf.sparse.concat(1, [st(tf, v), st(tf, v)]), v),
        F("sparse.transpose", lambda tf, v: tf.sparse.transpose(st(tf, v)), v),
        F("sparse.retain", lambda tf, v: tf.sparse.retain(st(tf, v), [True, False, True]), v),
        F("sparse.maximum", lambda tf, v: tf.sparse.maximum(st(tf, v), st(tf, -v)), v),
        F("sparse.from_dense", lambda tf, d: tf.sparse.from_dense(d), np.array([[0, 1.5], [2, 0]], np.float32)),
        F("sparse.cross", lambda tf, x: tf.sparse.cross([tf.sparse.from_dense(x), tf.sparse.from_dense(x)]),
          np.array([[b"a", b"b"], [b"c", b""]], object)),
        F("sparse.cross_hashed", lambda tf, x: tf.sparse.cross_hashed([tf.sparse.from_dense(x)] * 2, 10),
          np.array([[b"a", b"b"], [b"c", b""]], object)),
        F("sparse.bincount", lambda tf, x: tf.sparse.bincount(tf.sparse.from_dense(x), minlength=5),
          ints(2, 4, hi=5, dtype=np.int64), grads=False),
    ]


def random_ops():
    return [
        F("random.uniform", lambda tf, s: tf.random.uniform([3, 4], seed=5) + s, np.float32(0), random=True),
        F("random.normal", lambda tf, s: tf.random.normal([3, 4], seed=5) + s, np.float32(0), random=True),
        F("random.truncated_normal", lambda tf, s: tf.random.truncated_normal([3, 4], seed=5) + s, np.float32(0),
          random=True),
        F("random.categorical", lambda tf, x: tf.random.categorical(x, 5, seed=5), u(2, 3), random=True),
        F("random.gamma", lambda tf, a: tf.random.gamma([4], a, seed=5), pos(3), random=True, grads=False),
        F("random.poisson", lambda tf, a: tf.random.poisson([4], a, seed=5), pos(3), random=True),
        F("random.shuffle", lambda tf, x: tf.random.shuffle(x, seed=5), u(5, 2), random=True),
        F("random.stateless_uniform", lambda tf, s: tf.random.stateless_uniform([3, 4], [1, 2]) + s, np.float32(0)),
        F("random.stateless_normal", lambda tf, s: tf.random.stateless_normal([3, 4], [1, 2]) + s, np.float32(0)),
        F("random.stateless_truncated_normal",
          lambda tf, s: tf.random.stateless_truncated_normal([3, 4], [1, 2]) + s, np.float32(0)),
        F("random.stateless_categorical", lambda tf, x: tf.random.stateless_categorical(x, 4, [1, 2]), u(2, 3)),
        F("random.stateless_uniform_int",
          lambda tf, s: tf.random.stateless_uniform([5], [3, 4], minval=0, maxval=9, dtype=tf.int32) + s,
          np.int32(0)),
        F("random.stateless_binomial", lambda tf, s: tf.random.stateless_binomial([4], [1, 2], 10.0, 0.3) + s,
          np.int32(0)),
    ]


def rnn():
    x = u(2, 5, 3)

    def dyn(cell_fn, seq_len=False, time_major=False):
        def f(tf, x):
            cell = cell_fn(tf)
            kw = dict(sequence_length=[5, 3]) if seq_len else {}
            out, _ = tf.compat.v1.nn.dynamic_rnn(cell, x, dtype=tf.float32, **kw)
            return out
        return f

    return [
        F("rnn.dynamic_rnn.lstm", dyn(lambda tf: tf.compat.v1.nn.rnn_cell.LSTMCell(4)), x),
        F("rnn.dynamic_rnn.lstm_seqlen", dyn(lambda tf: tf.compat.v1.nn.rnn_cell.LSTMCell(4), True), x),
        F("rnn.dynamic_rnn.gru", dyn(lambda tf: tf.compat.v1.nn.rnn_cell.GRUCell(4)), x),
        F("rnn.dynamic_rnn.basic_rnn", dyn(lambda tf: tf.compat.v1.nn.rnn_cell.BasicRNNCell(4)), x),
        F("rnn.dynamic_rnn.multi", dyn(lambda tf: tf.compat.v1.nn.rnn_cell.MultiRNNCell(
            [tf.compat.v1.nn.rnn_cell.LSTMCell(3), tf.compat.v1.nn.rnn_cell.GRUCell(2)])), x),
        F("rnn.bidirectional_dynamic_rnn", lambda tf, x: tf.concat(tf.compat.v1.nn.bidirectional_dynamic_rnn(
            tf.compat.v1.nn.rnn_cell.LSTMCell(2), tf.compat.v1.nn.rnn_cell.LSTMCell(2), x, dtype=tf.float32,
            sequence_length=[5, 2])[0], 2), x),
        F("rnn.static_rnn", lambda tf, x: tf.compat.v1.nn.static_rnn(
            tf.compat.v1.nn.rnn_cell.BasicLSTMCell(3), tf.unstack(x, axis=1), dtype=tf.float32)[0][-1], x),
    ]


def optimizers():
    def train_case(name, make_opt):
        xv, wv = u(4, 3), u(3, 2)  # drawn once: both graphs of a case see the same values

        def build():
            import tensorflow as tf
            x = tf.compat.v1.placeholder(tf.float32, (4, 3))
            w = tf.compat.v1.get_variable("w", initializer=tf.constant(wv))
            return {x: xv}, [tf.matmul(x, w)]

        def train(loss):
            import tensorflow as tf
            opt = make_opt(tf)
            var_list = tf.compat.v1.trainable_variables()
            if hasattr(opt, "get_updates"):  # tf_keras's optimizers in graph mode, as Keras 2's v1 training loop
                return tf.group(*opt.get_updates(loss, var_list))
            return opt.minimize(loss, var_list=var_list)

        return Case("train." + name, build, train=train)

    opts = {
        "GradientDescent": lambda tf: tf.compat.v1.train.GradientDescentOptimizer(0.1),
        "Momentum": lambda tf: tf.compat.v1.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
        "Adagrad": lambda tf: tf.compat.v1.train.AdagradOptimizer(0.1),
        "AdagradDA": lambda tf: tf.compat.v1.train.AdagradDAOptimizer(
            0.1, tf.compat.v1.train.get_or_create_global_step()),
        "Adam": lambda tf: tf.compat.v1.train.AdamOptimizer(0.1),
        "Adadelta": lambda tf: tf.compat.v1.train.AdadeltaOptimizer(0.1),
        "RMSProp": lambda tf: tf.compat.v1.train.RMSPropOptimizer(0.1, centered=True),
        "Ftrl": lambda tf: tf.compat.v1.train.FtrlOptimizer(0.1, l2_regularization_strength=0.1),
        "ProximalGradientDescent": lambda tf: tf.compat.v1.train.ProximalGradientDescentOptimizer(0.1, 0.01),
        "ProximalAdagrad": lambda tf: tf.compat.v1.train.ProximalAdagradOptimizer(0.1, 0.01),
    }
    for k in ["SGD", "Adam", "Adamax", "Nadam", "RMSprop", "Adagrad", "Adadelta", "Ftrl"]:
        opts["keras." + k] = (lambda k: lambda tf: getattr(__import__("tf_keras").optimizers.legacy, k)(0.01))(k)
    return [train_case(n, o) for n, o in opts.items()]


def losses_metrics():
    y, p = u(4, 3, lo=0, hi=1), u(4, 3, lo=0.05, hi=0.95)
    cases = []
    for n in ["mean_squared_error", "mean_absolute_error", "mean_absolute_percentage_error",
              "mean_squared_logarithmic_error", "binary_crossentropy", "categorical_crossentropy", "hinge",
              "squared_hinge", "categorical_hinge", "huber", "log_cosh", "kl_divergence", "poisson",
              "cosine_similarity", "binary_focal_crossentropy"]:
        cases.append(F("losses." + n, lambda tf, a, b, n=n: getattr(__import__("tf_keras").losses, n)(a, b), y, p))
    cases.append(F("losses.sparse_categorical_crossentropy",
                   lambda tf, a, b: __import__("tf_keras").losses.sparse_categorical_crossentropy(a, b),
                   ints(4, hi=3), p))
    for n in ["AUC", "Precision", "Recall", "Accuracy", "BinaryAccuracy", "CategoricalAccuracy",
              "TopKCategoricalAccuracy", "MeanIoU", "RootMeanSquaredError", "PrecisionAtRecall"]:
        def f(tf, a, b, n=n):
            keras = __import__("tf_keras")
            kw = {"MeanIoU": dict(num_classes=2), "PrecisionAtRecall": dict(recall=0.5),
                  "TopKCategoricalAccuracy": dict(k=2)}.get(n, {})
            m = getattr(keras.metrics, n)(**kw)
            if n == "MeanIoU":
                out = m(tf.cast(a > 0.5, tf.int32), tf.cast(b > 0.5, tf.int32))
            else:
                out = m(a, b)
            # A metric's state variables sit in no collection in graph mode: list them as local
            # variables so that the harness initializes them (as a user's init op would).
            for v in m.variables:
                tf.compat.v1.add_to_collection(tf.compat.v1.GraphKeys.LOCAL_VARIABLES, v)
            return out
        cases.append(F("metrics." + n, f, (y > 0.5).astype(np.float32), p, grads=False))
    return cases


def feature_columns():
    def fc_case(name, make_cols, feats):
        def build():
            import tensorflow as tf
            fc = tf.compat.v1.feature_column
            feeds, d = {}, {}
            for k, v in feats.items():
                v = np.asarray(v)
                p = tf.compat.v1.placeholder(tf.string if v.dtype == object else tf.as_dtype(v.dtype), v.shape)
                feeds[p] = v
                d[k] = p
            return feeds, [fc.input_layer(d, make_cols(tf, fc))]
        return Case("feature_column." + name, build)

    feats = {"age": u(4, 1, lo=0, hi=90), "city": np.array([[b"paris"], [b"rome"], [b"oslo"], [b"rome"]], object),
             "id": np.array([[1], [3], [0], [2]], np.int64)}
    return [
        fc_case("numeric", lambda tf, fc: [fc.numeric_column("age")], feats),
        fc_case("bucketized", lambda tf, fc: [fc.bucketized_column(fc.numeric_column("age"), [18, 40, 65])], feats),
        fc_case("indicator_vocab", lambda tf, fc: [fc.indicator_column(
            fc.categorical_column_with_vocabulary_list("city", ["paris", "rome"]))], feats),
        fc_case("embedding_hash", lambda tf, fc: [fc.embedding_column(
            fc.categorical_column_with_hash_bucket("city", 10), 3)], feats),
        fc_case("embedding_identity", lambda tf, fc: [fc.embedding_column(
            fc.categorical_column_with_identity("id", 4), 2, combiner="sqrtn")], feats),
        fc_case("crossed", lambda tf, fc: [fc.indicator_column(fc.crossed_column(
            [fc.bucketized_column(fc.numeric_column("age"), [30]), "city"], 7))], feats),
    ]


def cases():
    return (nn() + math() + linalg() + array() + image() + strings() + sparse() + random_ops() + rnn()
            + optimizers() + losses_metrics() + feature_columns())
