"""Sweep cases added after the table's first run (tf.nn, tf.image, tf.math.special, tf.audio,
tf.quantization, tf.linalg, tf.random, tf.io): their values come from a generator of their
own, so the values the first cases draw stay as they were. New cases go at the end of the
list: the order fixes the values drawn."""

import gzip
import os
import struct
import tempfile
import zlib

import numpy as np

from cases_funcs import F


def later():
    """Cases added after the table's first run: their values come from a generator of their
    own, so the values R draws for the earlier cases stay as they were."""
    g = np.random.RandomState(2026)

    def v(*shape, lo=-1.0, hi=1.0):
        return g.uniform(lo, hi, size=shape).astype(np.float32)

    Q = "quantization.fake_quant_with_min_max_"
    return [
        F("nn.ctc_loss_sparse",
          lambda tf, x: tf.compat.v1.nn.ctc_loss(
              tf.SparseTensor([[0, 0], [0, 1], [1, 0]], tf.constant([1, 0, 1], tf.int32), [2, 2]), x,
              tf.constant([5, 3])), v(5, 2, 3)),
        F("nn.ctc_greedy_decoder",
          lambda tf, x: [tf.sparse.to_dense(d) for d in tf.nn.ctc_greedy_decoder(x, tf.constant([6, 4]))[0]]
          + [tf.nn.ctc_greedy_decoder(x, tf.constant([6, 4]))[1]], v(6, 2, 4), grads=False),
        F("nn.ctc_beam_search_decoder",
          lambda tf, x: (lambda d: [tf.sparse.to_dense(p) for p in d[0]] + [d[1]])(
              tf.nn.ctc_beam_search_decoder(x, tf.constant([6, 4]), beam_width=5, top_paths=2)),
          v(6, 2, 4), grads=False),
        F(Q + "args", lambda tf, x: tf.quantization.fake_quant_with_min_max_args(x, -0.7, 0.9, num_bits=6), v(3, 5)),
        F(Q + "vars", lambda tf, x: tf.quantization.fake_quant_with_min_max_vars(x, tf.constant(-0.6), tf.constant(0.8)),
          v(3, 5)),
        F(Q + "vars_per_channel",
          lambda tf, x: tf.quantization.fake_quant_with_min_max_vars_per_channel(
              x, tf.constant([-0.5, -1.0, 0.0, -0.2, -0.9]), tf.constant([0.5, 0.3, 0.0, 0.9, 0.4]), narrow_range=True),
          v(3, 5)),
        F("random.log_uniform_candidate_sampler",
          lambda tf: list(tf.random.log_uniform_candidate_sampler(
              tf.constant([[1, 3], [0, 39], [7, 7]], tf.int64), 2, 6, True, 40, seed=5)), grads=False),
        F("nn.sampled_softmax_loss",
          lambda tf, w, h: tf.nn.sampled_softmax_loss(w, tf.zeros([40]), tf.constant([[1], [5], [7]], tf.int64), h, 6, 40,
                                                      seed=3),
          v(40, 4), v(3, 4)),
        F("nn.nce_loss",
          lambda tf, w, h: tf.nn.nce_loss(
              w, tf.zeros([40]), tf.constant([[1], [5], [7]], tf.int64), h, 6, 40,
              sampled_values=tf.random.log_uniform_candidate_sampler(
                  tf.constant([[1], [5], [7]], tf.int64), 1, 6, True, 40, seed=4), remove_accidental_hits=True),
          v(40, 4), v(3, 4)),
        F("io.parse_sequence_example", _parse_sequence, np.array([_sequence(1), _sequence(2)], object)),
        F("io.parse_single_sequence_example", lambda tf, x: _parse_sequence(tf, x, single=True),
          np.array(_sequence(3), object)),
        F("image.sample_distorted_bounding_box",
          lambda tf, b: list(tf.image.sample_distorted_bounding_box(
              tf.constant([240, 320, 3]), b, seed=7, min_object_covered=0.3, area_range=(0.1, 1.0))),
          np.array([[[0.1, 0.2, 0.6, 0.9], [0.3, 0.1, 0.8, 0.5]]], np.float32), grads=False),
        F("image.stateless_sample_distorted_bounding_box",
          lambda tf, b: list(tf.image.stateless_sample_distorted_bounding_box(
              tf.constant([480, 640, 3]), b, seed=[3, 4], min_object_covered=0.1)),
          np.array([[[0.1, 0.2, 0.6, 0.9]]], np.float32), grads=False),
        F("image.combined_non_max_suppression",
          lambda tf, b, s: list(tf.image.combined_non_max_suppression(b, s, 3, 5, 0.5, 0.1)),
          v(2, 6, 1, 4, lo=0.0, hi=1.0), v(2, 6, 3, lo=0.0, hi=1.0), grads=False),
        F("nn.dilation2d", lambda tf, x, f: tf.nn.dilation2d(x, f, [1, 2, 1, 1], "SAME", "NHWC", [1, 1, 2, 1]),
          v(2, 6, 7, 2), v(2, 3, 2)),
        F("nn.erosion2d", lambda tf, x, f: tf.nn.erosion2d(x, f, [1, 1, 1, 1], "VALID", "NHWC", [1, 1, 1, 1]),
          v(1, 5, 5, 2), v(3, 2, 2)),
        F("image.extract_glimpse",
          lambda tf, x: tf.image.extract_glimpse(x, [3, 4], [[0.2, -0.3], [-0.9, 0.9]], noise="zero"),
          v(2, 6, 7, 2), grads=False),
        F("math.special.bessel_j0_y1", lambda tf, x: [tf.math.special.bessel_j0(x), tf.math.special.bessel_y1(x)],
          v(3, 4, lo=0.2, hi=9.0)),
        F("math.special.bessel_k0e_k1", lambda tf, x: [tf.math.special.bessel_k0e(x), tf.math.special.bessel_k1(x)],
          v(3, 4, lo=0.2, hi=6.0)),
        F("math.special.dawsn_expint", lambda tf, x: [tf.math.special.dawsn(x), tf.math.special.expint(x)],
          v(3, 4, lo=0.2, hi=4.0)),
        F("math.special.fresnel_spence",
          lambda tf, x: [tf.math.special.fresnel_cos(x), tf.math.special.fresnel_sin(x), tf.math.special.spence(x)],
          v(3, 4, lo=0.1, hi=3.0)),
        F("audio.encode_decode_wav",
          lambda tf, x: list(tf.audio.decode_wav(tf.audio.encode_wav(x, 16000), desired_channels=2)), v(40, 2),
          grads=False),
        F("audio.spectrogram_mfcc",
          lambda tf, x: (lambda sp: [sp, tf.raw_ops.Mfcc(spectrogram=sp, sample_rate=16000, dct_coefficient_count=8)])(
              tf.raw_ops.AudioSpectrogram(input=x, window_size=32, stride=16, magnitude_squared=True)),
          v(200, 1), grads=False),
        F("quantization.quantize_and_dequantize_v2",
          lambda tf, x: tf.quantization.quantize_and_dequantize_v2(x, -0.8, 0.7, range_given=True, num_bits=6),
          v(3, 5)),
        F("quantization.quantize_and_dequantize",
          lambda tf, x: tf.quantization.quantize_and_dequantize(x, 0.0, 0.0, num_bits=5, range_given=False,
                                                                 narrow_range=True), v(4, 3), grads=False),
        F("linalg.lu", lambda tf, x: list(tf.linalg.lu(x)), v(2, 4, 4), grads=False),
        F("linalg.tridiagonal_solve",
          lambda tf, d, r: tf.linalg.tridiagonal_solve(
              d * tf.constant([[0.3], [1.0], [0.3]]) + tf.constant([[0.0], [3.0], [0.0]]), r), v(3, 5), v(5, 2)),
        F("linalg.tridiagonal_matmul",
          lambda tf, d, r: tf.linalg.tridiagonal_matmul(d, r, diagonals_format="compact"),
          v(3, 5), v(5, 2)),
        F("linalg.banded_triangular_solve",
          lambda tf, b, r: tf.linalg.banded_triangular_solve(b, r, lower=True), v(2, 5, lo=1.0, hi=2.0), v(5, 3)),
        F("linalg.sqrtm", lambda tf, x: tf.linalg.sqrtm(tf.matmul(x, x, transpose_b=True) + 2.0 * tf.eye(4)),
          v(4, 4)),
        F("random.uniform_candidate_sampler",
          lambda tf, x: list(tf.random.uniform_candidate_sampler(x, 1, 6, True, 20, seed=3)),
          np.array([[1], [3]], np.int64), grads=False),
        F("random.fixed_unigram_candidate_sampler",
          lambda tf, x: list(tf.random.fixed_unigram_candidate_sampler(
              x, 1, 4, False, 10, unigrams=[5.0, 1.0, 2.0, 8.0, 3.0, 1.0, 1.0, 4.0, 2.0, 6.0], seed=5)),
          np.array([[2], [7]], np.int64), grads=False),
        F("random.learned_unigram_candidate_sampler",
          lambda tf, x: list(tf.random.learned_unigram_candidate_sampler(x, 1, 5, True, 12, seed=8)),
          np.array([[4], [9]], np.int64), grads=False),
        F("random.all_candidate_sampler",
          lambda tf, x: list(tf.random.all_candidate_sampler(x, 1, 6, True, seed=1)),
          np.array([[0], [5]], np.int64), grads=False),
        F("switch_case", lambda tf, i, x: tf.switch_case(i, [lambda: 2.0 * x, lambda: tf.sin(x) * x, lambda: x * x]),
          np.array(1, np.int32), v(3, 4)),
        F("switch_case.default", lambda tf, i, x: tf.switch_case(i, [lambda: tf.exp(x), lambda: tf.tanh(x)],
                                                                  default=lambda: x - 1.0),
          np.array(7, np.int32), v(3, 4)),
        F("tensor_scatter_nd_max_min",
          lambda tf, x, u: [tf.tensor_scatter_nd_max(x, [[1], [3], [1]], u), tf.tensor_scatter_nd_min(x, [[0], [2]], u[:2])],
          v(4, 3), v(3, 3)),
        F("compat.v1.scatter_nd_ref",
          lambda tf, u: _ref_scatters(tf, u, [tf.compat.v1.scatter_nd_update, tf.compat.v1.scatter_nd_add,
                                              tf.compat.v1.scatter_nd_sub, _raw_ref("ScatterNdMax"),
                                              _raw_ref("ScatterNdMin")], [[2], [0], [2]], False),
          v(3, 3), grads=False),
        F("compat.v1.scatter_rows_ref",
          lambda tf, u: _ref_scatters(tf, u, [tf.compat.v1.scatter_mul, tf.compat.v1.scatter_div,
                                              tf.compat.v1.scatter_max, tf.compat.v1.scatter_min], [3, 1, 3], False),
          v(3, 3, lo=0.5, hi=2.0), grads=False),
        F("compat.v1.scatter_nd_resource",
          lambda tf, u: _ref_scatters(tf, u, [_raw_resource("ResourceScatterNdMax"), _raw_resource("ResourceScatterNdMin")],
                                      [[1], [1], [3]], True), v(3, 3), grads=False),
        F("io.decode_bmp", lambda tf, x: tf.io.decode_bmp(x, channels=4), _bmp(g, 5, -3, 24), grads=False),
        F("io.decode_image_bmp",
          lambda tf, x: tf.io.decode_image(x, channels=3, dtype=tf.float32, expand_animations=False),
          _bmp(g, 3, 4, 32), grads=False),
        F("io.decode_compressed",
          lambda tf, z, gz: [tf.io.decode_compressed(z, "ZLIB"), tf.io.decode_compressed(gz, "GZIP")],
          _strings([zlib.compress(b"ferroflow " * k) for k in range(4)]),
          _strings([gzip.compress(b"tf" * k, mtime=0) for k in range(3)]), grads=False),
        F("sparse.reduce_sum_sparse",
          lambda tf, x: tf.sparse.reduce_sum(tf.sparse.from_dense(tf.nn.relu(x)), axis=[0, 2], output_is_sparse=True),
          v(3, 4, 2), grads=False),
        F("sparse.reduce_max_sparse",
          lambda tf, x: tf.sparse.reduce_max(tf.sparse.from_dense(tf.nn.relu(x)), axis=-1, keepdims=True,
                                             output_is_sparse=True),
          v(4, 5), grads=False),
        F("random.stateless_shuffle",
          lambda tf, x: [tf.random.experimental.stateless_shuffle(x, seed=[4, 7]),
                         tf.random.experimental.stateless_shuffle(x[:, 0], seed=tf.constant([9, 1], tf.int64))],
          v(6, 3), grads=False),
        F("variable_slice_assign_ref", lambda tf, u: _slice_assigns(tf, u, False), v(2, 3), grads=False),
        F("variable_slice_assign_resource", lambda tf, u: _slice_assigns(tf, u, True), v(2, 3), grads=False),
        F("raw_ops.TensorStridedSliceUpdate",
          lambda tf, x, u: [tf.raw_ops.TensorStridedSliceUpdate(input=x, begin=[1, 0], end=[3, 4], strides=[1, 2],
                                                                value=u),
                            tf.raw_ops.TensorStridedSliceUpdate(input=x, begin=[0, 1], end=[0, 2], strides=[1, 1],
                                                                value=u[0, :1], shrink_axis_mask=1)],
          v(4, 4), v(2, 2)),
        F("transpose_conjugate",
          lambda tf, x, y: (lambda z: [tf.math.real(z), tf.math.imag(z)])(
              tf.transpose(tf.complex(x, y), perm=[1, 0, 2], conjugate=True)), v(2, 3, 2), v(2, 3, 2)),
        F("unravel_index", lambda tf: [tf.unravel_index([5, 7, 11, 0], [3, 4]),
                                       tf.unravel_index(tf.constant(17, tf.int64), tf.constant([2, 3, 4], tf.int64))],
          grads=False),
        F("image.non_max_suppression_overlaps",
          lambda tf, o, sc: tf.image.non_max_suppression_overlaps(o, sc, 3, overlap_threshold=0.4, score_threshold=0.1),
          v(5, 5, lo=0.0), v(5, lo=0.0), grads=False),
        F("raw_ops.NonMaxSuppression_v1_v2",
          lambda tf, b, sc: [tf.raw_ops.NonMaxSuppression(boxes=b, scores=sc, max_output_size=4, iou_threshold=0.3),
                             tf.raw_ops.NonMaxSuppressionV2(boxes=b, scores=sc, max_output_size=3,
                                                            iou_threshold=tf.constant(0.2))],
          v(6, 4), v(6), grads=False),
        F("strings.unsorted_segment_join",
          lambda tf, x: [tf.strings.unsorted_segment_join(x, [[0, 2, 0], [2, 0, 1]], 4, separator="+"),
                         tf.strings.unsorted_segment_join(x, tf.constant([1, 0], tf.int64), 2)],
          np.array([[b"a", b"", b"c"], [b"", b"e", b"f"]], object), grads=False),
        F("compat.v1.Print", lambda tf, x: tf.compat.v1.Print(x, [x, tf.shape(x)], "sweep: ", summarize=2) * 2.0, v(3, 2)),
        F("guarantee_const", lambda tf, x: tf.guarantee_const(x) + 1.0, v(2, 2), grads=False),
        F("sets.dense",
          lambda tf, a, b: [tf.sets.intersection(a, b), tf.sets.union(a, b), tf.sets.difference(a, b),
                            tf.sets.difference(a, b, aminusb=False), tf.sets.size(tf.sparse.from_dense(a))],
          g.randint(0, 6, (3, 2, 5)).astype(np.int32), g.randint(0, 6, (3, 2, 4)).astype(np.int32), grads=False),
        F("sets.sparse",
          lambda tf, a, b: [tf.sets.union(tf.sparse.from_dense(a), tf.sparse.from_dense(b)),
                            tf.sets.intersection(a, tf.sparse.from_dense(b)),
                            tf.sets.difference(tf.sparse.from_dense(a), b)],
          g.randint(0, 5, (4, 6)).astype(np.int64), g.randint(0, 5, (4, 3)).astype(np.int64), grads=False),
        F("sets.strings",
          lambda tf, a, b: [tf.sets.union(a, b), tf.sets.intersection(a, b), tf.sets.size(tf.sparse.from_dense(b))],
          _strings([b"a", b"b", b"c", b"a", b"", b"d"]).reshape(2, 3),
          _strings([b"c", b"a", b"e", b"f"]).reshape(2, 2), grads=False),
        F("sparse.split",
          lambda tf, x: tf.sparse.split(sp_input=tf.sparse.from_dense(tf.nn.relu(x)), num_split=3, axis=1)
          + tf.sparse.split(sp_input=tf.sparse.from_dense(tf.nn.relu(x)), num_split=2, axis=-2),
          v(5, 7), grads=False),
        F("edit_distance",
          lambda tf, h, t: [tf.edit_distance(tf.sparse.from_dense(h), tf.sparse.from_dense(t)),
                            tf.edit_distance(tf.sparse.from_dense(h), tf.sparse.from_dense(t), normalize=False)],
          g.randint(0, 3, (3, 2, 4)).astype(np.int32), g.randint(0, 3, (3, 2, 5)).astype(np.int32), grads=False),
        F("edit_distance.strings",
          lambda tf, h, t: tf.edit_distance(tf.sparse.from_dense(h), tf.sparse.from_dense(t)),
          _strings([b"ab", b"", b"c", b"ab", b"", b""]).reshape(3, 2),
          _strings([b"ab", b"c", b"", b"", b"d", b"ab"]).reshape(3, 2), grads=False),
        F("random.Generator.from_seed",
          lambda tf, x: _generator_draws(tf, x, lambda: tf.random.Generator.from_seed(7)), v(2, 3), grads=False),
        _keras_train("keras.legacy.SGD_nesterov", lambda k: k.optimizers.legacy.SGD(0.1, momentum=0.9, nesterov=True),
                     v(6, 4), g.randint(0, 3, 6)),
        _keras_train("keras.legacy.Adam_amsgrad", lambda k: k.optimizers.legacy.Adam(0.05, amsgrad=True),
                     v(6, 4), g.randint(0, 3, 6)),
        _keras_train("keras.legacy.SGD_momentum_embedding", lambda k: k.optimizers.legacy.SGD(0.1, momentum=0.9),
                     g.randint(0, 10, (6, 5)).astype(np.int32), g.randint(0, 3, 6)),
        F("raw_ops.MatrixDiagV2",
          lambda tf, d, x: [tf.raw_ops.MatrixDiagV2(diagonal=d, k=[-1, 1], num_rows=-1, num_cols=-1,
                                                    padding_value=0.0),
                            tf.raw_ops.MatrixDiagPartV2(input=x, k=[-2, 1], padding_value=9.0),
                            tf.raw_ops.MatrixSetDiagV2(input=x, diagonal=d, k=[0, 2])],
          v(2, 3, 4), v(2, 4, 5)),
        F("raw_ops.MaxPoolV2", lambda tf, x: _max_pool_v2(tf, x), v(2, 6, 5, 3)),
        F("random.Generator.from_non_deterministic_state",
          lambda tf, x: _generator_draws(tf, x, tf.random.Generator.from_non_deterministic_state), v(2, 3),
          grads=False),
        F("nn.fractional_max_pool",
          lambda tf, x: list(tf.nn.fractional_max_pool(x, [1.0, 1.5, 1.6, 1.0], seed=7))
          + list(tf.nn.fractional_max_pool(x, [1.0, 1.3, 2.0, 1.0], pseudo_random=True, overlapping=True, seed=3)),
          v(2, 7, 9, 2)),
        F("nn.fractional_avg_pool",
          lambda tf, x: list(tf.nn.fractional_avg_pool(x, [1.0, 1.5, 1.6, 1.0], overlapping=True, seed=5))
          + list(tf.nn.fractional_avg_pool(x, [1.0, 1.3, 2.0, 1.0], pseudo_random=True, seed=9)),
          v(2, 7, 9, 2)),
        F("random.stateless_parameterized_truncated_normal",
          lambda tf, m, s: [tf.random.stateless_parameterized_truncated_normal(
              [4, 3], seed=[3, 4], means=m, stddevs=s, minvals=[-1.0, 0.2, 2.0], maxvals=[1.0, 0.6, float("inf")]),
              tf.random.stateless_parameterized_truncated_normal(
              [2, 2, 3], seed=tf.constant([5, 6], tf.int64), means=m, stddevs=1.0, minvals=-float("inf"), maxvals=m)],
          v(3), v(3, lo=0.5, hi=1.5), grads=False),
        F("CriticalSection.execute", lambda tf, x: _critical_section(tf, x), v(3), grads=False),
        F("image.adjust_jpeg_quality",
          lambda tf, x: [tf.image.adjust_jpeg_quality(x, 100), tf.image.adjust_jpeg_quality(x, tf.constant(90))],
          _blocks(g, 16, 24).astype(np.float32) / 255.0, grads=False),
        F("image.decode_and_crop_jpeg",
          lambda tf, x: [tf.image.decode_and_crop_jpeg(tf.io.encode_jpeg(x, quality=100), [2, 3, 10, 12]),
                         tf.image.decode_and_crop_jpeg(tf.io.encode_jpeg(x, quality=100), [8, 0, 8, 24], channels=1)],
          _blocks(g, 16, 24), grads=False),
        F("raw_ops.Save_Restore_v1_checkpoint", lambda tf, x, n: _v1_checkpoint(tf, x, n), v(3, 4),
          g.randint(-9, 9, (2,)).astype(np.int64), grads=False),
        F("linalg.eig", lambda tf, x: _eig_invariants(tf, x), v(4, 4)),
        F("linalg.eig_complex", lambda tf, x, y: _eig_invariants(tf, tf.complex(x, y)), v(3, 3), v(3, 3)),
        F("linalg.eigvals", lambda tf, x: _eig_invariants(tf, x, vectors=False), v(2, 3, 3)),
        F("strings.unicode_script",
          lambda tf, x: tf.strings.unicode_script(x),
          np.array([[65, 0x416, 0x4E00, 0x300, 0x5D0, 0x627], [0xD800, 0x1F600, 0x10FFFF, -1, 0x110000, 0x3042]],
                   np.int32), grads=False),
        F("raw_ops.Stack_v1", lambda tf, x: _v1_stack(tf, x), v(3, 2), grads=False),
    ]


def _blocks(g, h, w):
    """A gray uint8 image [h, w, 1] of constant 8x8 blocks: JPEG keeps only their DC terms,
    which any decoder reconstructs exactly, so decoded values can be compared exactly."""
    b = g.randint(20, 236, (h // 8, w // 8)).astype(np.uint8)
    return np.kron(b, np.ones((8, 8), np.uint8))[:, :, None]


def _critical_section(tf, x):
    """Six executions of one CriticalSection, free to run in parallel, each adding `x` to a
    counter variable (reset first: the sweep runs a case more than once): the values they
    saw, sorted, and the final count."""
    var = tf.compat.v1.Variable(tf.zeros([3]), use_resource=True, name="cs_counter")
    cs = tf.CriticalSection(name="cs")
    with tf.control_dependencies([var.assign(tf.zeros([3]))]):
        seen = [cs.execute(lambda: tf.identity(var.assign_add(x))) for _ in range(6)]
    with tf.control_dependencies(seen):
        final = var.read_value()
    return [tf.sort(tf.stack(seen), axis=0), final]


def _max_pool_v2(tf, x):
    """MaxPoolV2 (ksize and strides as tensors) and its gradient MaxPoolGradV2 (whose own
    gradient, MaxPoolGradGradV2, the harness asks for)."""
    ksize, strides = tf.constant([1, 3, 2, 1]), tf.constant([1, 2, 2, 1])
    y = tf.raw_ops.MaxPoolV2(input=x, ksize=ksize, strides=strides, padding="SAME")
    return [y, tf.gradients(y * y, x)[0]]


def _keras_train(name, make_opt, x, y):
    """A tf_keras model (an Embedding for int inputs, else two Dense layers) whose output is its
    sparse categorical cross-entropy on labels `y`, trained by `make_opt(tf_keras)` as Keras 2's
    graph-mode training loop does (`get_updates`)."""
    from harness import Case

    def build():
        import tensorflow as tf
        import tf_keras as k
        p = tf.compat.v1.placeholder(tf.as_dtype(x.dtype), x.shape)
        if x.dtype.kind == "i":
            layers = [k.layers.Embedding(10, 4), k.layers.GlobalAveragePooling1D(), k.layers.Dense(3)]
        else:
            layers = [k.layers.Dense(5, activation="tanh"), k.layers.Dense(3)]
        logits = k.Sequential(layers)(p)
        return {p: x}, [k.losses.SparseCategoricalCrossentropy(from_logits=True)(y, logits)]

    def train(loss):
        import tensorflow as tf
        import tf_keras
        return tf.group(*make_opt(tf_keras).get_updates(loss, tf.compat.v1.trainable_variables()))

    return Case("train." + name, build, train=train)


def _slice_assigns(tf, u, resource):
    """`var[1:3].assign(u)` and `var[::2, 1].assign(...)` on a variable of its own (reset to its
    initial value first); the value after both."""
    init = np.arange(12, dtype=np.float32).reshape(4, 3) / 5.0
    var = tf.compat.v1.Variable(init, use_resource=resource, name="slice_%s" % ("res" if resource else "ref"))
    with tf.control_dependencies([tf.compat.v1.assign(var, init)]):
        a = var[1:3].assign(u)
    with tf.control_dependencies([a]):
        b = var[::2, 1].assign(u[0, :2] * 3.0)
    with tf.control_dependencies([b]):
        return tf.identity(var.read_value() if resource else b)


def _generator_draws(tf, x, make, binomial=True):
    """A tf.random.Generator from `make()` (its state reset first: the sweep runs a case more
    than once), each of its draws after the one before (graph mode orders nothing on the
    state), and its state at the end. (TensorFlow's binomial takes Philox only.)"""
    gen = make()
    out = [gen.state.assign(gen.state.initial_value)]
    draws = [
        lambda: gen.normal(tf.shape(x)),
        lambda: gen.uniform([2, 3], minval=-1.0, maxval=2.0, dtype=tf.float64),
        lambda: gen.uniform([5], minval=-3, maxval=10, dtype=tf.int32),
        lambda: gen.uniform([3], minval=-2**40, maxval=2**41, dtype=tf.int64),
        lambda: gen.uniform_full_int([4], dtype=tf.int64),
        lambda: gen.uniform_full_int([3], dtype=tf.uint32),
        lambda: gen.truncated_normal([7], mean=1.0, stddev=x[0, 0] + 2.0),
        lambda: gen.binomial([3], counts=[10.0, 200.0, 3.0], probs=[0.5, 0.2, 0.9]) if binomial else x,
        lambda: (gen.binomial([2, 2], counts=[[40.0], [5.0]], probs=[0.3, 0.6], dtype=tf.float32)
                 if binomial else x),
        lambda: gen.make_seeds(2),
        lambda: gen.skip(5),
        lambda: gen.normal([2]),
        lambda: gen.state.read_value(),
    ]
    return _in_turn(tf, out, draws)


def _in_turn(tf, out, draws):
    """Each of `draws` run after the one before (the first after `out`'s op); their tensors."""
    for d in draws:
        with tf.control_dependencies([out[-1]]):
            out.append(d())
    return [t for t in out[1:] if isinstance(t, tf.Tensor)]


def _raw_ref(op):
    """tf.raw_ops.`op` applied to a reference variable (no tf.compat.v1 wrapper exists)."""
    import tensorflow as tf
    return lambda var, i, u: getattr(tf.raw_ops, op)(ref=var._ref(), indices=i, updates=u)


def _raw_resource(op):
    import tensorflow as tf
    return lambda var, i, u: getattr(tf.raw_ops, op)(ref=var.handle, indices=i, updates=u)


def _ref_scatters(tf, u, fns, idx, resource):
    """Each scatter of `fns` applied with `u` at `idx` to a variable of its own (reference
    variables unless `resource`), reset to its initial value first, read after it."""
    out = []
    for k, f in enumerate(fns):
        init = np.arange(12, dtype=np.float32).reshape(4, 3) / 7.0 - 0.5 + k
        var = tf.compat.v1.Variable(init, use_resource=resource, name="v%d" % k)
        # Reset first: the sweep runs a case more than once.
        with tf.control_dependencies([tf.compat.v1.assign(var, init)]):
            op = f(var, tf.constant(idx), u)
        if resource:
            with tf.control_dependencies([op]):
                out.append(var.read_value())
        else:
            # The op's own output reference: a read of `var` would go through its snapshot,
            # which does not wait for the scatter.
            out.append(tf.identity(op))
    return out


def _strings(vals):
    """A vector of byte strings as the object array the sweep feeds to a string placeholder."""
    a = np.empty(len(vals), dtype=object)
    a[:] = vals
    return a


def _bmp(g, width, height, bpp):
    """A scalar string: a BMP file of random pixels (negative height: rows top-down)."""
    row = (bpp // 8 * width + 3) // 4 * 4
    pixels = g.randint(0, 256, (abs(height), row)).astype(np.uint8).tobytes()
    info = struct.pack("<IiiHHIIiiII", 40, width, height, 1, bpp, 0, len(pixels), 0, 0, 0, 0)
    f = b"BM" + struct.pack("<IHHI", 54 + len(pixels), 0, 0, 54) + info + pixels
    return np.array(f, dtype=object)


def _sequence(i):
    """A serialized tf.train.SequenceExample: a context and feature lists of i + 1 steps."""
    import tensorflow as tf
    s = tf.train.SequenceExample()
    s.context.feature["len"].int64_list.value.append(i + 1)
    s.context.feature["tags"].bytes_list.value.extend([b"t%d" % k for k in range(i)])
    for k in range(i + 1):
        s.feature_lists.feature_list["tok"].feature.add().int64_list.value.extend([k, i * k])
        s.feature_lists.feature_list["w"].feature.add().float_list.value.extend([0.5 * j for j in range(k)])
        s.feature_lists.feature_list["rr"].feature.add().float_list.value.extend([float(k)] * ((i + k) % 3))
    return s.SerializeToString()


def _parse_sequence(tf, x, single=False):
    ctx = {"len": tf.io.FixedLenFeature([], tf.int64, default_value=0), "tags": tf.io.VarLenFeature(tf.string),
           "absent": tf.io.FixedLenFeature([2], tf.float32, default_value=[1.0, 2.0])}
    seq = {"tok": tf.io.FixedLenSequenceFeature([2], tf.int64), "w": tf.io.VarLenFeature(tf.float32),
           "none": tf.io.FixedLenSequenceFeature([], tf.float32, allow_missing=True)}
    if single:
        c, f = tf.io.parse_single_sequence_example(x, ctx, seq)
        return [c["len"], c["tags"], c["absent"], f["tok"], f["w"], f["none"]]
    seq["rr"] = tf.io.RaggedFeature(tf.float32, row_splits_dtype=tf.int32)
    c, f, lengths = tf.io.parse_sequence_example(x, ctx, seq)
    return [c["len"], c["tags"], c["absent"], f["tok"], f["w"], f["none"], lengths["tok"], f["rr"].flat_values,
            f["rr"].row_splits]


def _v1_checkpoint(tf, x, n):
    """A V1 checkpoint file written by SaveSlices (`x` in two row slices, `n` whole) and by
    Save, then read by Restore, RestoreSlice (a slice across the stored two) and RestoreV2
    (which reads V1 files when the prefix has no V2 index)."""
    d = os.path.join(tempfile.gettempdir(), "ff-sweep-v1-%d" % os.getpid())
    os.makedirs(d, exist_ok=True)
    sliced, whole = os.path.join(d, "sliced.ckpt"), os.path.join(d, "whole.ckpt")
    save = tf.raw_ops.SaveSlices(filename=sliced, tensor_names=["x", "x", "n"],
                                 shapes_and_slices=["3 4 0,1:-", "3 4 1,2:-", ""], data=[x[:1], x[1:], n])
    save2 = tf.raw_ops.Save(filename=whole, tensor_names=["x2", "n2"], data=[x * 2.0, n + 1])
    with tf.control_dependencies([save, save2]):
        return [tf.raw_ops.Restore(file_pattern=sliced, tensor_name="x", dt=tf.float32),
                tf.raw_ops.RestoreSlice(file_pattern=sliced, tensor_name="x", shape_and_slice="3 4 0,2:1,2",
                                        dt=tf.float32),
                tf.raw_ops.Restore(file_pattern=os.path.join(d, "*.ckpt"), tensor_name="x2", dt=tf.float32),
                *tf.raw_ops.RestoreV2(prefix=whole, tensor_names=["n2", "x2"], shape_and_slices=["", "3 4 2,1:-"],
                                     dtypes=[tf.int64, tf.float32])]


def _eig_invariants(tf, x, vectors=True):
    """What does not depend on the eigenvalues' order or the eigenvectors' phases: the real
    and imaginary parts of the power sums sum(e^k), k = 1..3, and (with `vectors`) the real
    part of V diag(e) V^-1, which is x again."""
    if vectors:
        e, v = tf.linalg.eig(x)
    else:
        e = tf.linalg.eigvals(x)
    out = []
    p = e
    for _ in range(3):
        s = tf.reduce_sum(p, axis=-1)
        out += [tf.math.real(s), tf.math.imag(s)]
        p = p * e
    if vectors:
        out.append(tf.math.real(tf.linalg.matmul(v * e[..., None, :], tf.linalg.inv(v))))
    return out


def _v1_stack(tf, x):
    """TensorFlow 1's Stack (a Ref(string) handle): three pushes, then pops in reverse, each
    after the one before, then StackClose."""
    h = tf.raw_ops.Stack(elem_type=tf.float32, stack_name="v1stack")
    out = [tf.raw_ops.StackPush(handle=h, elem=x)]
    draws = [lambda: tf.raw_ops.StackPush(handle=h, elem=x * 2.0),
             lambda: tf.raw_ops.StackPush(handle=h, elem=x[0]),
             lambda: tf.raw_ops.StackPop(handle=h, elem_type=tf.float32),
             lambda: tf.raw_ops.StackPop(handle=h, elem_type=tf.float32),
             lambda: tf.raw_ops.StackPop(handle=h, elem_type=tf.float32)]
    got = _in_turn(tf, out, draws)
    with tf.control_dependencies(got):
        close = tf.raw_ops.StackClose(handle=h)
    with tf.control_dependencies([close]):
        return [tf.identity(t) for t in got] + [tf.identity(out[0])]
