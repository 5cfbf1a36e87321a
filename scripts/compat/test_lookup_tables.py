"""Lookup tables from TensorFlow's Python client on a ferroflow cluster, in TensorFlow 1.x
behaviour (`disable_v2_behavior`) and in TensorFlow 2 graph mode (`disable_eager_execution`
only), each in its own process. Tables live on the ps and are read and updated from the
worker: static hash tables of several key/value dtypes filled by
`tf.compat.v1.tables_initializer()`, text-file initializers (columns, whole line, line
number, delimiter, vocab_size, offset), mutable hash tables (scalar and vector values,
insert/remove/size/export/import across steps) and dense hash tables. Values and error
classes (table not initialized, re-initialization with other data, mismatched sizes, wrong
dtypes, insert into a static table, dense special keys, missing file, bad vocab_size,
unparsable field) equal TensorFlow run in-process on the same graphs."""

import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

VOCAB = "apple\t10\t1.5\nbanana\t20\t2.5\ncherry\t30\t-0.5\ndate\t40\t4.0\n"


def files(d):
    vocab = os.path.join(d, "vocab.tsv")
    with open(vocab, "w") as f:
        f.write(VOCAB)
    words = os.path.join(d, "words.txt")
    with open(words, "w") as f:
        f.write("zero\none\ntwo\nthree\n")
    bad = os.path.join(d, "bad.tsv")
    with open(bad, "w") as f:
        f.write("apple\tten\n")
    return vocab, words, bad


def static_tables(ps, worker, d):
    """Static tables on the ps, looked up on the worker: name -> fetch."""
    import tensorflow as tf

    vocab, words, _ = files(d)
    out = {}
    with tf.device(ps):
        kv = tf.lookup.KeyValueTensorInitializer
        s2i = tf.lookup.StaticHashTable(kv(tf.constant(["a", "b", "c"]), tf.constant([1, 2, 3], tf.int64)), -1)
        i2s = tf.lookup.StaticHashTable(kv(tf.constant([7, 8], tf.int64), tf.constant(["seven", "eight"])), "?")
        i2i = tf.lookup.StaticHashTable(kv(tf.constant([1, 2], tf.int64), tf.constant([100, 200], tf.int64)), 0)
        s2f = tf.lookup.StaticHashTable(kv(tf.constant(["x", "y"]), tf.constant([0.5, -1.5])), 9.0)
        i2f = tf.lookup.StaticHashTable(kv(tf.constant([3, 4], tf.int64), tf.constant([3.25, 4.5], tf.float64)), 0.0)
        i32 = tf.lookup.StaticHashTable(kv(tf.constant([5, 6]), tf.constant([50, 60])), -7)
        cols = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(vocab, tf.string, 0, tf.int64, 1), -1)
        floats = tf.lookup.StaticHashTable(
            tf.lookup.TextFileInitializer(vocab, tf.string, 0, tf.float32, 2, delimiter="\t"), 0.0)
        lines = tf.lookup.StaticHashTable(
            tf.lookup.TextFileInitializer(words, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64,
                                          tf.lookup.TextFileIndex.LINE_NUMBER), -1)
        by_num = tf.lookup.StaticHashTable(
            tf.lookup.TextFileInitializer(words, tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER, tf.string,
                                          tf.lookup.TextFileIndex.WHOLE_LINE, vocab_size=3), "oov")
        index = tf.lookup.StaticHashTable(
            tf.lookup.TextFileInitializer(words, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64,
                                          tf.lookup.TextFileIndex.LINE_NUMBER, value_index_offset=100), -5)
    with tf.device(worker):
        out["s2i"] = s2i.lookup(tf.constant([["a", "z"], ["c", "b"]]))
        out["s2i_size"] = s2i.size()
        out["i2s"] = i2s.lookup(tf.constant([8, 9, 7], tf.int64))
        out["i2i"] = i2i.lookup(tf.constant([2, 2, 5], tf.int64))
        out["s2f"] = s2f.lookup(tf.constant(["y", "q"]))
        out["i2f"] = i2f.lookup(tf.constant([4, 1], tf.int64))
        out["i32"] = i32.lookup(tf.constant([6, 0]))
        out["cols"] = cols.lookup(tf.constant(["banana", "date", "fig"]))
        out["floats"] = floats.lookup(tf.constant(["cherry", "apple"]))
        out["lines"] = lines.lookup(tf.constant(["two", "zero", "nine"]))
        out["by_num"] = by_num.lookup(tf.constant([0, 2, 3], tf.int64))
        out["by_num_size"] = by_num.size()
        out["index"] = index.lookup(tf.constant(["three", "one", "x"]))
        keys, vals = s2i.export()
        out["export_keys"] = keys
        out["export_vals"] = vals
    return out, tf.compat.v1.tables_initializer()


def mutable_steps(ps, worker):
    """Mutable tables on the ps updated from the worker over several steps: a list of
    (fetches) run in order."""
    import tensorflow as tf

    with tf.device(ps):
        m = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1, name="m")
        vec = tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, [0.0, 0.0], name="vec")
        dense = tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, -1, empty_key=0, deleted_key=-1,
                                                      name="dense")
    with tf.device(worker):
        steps = [
            {"ins": m.insert(tf.constant(["a", "b", "c"]), tf.constant([1, 2, 3], tf.int64)),
             "vins": vec.insert(tf.constant([1, 2], tf.int64), tf.constant([[1.0, 2.0], [3.0, 4.0]])),
             "dins": dense.insert(tf.constant([5, 6, 7], tf.int64), tf.constant([50, 60, 70], tf.int64))},
            {"find": m.lookup(tf.constant(["a", "z", "c"])), "size": m.size(),
             "vfind": vec.lookup(tf.constant([2, 9], tf.int64)),
             "dfind": dense.lookup(tf.constant([6, 8], tf.int64)), "dsize": dense.size()},
            {"rm": m.remove(tf.constant(["a", "nope"])), "drm": dense.erase(tf.constant([5], tf.int64)),
             "over": m.insert(tf.constant(["b"]), tf.constant([22], tf.int64))},
            {"find": m.lookup(tf.constant(["a", "b", "c"])), "size": m.size(), "export": m.export(),
             "dfind": dense.lookup(tf.constant([5, 6, 7], tf.int64)), "dsize": dense.size()},
            {"imp": tf.raw_ops.LookupTableImportV2(table_handle=m.resource_handle, keys=tf.constant(["q", "r"]),
                                                   values=tf.constant([7, 8], tf.int64))},
            {"find": m.lookup(tf.constant(["b", "q", "r"])), "size": m.size()},
        ]
    return steps


def error_cases(ps, worker, d):
    """Graphs that must fail: name -> (build function returning (init or None, fetch))."""
    import tensorflow as tf

    vocab, _, bad = files(d)
    kv = tf.lookup.KeyValueTensorInitializer
    dyn = tf.compat.v1.placeholder_with_default

    def table(keys, vals, default):
        with tf.device(ps):
            return tf.lookup.StaticHashTable(kv(keys, vals), default)

    def not_initialized():
        t = table(tf.constant(["a"]), tf.constant([1], tf.int64), -1)
        with tf.device(worker):
            return None, t.lookup(tf.constant(["a"]))

    def reinit(keys2, vals2):
        def build():
            with tf.device(ps):
                h = tf.raw_ops.HashTableV2(key_dtype=tf.string, value_dtype=tf.int64, shared_name="reinit")
                i1 = tf.raw_ops.InitializeTableV2(table_handle=h, keys=tf.constant(["a", "b"]),
                                                  values=tf.constant([1, 2], tf.int64))
                with tf.control_dependencies([i1]):
                    i2 = tf.raw_ops.InitializeTableV2(table_handle=h, keys=tf.constant(keys2),
                                                      values=tf.constant(vals2, tf.int64))
                with tf.control_dependencies([i2]):
                    f = tf.raw_ops.LookupTableFindV2(table_handle=h, keys=tf.constant(["a", "b", "c"]),
                                                     default_value=tf.constant(-1, tf.int64))
            return None, f
        return build

    def mismatched_sizes():
        t = table(dyn(tf.constant(["a", "b"]), None), dyn(tf.constant([1], tf.int64), None), -1)
        with tf.device(worker):
            return tf.compat.v1.tables_initializer(), t.lookup(tf.constant(["a"]))

    def duplicate_key():
        t = table(tf.constant(["a", "a"]), tf.constant([1, 2], tf.int64), -1)
        return tf.compat.v1.tables_initializer(), t.size()

    def wrong_key_dtype():
        t = table(tf.constant(["a"]), tf.constant([1], tf.int64), -1)
        with tf.device(worker):
            f = tf.raw_ops.LookupTableFindV2(table_handle=t.resource_handle, keys=tf.constant([1], tf.int64),
                                             default_value=tf.constant(-1, tf.int64))
        return tf.compat.v1.tables_initializer(), f

    def insert_into_static():
        t = table(tf.constant(["a"]), tf.constant([1], tf.int64), -1)
        with tf.device(worker):
            f = tf.raw_ops.LookupTableInsertV2(table_handle=t.resource_handle, keys=tf.constant(["b"]),
                                               values=tf.constant([2], tf.int64))
        return tf.compat.v1.tables_initializer(), f

    def dense_empty_key():
        with tf.device(ps):
            t = tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, -1, empty_key=0, deleted_key=-1)
        with tf.device(worker):
            return None, t.insert(tf.constant([0], tf.int64), tf.constant([1], tf.int64))

    def bad_default_shape():
        with tf.device(ps):
            t = tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, [0.0, 0.0])
        with tf.device(worker):
            f = tf.raw_ops.LookupTableFindV2(table_handle=t.resource_handle, keys=tf.constant([1], tf.int64),
                                             default_value=tf.constant([0.0, 0.0, 0.0]))
        return None, f

    def text(name, **kw):
        def build():
            with tf.device(ps):
                t = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(name, tf.string, 0, tf.int64, 1, **kw), -1)
            with tf.device(worker):
                return tf.compat.v1.tables_initializer(), t.size()
        return build

    return {
        "not_initialized": not_initialized,
        "reinit_other_data": reinit(["c"], [3]),
        # TensorFlow compares only the number of entries: this second init is a no-op.
        "reinit_same_size": reinit(["c", "d"], [3, 4]),
        "mismatched_sizes": mismatched_sizes,
        "duplicate_key": duplicate_key,
        "wrong_key_dtype": wrong_key_dtype,
        "insert_into_static": insert_into_static,
        "dense_empty_key": dense_empty_key,
        "bad_default_shape": bad_default_shape,
        "missing_file": text(os.path.join(d, "missing.tsv")),
        "vocab_size_too_big": text(vocab, vocab_size=9),
        "unparsable_field": text(bad),
    }


def norm(v):
    import numpy as np

    a = np.asarray(v)
    if a.dtype == object:
        return [x.decode() if isinstance(x, bytes) else x for x in a.reshape(-1).tolist()], list(a.shape)
    return a.tolist()


def run_mode(target, ps, worker, d):
    import tensorflow as tf

    res = {}

    def reset():
        if target:
            tf.compat.v1.Session.reset(target)

    g = tf.Graph()
    with g.as_default():
        out, init = static_tables(ps, worker, d)
        with tf.compat.v1.Session(target) as s:
            s.run(init)
            got = s.run(out)
            s.run(init)  # initializing again with the same data is fine
            res["static"] = {k: norm(v) for k, v in got.items()}
    # Export order is the table's own: compare sorted pairs.
    st = res["static"]
    st["export"] = sorted(zip(st.pop("export_keys")[0], st.pop("export_vals")))
    reset()
    g = tf.Graph()
    with g.as_default():
        steps = mutable_steps(ps, worker)
        res["mutable"] = []
        with tf.compat.v1.Session(target) as s:
            for fetches in steps:
                got = s.run(fetches)
                row = {}
                for k, v in got.items():
                    if k == "export":
                        keys, vals = v
                        row[k] = sorted(zip(norm(keys)[0], norm(vals)))
                    elif v is not None:
                        row[k] = norm(v)
                res["mutable"].append(row)
    reset()
    res["errors"] = {}
    for name, build in error_cases(ps, worker, d).items():
        g = tf.Graph()
        with g.as_default():
            init, fetch = build()
            with tf.compat.v1.Session(target) as s:
                try:
                    if init is not None:
                        s.run(init)
                    res["errors"][name] = "no error: " + repr(norm(s.run(fetch)))
                except tf.errors.OpError as e:
                    res["errors"][name] = type(e).__name__
        reset()
    return res


def child(mode):
    import tensorflow as tf

    import ffcluster

    ffcluster.tf_in_mode(mode)
    with tempfile.TemporaryDirectory() as d:
        want = run_mode("", "/cpu:0", "/cpu:0", d)
        servers, _ = ffcluster.cluster({"ps": 1, "worker": 1})
        got = run_mode(servers["worker"][0].target, "/job:ps/task:0", "/job:worker/task:0", d)
    checks = 0
    for k, v in want["static"].items():
        assert got["static"][k] == v, (mode, k, got["static"][k], v)
        checks += 1
    assert len(got["mutable"]) == len(want["mutable"])
    for i, (a, b) in enumerate(zip(got["mutable"], want["mutable"])):
        assert a == b, (mode, i, a, b)
        checks += len(b)
    for k, v in want["errors"].items():
        assert k in ("reinit_same_size",) or not v.startswith("no error"), (mode, k, v)
        assert got["errors"][k] == v, (mode, k, got["errors"][k], v)
        checks += 1
    assert want["static"]["s2i"] == [[1, -1], [3, 2]], want["static"]["s2i"]
    assert want["mutable"][3]["find"] == [-1, 22, 3], want["mutable"][3]
    assert want["errors"]["reinit_same_size"] == "no error: [1, 2, -1]", want["errors"]
    print(f"  {mode}: {checks} checks equal TensorFlow's ({len(want['static'])} static lookups, "
          f"{len(want['mutable'])} mutable steps, errors {sorted(set(want['errors'].values()))})")


if __name__ == "__main__":
    import ffcluster

    ffcluster.main(__file__, child, "lookup tables: ok")
