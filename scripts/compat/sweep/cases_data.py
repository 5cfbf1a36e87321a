"""Sweep cases: array ops, tf.image, tf.strings, tf.io example parsing, tf.sparse and tf.random,
each on fed placeholders in graph mode (helpers and the case order: cases_funcs.py)."""

import numpy as np

from cases_funcs import F, ints, pos, strs, u

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
        F("io.decode_raw", lambda tf, x: [tf.io.decode_raw(x, tf.uint8), tf.io.decode_raw(x, tf.int16, little_endian=False)],
          np.array([b"abcd", b"\x00\x01\xfe\xff", b"wxyz"], object)),
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
        F("sparse.bincount_dense_weighted", lambda tf, x, w: tf.sparse.bincount(x, weights=w, axis=-1, binary_output=False),
          ints(2, 4, hi=5, dtype=np.int64), u(2, 4), grads=False),
        F("sparse.bincount_ragged", lambda tf, x: tf.sparse.bincount(tf.RaggedTensor.from_row_splits(x, [0, 3, 3, 5]),
                                                                     maxlength=3, binary_output=True),
          ints(5, hi=5, dtype=np.int64), grads=False),
        F("sparse.minimum", lambda tf, v: tf.sparse.minimum(st(tf, v), st(tf, -v)), v),
        F("ragged.to_sparse", lambda tf, v: tf.RaggedTensor.from_nested_row_splits(v, [[0, 2, 3], [0, 1, 1, 3]])
          .to_sparse(), u(3, 2)),
    ]


def random_ops():
    return [
        F("random.uniform", lambda tf, s: tf.random.uniform([3, 4], seed=5) + s, np.float32(0), random=True),
        F("random.normal", lambda tf, s: tf.random.normal([3, 4], seed=5) + s, np.float32(0), random=True),
        F("random.truncated_normal", lambda tf, s: tf.random.truncated_normal([3, 4], seed=5) + s, np.float32(0),
          random=True),
        F("random.categorical", lambda tf, x: tf.random.categorical(x, 5, seed=5), u(2, 3), random=True),
        F("random.gamma", lambda tf, a: tf.random.gamma([4], a, seed=5), pos(3)),
        F("random.poisson", lambda tf, a: tf.random.poisson([4], a, seed=5), pos(3)),
        F("random.shuffle", lambda tf, x: tf.random.shuffle(x, seed=5), u(5, 2), random=True),
        F("random.stateless_uniform", lambda tf, s: tf.random.stateless_uniform([3, 4], [1, 2]) + s, np.float32(0)),
        F("random.stateless_normal", lambda tf, s: tf.random.stateless_normal([3, 4], [1, 2]) + s, np.float32(0)),
        F("random.stateless_truncated_normal",
          lambda tf, s: tf.random.stateless_truncated_normal([3, 4], [1, 2]) + s, np.float32(0)),
        F("random.stateless_categorical", lambda tf, x: tf.random.stateless_categorical(x, 4, [1, 2]), u(2, 3)),
        F("random.stateless_uniform_int",
          lambda tf, s: tf.random.stateless_uniform([5], [3, 4], minval=0, maxval=9, dtype=tf.int32) + s,
          np.int32(0)),
        F("random.stateless_gamma", lambda tf, a: tf.random.stateless_gamma([4, 3], [1, 2], a), pos(3)),
        F("random.stateless_poisson", lambda tf, a: tf.random.stateless_poisson([4, 3], [1, 2], a), pos(3)),
        F("random.stateless_binomial", lambda tf, s: tf.random.stateless_binomial([4], [1, 2], 10.0, 0.3) + s,
          np.int32(0)),
    ]
