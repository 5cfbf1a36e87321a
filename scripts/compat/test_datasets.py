"""`tf.data` input pipelines from TensorFlow's client on a ferroflow cluster: the same
scenarios run on a TensorFlow cluster (1 ps + 1 worker) and on a ferroflow cluster, in TF
1.x behaviour (`disable_v2_behavior`) and in TF 2's graph mode (each mode in its own
process), and must give the same elements, in the same order, and the same errors:

- range / map / filter / seeded shuffle / batch / repeat / prefetch through a one-shot
  iterator, read to OUT_OF_RANGE; a reshuffling `repeat` (each pass its own order);
- from_tensor_slices of a fed placeholder with padded_batch through an initializable
  iterator, re-initialized with another feed;
- zip, flat_map, take, skip, concatenate, parallel map with captured tensors;
- TFRecord (plain and GZIP), text-line (ZLIB) and fixed-length-record files;
- sparse elements: `parse_single_example` with a `VarLenFeature` and `strings.split(...)
  .to_sparse()` in map functions, batched;
- feedable iterators (string handles switching between a training and a validation
  iterator); one iterator shared by two sessions (`shared_name`);
- errors: a map function that fails, GetNext before initialization, a missing file, a
  corrupted record;
- a model trained from a pipeline on the worker with its variables on the ps."""

import glob
import hashlib
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


outcome = ffcluster.outcome


def drain(tf, sess, nxt, limit=200, feed=None):
    """Every element until OUT_OF_RANGE (as nested lists), then the error's class."""
    out = []
    for _ in range(limit):
        try:
            v = sess.run(nxt, feed)
        except tf.errors.OutOfRangeError:
            out.append("OutOfRange")
            return out
        out.append(tolist(v))
    return out


def drain_ragged(tf, sess, nxt, limit=50):
    """Every ragged element until OUT_OF_RANGE (as nested lists)."""
    out = []
    for _ in range(limit):
        try:
            out.append(sess.run(nxt).to_list())
        except tf.errors.OutOfRangeError:
            out.append("OutOfRange")
            return out
    return out


def tolist(v):
    if isinstance(v, (tuple, list)):
        return [tolist(x) for x in v]
    if isinstance(v, dict):
        return {k: tolist(x) for k, x in sorted(v.items())}
    a = np.asarray(v)
    if a.dtype.kind in "SO":
        return [x.decode() if isinstance(x, bytes) else x for x in a.reshape(-1).tolist()]
    return a.tolist()


def cache_triple(x):
    import tensorflow as tf
    return x, tf.strings.as_string(x * 7), tf.cast(x, tf.float32) * 0.5


def ragged_rows(tf, base):
    """Ragged elements (ragged rank 1, one of them empty) sliced from a ragged constant."""
    return tf.data.Dataset.from_tensor_slices(
        tf.ragged.constant([[[1, 2], [3]], [], [[4], [], [5, 6]]], dtype=tf.int64) + base)


def read_ragged_caches(tf, d):
    """Every ragged cache file of `d` (ragged elements: variants in a tensor bundle), read by
    TensorFlow in process (ferroflow's files included)."""
    out = []
    for index in sorted(glob.glob(os.path.join(d, "rcache-*.index"))):
        g = tf.Graph()
        with g.as_default():
            nxt = tf.compat.v1.data.make_one_shot_iterator(
                ragged_rows(tf, 90).cache(index[:-len(".index")])).get_next()
        with tf.compat.v1.Session(graph=g) as sess:
            out.append(drain_ragged(tf, sess, nxt))
    return out


def read_caches(tf, d):
    """Every cache file of `d` written by a run's own pipeline, read by TensorFlow in process
    (ferroflow's files included)."""
    out = []
    for index in sorted(glob.glob(os.path.join(d, "cache-*.index"))):
        g = tf.Graph()
        with g.as_default():
            nxt = tf.compat.v1.data.make_one_shot_iterator(
                tf.data.Dataset.range(90, 91).map(cache_triple).cache(index[:-len(".index")])).get_next()
        with tf.compat.v1.Session(graph=g) as sess:
            out.append(drain(tf, sess, nxt))
    return out


def write_files(d, tf):
    """Input files, written with TensorFlow's own writers (the same files serve both runs)."""
    paths = {"dir": d}
    for name, comp in (("plain.tfrecord", None), ("gz.tfrecord", "GZIP")):
        p = os.path.join(d, name)
        with tf.io.TFRecordWriter(p, options=comp) as w:
            for i in range(7):
                w.write(f"record-{i}".encode() * (i + 1))
        paths[name] = p
    import zlib
    p = os.path.join(d, "lines.txt.z")
    with open(p, "wb") as f:
        f.write(zlib.compress(b"alpha\nbeta\r\ngamma\n\ndelta"))
    paths["lines"] = p
    p = os.path.join(d, "fixed.bin")
    with open(p, "wb") as f:
        f.write(b"HDR" + bytes(range(40)) + b"FOOT")
    paths["fixed"] = p
    p = os.path.join(d, "bad.tfrecord")
    with open(paths["plain.tfrecord"], "rb") as f:
        b = bytearray(f.read())
    b[30] ^= 0xFF
    with open(p, "wb") as f:
        f.write(bytes(b))
    paths["bad"] = p
    return paths


def scenarios(tf, target, files):
    out = []
    worker = "/job:worker/task:0"
    g = tf.Graph()
    with g.as_default(), tf.device(worker):
        tf.compat.v1.set_random_seed(7)
        ds = (tf.data.Dataset.range(20).map(lambda x: x * 3).filter(lambda x: tf.equal(x % 2, 0))
              .shuffle(4, seed=11).batch(3).repeat(2).prefetch(2))
        one = tf.compat.v1.data.make_one_shot_iterator(ds).get_next()
        resh = tf.compat.v1.data.make_one_shot_iterator(
            tf.data.Dataset.range(6).shuffle(6, seed=3, reshuffle_each_iteration=True).repeat(3)).get_next()
        fixed = tf.compat.v1.data.make_one_shot_iterator(
            tf.data.Dataset.range(6).shuffle(6, seed=3, reshuffle_each_iteration=False).repeat(2)).get_next()

        ph = tf.compat.v1.placeholder(tf.int64, [None, None], name="rows")
        lens = tf.compat.v1.placeholder(tf.int32, [None], name="lens")
        padded = tf.data.Dataset.from_tensor_slices((ph, lens)).map(
            lambda r, n: (r[:n], tf.cast(n, tf.float32) / 2)).padded_batch(2, ([None], []), (tf.constant(-1, tf.int64), 0.5))
        init_it = tf.compat.v1.data.make_initializable_iterator(padded)
        init_next = init_it.get_next()

        k = tf.constant(100, tf.int64)
        combo = tf.data.Dataset.zip((tf.data.Dataset.range(5), tf.data.Dataset.from_tensor_slices([[1, 2], [3, 4], [5, 6], [7, 8], [9, 10]])))
        combo = combo.flat_map(lambda a, b: tf.data.Dataset.from_tensor_slices(b + tf.cast(a, tf.int32))).skip(1).take(6)
        combo = combo.concatenate(tf.data.Dataset.from_tensors(42)).map(lambda x: tf.cast(x, tf.int64) + k, num_parallel_calls=3)
        combo_next = tf.compat.v1.data.make_one_shot_iterator(combo).get_next()

        dict_ds = tf.data.Dataset.from_tensor_slices({"a": [1.0, 2.0, 3.0], "b": ["x", "y", "z"]}).batch(2, drop_remainder=True)
        dict_next = tf.compat.v1.data.make_one_shot_iterator(dict_ds).get_next()

        rec = tf.data.TFRecordDataset([files["plain.tfrecord"], files["gz.tfrecord"]][:1]).concatenate(
            tf.data.TFRecordDataset(files["gz.tfrecord"], compression_type="GZIP")).map(tf.strings.length)
        rec_next = tf.compat.v1.data.make_one_shot_iterator(rec).get_next()
        lines_next = tf.compat.v1.data.make_one_shot_iterator(
            tf.data.TextLineDataset(files["lines"], compression_type="ZLIB")).get_next()
        fixed_next = tf.compat.v1.data.make_one_shot_iterator(
            tf.data.FixedLengthRecordDataset(files["fixed"], 8, header_bytes=3, footer_bytes=4).map(
                lambda s: tf.io.decode_raw(s, tf.uint8))).get_next()

        train_ds = tf.data.Dataset.range(100, 110)
        val_ds = tf.data.Dataset.range(900, 903)
        train_it = tf.compat.v1.data.make_one_shot_iterator(train_ds)
        val_it = tf.compat.v1.data.make_initializable_iterator(val_ds)
        handle = tf.compat.v1.placeholder(tf.string, [], name="handle")
        feedable = tf.compat.v1.data.Iterator.from_string_handle(
            handle, tf.compat.v1.data.get_output_types(train_ds), tf.compat.v1.data.get_output_shapes(train_ds))
        feed_next = feedable.get_next()
        train_h, val_h = train_it.string_handle(), val_it.string_handle()

        bad_map = tf.compat.v1.data.make_one_shot_iterator(tf.data.Dataset.range(3).map(
            lambda x: tf.debugging.check_numerics(1.0 / tf.cast(x - 1, tf.float32), "boom"))).get_next()
        never = tf.compat.v1.data.make_initializable_iterator(tf.data.Dataset.range(2))
        never_next = never.get_next()
        missing = tf.compat.v1.data.make_one_shot_iterator(tf.data.TFRecordDataset(files["plain.tfrecord"] + ".nope")).get_next()
        corrupt = tf.compat.v1.data.make_one_shot_iterator(tf.data.TFRecordDataset(files["bad"])).get_next()

        # Sparse elements: map functions that return SparseTensors (parsed VarLenFeatures,
        # split strings), batched (the batch's dense shape is the largest element's).
        examples = []
        for i, ids in enumerate([[3, 1], [], [7, 8, 9], [2]]):
            examples.append(tf.train.Example(features=tf.train.Features(feature={
                "ids": tf.train.Feature(int64_list=tf.train.Int64List(value=ids)),
                "w": tf.train.Feature(float_list=tf.train.FloatList(value=[i * 0.5]))})).SerializeToString())
        spec = {"ids": tf.io.VarLenFeature(tf.int64), "w": tf.io.FixedLenFeature([], tf.float32)}
        sparse_ds = tf.data.Dataset.from_tensor_slices(examples).map(lambda e: tf.io.parse_single_example(e, spec))
        sparse_next = tf.compat.v1.data.make_one_shot_iterator(sparse_ds.batch(3)).get_next()
        # ParseExample (V1, as TensorFlow 1.x wrote it into graphs) on the same examples.
        v1_parsed = tf.raw_ops.ParseExample(
            serialized=examples, names=[], sparse_keys=["ids"], dense_keys=["w", "missing"],
            dense_defaults=[tf.constant([], tf.float32), tf.constant([-1.0, -2.0])],
            sparse_types=[tf.int64], dense_shapes=[[], [2]])
        # Variable-length dense features (FixedLenSequenceFeature): padded to the longest,
        # batched and one example at a time in a map function; TensorFlow's error for a
        # count that is not a multiple of the row.
        seq_spec = {"ids": tf.io.FixedLenSequenceFeature([], tf.int64, allow_missing=True, default_value=-1),
                    "w": tf.io.FixedLenSequenceFeature([], tf.float32, allow_missing=True)}
        seq_parsed = tf.io.parse_example(examples, seq_spec)
        seq_next = tf.compat.v1.data.make_one_shot_iterator(tf.data.Dataset.from_tensor_slices(examples).map(
            lambda e: tf.io.parse_single_example(e, seq_spec))).get_next()
        seq_bad = tf.io.parse_example(examples, {"ids": tf.io.FixedLenSequenceFeature([2], tf.int64, allow_missing=True)})
        # Ragged features (tf.io.RaggedFeature, ParseExampleV2's ragged outputs): a row per
        # example (a missing feature: an empty row), int32 and int64 row splits, a partition
        # into rows of one, and one example at a time in a map function.
        rag_parsed = tf.io.parse_example(examples, {
            "ids": tf.io.RaggedFeature(tf.int64),
            "w": tf.io.RaggedFeature(tf.float32, row_splits_dtype=tf.int32),
            "ids_rows": tf.io.RaggedFeature(tf.int64, value_key="ids",
                                             partitions=[tf.io.RaggedFeature.UniformRowLength(1)])})
        rag_next = tf.compat.v1.data.make_one_shot_iterator(tf.data.Dataset.from_tensor_slices(examples).map(
            lambda e: tf.io.parse_single_example(e, {"ids": tf.io.RaggedFeature(tf.int64)})["ids"])).get_next()
        # Ragged elements (boxed in variants between the dataset and its iterator): a
        # batch parsed into a ragged tensor per element, and ragged elements batched.
        rag_batches_next = tf.compat.v1.data.make_one_shot_iterator(tf.data.Dataset.from_tensor_slices(examples).batch(
            3).map(lambda s: tf.io.parse_example(s, {"ids": tf.io.RaggedFeature(tf.int64)})["ids"])).get_next()
        rag_rows_next = tf.compat.v1.data.make_one_shot_iterator(tf.data.Dataset.from_tensor_slices(examples).map(
            lambda e: tf.io.parse_example([e], {"ids": tf.io.RaggedFeature(tf.int64)})["ids"][0:1]).batch(
            2)).get_next()
        # Ragged elements unbatched (RaggedTensorToVariant with batched_input=True): the
        # batches above cut into rows again, and slices of a ragged constant.
        rag_unbatch_next = tf.compat.v1.data.make_one_shot_iterator(tf.data.Dataset.from_tensor_slices(
            examples).map(lambda e: tf.io.parse_example([e], {"ids": tf.io.RaggedFeature(tf.int64)})["ids"][0:1]).batch(
            2).unbatch()).get_next()
        rag_slices_next = tf.compat.v1.data.make_one_shot_iterator(tf.data.Dataset.from_tensor_slices(
            tf.ragged.constant([[[1, 2], [3]], [], [[4], [], [5, 6]]])).map(lambda r: r * 10)).get_next()
        rag_dense_rows_next = tf.compat.v1.data.make_one_shot_iterator(tf.data.Dataset.from_tensor_slices(
            examples).batch(3).map(lambda s: tf.io.parse_example(s, {"ids": tf.io.RaggedFeature(tf.int64)})["ids"]
                                  ).unbatch()).get_next()
        split_next = tf.compat.v1.data.make_one_shot_iterator(tf.data.Dataset.from_tensor_slices(
            ["a b c", "d e", "f"]).map(lambda t: tf.strings.split([t]).to_sparse())).get_next()

        # interleave (sequential and parallel: TensorFlow's deterministic order), unbatch,
        # and cache (a reshuffling pipeline cached: every pass repeats the first one).
        inter_next = tf.compat.v1.data.make_one_shot_iterator(tf.data.Dataset.range(1, 6).interleave(
            lambda x: tf.data.Dataset.from_tensors(x).repeat(x), cycle_length=2, block_length=2)).get_next()
        pinter_next = tf.compat.v1.data.make_one_shot_iterator(tf.data.Dataset.range(1, 8).interleave(
            lambda x: tf.data.Dataset.range(10 * x, 10 * x + x % 3 + 1).map(lambda y: y + k), cycle_length=3, block_length=1,
            num_parallel_calls=2)).get_next()
        files_next = tf.compat.v1.data.make_one_shot_iterator(tf.data.Dataset.from_tensor_slices(
            [files["plain.tfrecord"], files["plain.tfrecord"]]).interleave(
            tf.data.TFRecordDataset, cycle_length=2, num_parallel_calls=2).map(tf.strings.length)).get_next()
        unb_next = tf.compat.v1.data.make_one_shot_iterator(tf.data.Dataset.from_tensor_slices(
            ([[1, 2], [3, 4], [5, 6]], [[7.0], [8.0], [9.0]])).batch(2).unbatch()).get_next()
        ua = tf.compat.v1.placeholder(tf.int32, [None], name="ua")
        ub = tf.compat.v1.placeholder(tf.int32, [None], name="ub")
        unb_bad = tf.compat.v1.data.make_initializable_iterator(tf.data.Dataset.from_tensors((ua, ub)).unbatch())
        unb_bad_next = unb_bad.get_next()
        cache_next = tf.compat.v1.data.make_one_shot_iterator(
            tf.data.Dataset.range(6).shuffle(6, seed=3).cache().repeat(3)).get_next()
        # cache(filename): TensorFlow's cache files (a tensor bundle). This run's own files,
        # written by the first pass and read by the second and by a pipeline with another
        # input; and "shared" files the other system's run wrote first (TensorFlow runs
        # first: ferroflow's run must read TensorFlow's files, its own input differs).
        own = os.path.join(files["dir"], "cache-" + hashlib.md5(target.encode()).hexdigest()[:8])
        xcache = os.path.join(files["dir"], "shared-cache")
        # Ragged elements cached to files (variants in the bundle, in TensorFlow's encoding):
        # this run's own file written and read back, and the shared file TensorFlow's run wrote.
        rown = os.path.join(files["dir"], "rcache-" + hashlib.md5(target.encode()).hexdigest()[:8])
        rcache_next = tf.compat.v1.data.make_one_shot_iterator(
            ragged_rows(tf, 0).map(lambda r: r * 10).cache(rown).repeat(2)).get_next()
        xrcache = os.path.join(files["dir"], "shared-rcache")
        rbase = 100 if os.path.exists(xrcache + ".index") else 0
        xrcache_next = tf.compat.v1.data.make_one_shot_iterator(ragged_rows(tf, rbase).cache(xrcache)).get_next()
        fcache_next = tf.compat.v1.data.make_one_shot_iterator(
            tf.data.Dataset.range(5).map(cache_triple).cache(own).repeat(2)).get_next()
        fcache_again = tf.compat.v1.data.make_one_shot_iterator(
            tf.data.Dataset.range(50, 53).map(cache_triple).cache(own)).get_next()
        base = 100 if os.path.exists(xcache + ".index") else 0
        xcache_next = tf.compat.v1.data.make_one_shot_iterator(
            tf.data.Dataset.range(base, base + 4).map(cache_triple).cache(xcache)).get_next()

        # window: datasets as elements, batched by a flat_map (shift, stride, drop_remainder,
        # two components; a window size fed at initialization, and TensorFlow's error for 0).
        win_next = tf.compat.v1.data.make_one_shot_iterator(
            tf.data.Dataset.range(7).window(3, shift=2).flat_map(lambda w: w.batch(3))).get_next()
        win2_next = tf.compat.v1.data.make_one_shot_iterator(tf.data.Dataset.zip(
            (tf.data.Dataset.range(12), tf.data.Dataset.range(12).map(lambda x: tf.cast(x, tf.float32) / 2))).window(
            3, shift=4, stride=2, drop_remainder=True).flat_map(
            lambda a, b: tf.data.Dataset.zip((a.batch(3), b.batch(3))))).get_next()
        # Dataset.reduce (ReduceDataset): a sum, and a windowed mean folded inside a map.
        k2 = tf.constant(0.5)
        reduced = tf.data.Dataset.range(10).reduce(np.int64(0), lambda s, x: s + x)
        pair_reduced = tf.data.Dataset.range(1, 6).reduce(
            (np.int64(1), np.float32(0)), lambda s, x: (s[0] * x, s[1] + tf.cast(x, tf.float32) * k2))
        win_mean_next = tf.compat.v1.data.make_one_shot_iterator(tf.data.Dataset.range(8).map(
            lambda x: tf.cast(x, tf.float32)).window(4, shift=2, drop_remainder=True).map(
            lambda w: w.reduce(np.float32(0), lambda s, x: s + x) / 4.0)).get_next()
        wsize = tf.compat.v1.placeholder(tf.int64, [], name="wsize")
        win_fed = tf.compat.v1.data.make_initializable_iterator(
            tf.data.Dataset.range(5).window(wsize, shift=1).flat_map(lambda w: w.batch(5)))
        win_fed_next = win_fed.get_next()

        # Files by pattern (MatchingFiles), read whole (ReadFile), written (WriteFile).
        d = os.path.dirname(files["plain.tfrecord"])
        listed_next = tf.compat.v1.data.make_one_shot_iterator(tf.data.Dataset.list_files(
            os.path.join(d, "*.tfrecord"), shuffle=False).map(
            lambda f: (tf.strings.regex_replace(f, ".*/", ""), tf.strings.length(tf.io.read_file(f))))).get_next()
        shuffled_next = tf.compat.v1.data.make_one_shot_iterator(tf.data.Dataset.list_files(
            os.path.join(d, "[pg]*"), seed=5).map(lambda f: tf.strings.regex_replace(f, ".*/", ""))).get_next()
        out_path = tf.compat.v1.placeholder(tf.string, [], name="out_path")
        written = tf.io.write_file(out_path, tf.strings.join(["w", tf.strings.as_string(tf.constant(7))]))
        with tf.control_dependencies([written]):
            read_back = tf.io.read_file(out_path)
        missing_file = tf.io.read_file(files["plain.tfrecord"] + ".nope")

        shared = tf.compat.v1.data.Iterator.from_structure(tf.int64, tf.TensorShape([]), shared_name="shared_it")
        shared_init = shared.make_initializer(tf.data.Dataset.range(10, 16))
        shared_next = shared.get_next()

    with tf.compat.v1.Session(target, graph=g) as sess:
        out.append(drain(tf, sess, one))
        out.append(drain(tf, sess, resh))
        out.append(drain(tf, sess, fixed))
        sess.run(init_it.initializer, {ph: [[1, 2, 3], [4, 5, 6], [7, 8, 9]], lens: [3, 1, 2]})
        out.append(drain(tf, sess, init_next))
        sess.run(init_it.initializer, {ph: [[5, 6]], lens: [0]})
        out.append(drain(tf, sess, init_next))
        out += [drain(tf, sess, it) for it in (combo_next, dict_next, rec_next, lines_next, fixed_next, sparse_next,
                                                split_next)]
        out.append(tolist(sess.run(v1_parsed)))
        out.append(tolist(sess.run(seq_parsed)))
        out.append(drain(tf, sess, seq_next))
        out.append(outcome(tf, lambda: sess.run(seq_bad)))
        rag = sess.run(rag_parsed)
        out.append({k: rag[k].to_list() for k in sorted(rag)})
        out.append(drain(tf, sess, rag_next))
        out += [drain_ragged(tf, sess, it) for it in (rag_batches_next, rag_rows_next, rag_unbatch_next, rag_slices_next)]
        out.append(drain(tf, sess, rag_dense_rows_next))
        th, vh = sess.run([train_h, val_h])
        seq = []
        for epoch in range(2):
            seq += [tolist(sess.run(feed_next, {handle: th})) for _ in range(2)]
            sess.run(val_it.initializer)
            seq += drain(tf, sess, feed_next, feed={handle: vh})
        out.append(seq)
        out.append([outcome(tf, lambda: tolist(sess.run(bad_map))) for _ in range(4)])
        out.append(outcome(tf, lambda: sess.run(never_next)))
        out.append(outcome(tf, lambda: sess.run(missing))[0])
        out.append([outcome(tf, lambda: tolist(sess.run(corrupt)))[0] for _ in range(2)])
        out.append(drain(tf, sess, inter_next))
        out.append(drain(tf, sess, pinter_next))
        out.append(drain(tf, sess, files_next))
        out.append(drain(tf, sess, unb_next))
        sess.run(unb_bad.initializer, {ua: [1, 2, 3], ub: [4, 5]})
        out.append(outcome(tf, lambda: sess.run(unb_bad_next))[0])
        sess.run(unb_bad.initializer, {ua: [1, 2], ub: [4, 5]})
        out.append(drain(tf, sess, unb_bad_next))
        cached = drain(tf, sess, cache_next)
        assert cached[0:6] == cached[6:12] == cached[12:18], cached
        out.append(cached)
        out.append(drain(tf, sess, fcache_next))
        out.append(drain(tf, sess, fcache_again))
        out.append(drain(tf, sess, xcache_next))
        out.append(drain_ragged(tf, sess, rcache_next))
        out.append(drain_ragged(tf, sess, xrcache_next))
        out.append(drain(tf, sess, win_next))
        out.append(tolist(sess.run([reduced, pair_reduced])))
        out.append(drain(tf, sess, win_mean_next))
        out.append(drain(tf, sess, win2_next))
        sess.run(win_fed.initializer, {wsize: 2})
        out.append(drain(tf, sess, win_fed_next))
        out.append(outcome(tf, lambda: sess.run(win_fed.initializer, {wsize: 0}))[0])
        out.append(drain(tf, sess, listed_next))
        out.append(drain(tf, sess, shuffled_next))
        out.append(tolist(sess.run(read_back, {out_path: os.path.join(d, "out", target.replace("/", "_").replace(":", "_"), "w.txt")})))
        out.append(outcome(tf, lambda: sess.run(missing_file))[0])
        sess.run(shared_init)
        first = [tolist(sess.run(shared_next)) for _ in range(2)]
    # A second session (another client) on the same server continues the shared iterator.
    with tf.compat.v1.Session(target, graph=g) as sess2:
        out.append(first + drain(tf, sess2, shared_next))
    out.append(train(tf, target))
    return out


def train(tf, target):
    """A linear model trained from a shuffled, batched pipeline on the worker; its
    variables on the ps (replica_device_setter)."""
    g = tf.Graph()
    with g.as_default():
        tf.compat.v1.set_random_seed(1)
        rng = np.random.RandomState(0)
        x = rng.randn(64, 3).astype(np.float32)
        y = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)
        with tf.compat.v1.device(tf.compat.v1.train.replica_device_setter(worker_device="/job:worker/task:0",
                                                                cluster={"ps": ["a"], "worker": ["b"]})):
            ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(64, seed=5).batch(16).repeat()
            bx, by = tf.compat.v1.data.make_one_shot_iterator(ds).get_next()
            w = tf.compat.v1.get_variable("w", [3, 1], initializer=tf.compat.v1.zeros_initializer())
            b = tf.compat.v1.get_variable("b", [1], initializer=tf.compat.v1.zeros_initializer())
            loss = tf.reduce_mean(tf.square(tf.matmul(bx, w) + b - by))
            step = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss)
        with tf.compat.v1.Session(target) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            return [float(sess.run([loss, step])[0]) for _ in range(20)]


def close(w, g):
    if isinstance(w, tuple) and len(w) == 2 and isinstance(w[0], str) and w[0].endswith("Error"):
        # An error: the same class, and TensorFlow's reason (after its framing) in ours.
        return isinstance(g, tuple) and g[0] == w[0] and w[1].split(": ")[-1] in g[1]
    if isinstance(w, float) or isinstance(g, float):
        return isinstance(w, (int, float)) and isinstance(g, (int, float)) and abs(w - g) <= 1e-4 * max(1.0, abs(w))
    if isinstance(w, (list, tuple)) and isinstance(g, (list, tuple)):
        return len(w) == len(g) and all(close(a, b) for a, b in zip(w, g))
    if isinstance(w, dict) and isinstance(g, dict):
        return w.keys() == g.keys() and all(close(w[k], g[k]) for k in w)
    return w == g


def run_mode(mode):
    tf = ffcluster.tf_in_mode(mode)
    with tempfile.TemporaryDirectory() as d:
        files = write_files(d, tf)
        want, got = ffcluster.on_both([("ps", 1), ("worker", 1)], lambda t: scenarios(tf, t, files))
        # TensorFlow reads the cache files both runs wrote (the same elements).
        caches = read_caches(tf, d)
        assert len(caches) == 2 and caches[0] == caches[1] and len(caches[0]) == 6, caches
        rcaches = read_ragged_caches(tf, d)
        assert len(rcaches) == 2 and rcaches[0] == rcaches[1] and len(rcaches[0]) == 4, rcaches
        assert rcaches[0][0] == [[10, 20], [30]], rcaches
    ffcluster.report(mode, want, got, close)


if __name__ == "__main__":
    ffcluster.main(__file__, run_mode)
