"""TensorFlow 1's V1 checkpoints (`tf.compat.v1.train.Saver(write_version=SaverDef.V1)`: one
table file of SavedTensorSlices written by `SaveSlices`, read by `RestoreV2`'s V1 path) on a
ferroflow cluster, driven by TensorFlow's client, and between ferroflow and TensorFlow:

(a) on a ferroflow cluster (1 ps holding the variables + 1 worker) a V1 Saver saves a model
    of float, double, int64, bool and string variables, resource and ref ones, and a
    variable partitioned in 2 (`fixed_size_partitioner`, saved as 2 slices), unsharded and
    sharded (one file per device, restored through a file pattern); a fresh cluster
    restores each file into zeroed variables and holds the same values;
(b) TensorFlow's local session restores ferroflow's file with a V1 Saver, and
    `NewCheckpointReader` lists every tensor (full shape, dtype) and reads it equal (all
    but the partitioned one: TensorFlow's reader does not read slices of V1 files);
(c) a V1 file TensorFlow's local session wrote is restored on a ferroflow cluster, also
    into the variable partitioned 3 ways (each part read from the overlap of the 2 stored
    slices), and the values equal TensorFlow's.
"""

import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

tf1 = tf.compat.v1
tf1.disable_eager_execution()
V1 = tf1.train.SaverDef.V1

rng = np.random.RandomState(7)
VALUES = {
    "dense/w": rng.standard_normal((3, 4)).astype(np.float32),
    "dense/b": rng.standard_normal(4).astype(np.float64),
    "count": np.int64(-9_000_000_000),
    "flags": np.array([True, False, True]),
    "names": np.array([b"alpha", b"", b"\xce\xbb gamma"], dtype=object),
    "emb": rng.standard_normal((6, 2)).astype(np.float32),
}
REF = {"dense/b", "names", "flags"}


def build(parts=2, zero=False, device="/job:ps/task:0"):
    """The model's variables on `device` (zeros when `zero`); returns {name: variable or
    list of parts}."""
    out = {}
    with tf1.device(device):
        for name, v in VALUES.items():
            v = np.asarray(v)
            init = np.zeros_like(v) if zero and v.dtype != object else v
            if zero and v.dtype == object:
                init = np.array([b"?"] * v.size, dtype=object).reshape(v.shape)
            if name == "emb":
                def part_init(shape, dtype=None, partition_info=None, init=init):
                    # Each part's rows of the full value.
                    off = partition_info.var_offset[0] if partition_info is not None else 0
                    return tf.constant(init[off:off + shape[0]], tf.float32)
                out[name] = tf1.get_variable(name, shape=v.shape, dtype=tf.float32, initializer=part_init,
                                             partitioner=tf1.fixed_size_partitioner(parts), use_resource=True)
            else:
                out[name] = tf1.get_variable(name, initializer=tf.constant(init), use_resource=name not in REF)
    return out


def values_of(sess, vs):
    got = {}
    for name, v in vs.items():
        got[name] = sess.run(v.as_tensor() if name == "emb" else v)
    return got


def check(got, what):
    assert set(got) == set(VALUES), (what, sorted(got))
    for name, want in VALUES.items():
        g, w = np.asarray(got[name]), np.asarray(want)
        assert g.shape == w.shape and g.dtype == w.dtype, (what, name, g.shape, g.dtype, w.shape, w.dtype)
        assert (g == w).all(), (what, name, g, w)
    print("  %s: %d variables equal" % (what, len(VALUES)))


def save_on(target, path, sharded):
    g = tf.Graph()
    with g.as_default():
        vs = build()
        saver = tf1.train.Saver(write_version=V1, sharded=sharded)
        types = sorted({o.type for o in g.get_operations() if "save" in o.name})
        assert "SaveSlices" in types and "RestoreV2" in types, types
        with tf1.Session(target) as sess:
            sess.run(tf1.global_variables_initializer())
            check(values_of(sess, vs), "ferroflow session before saving (sharded=%s)" % sharded)
            return saver.save(sess, path, write_meta_graph=False)


def restore_on(target, path, parts=2, sharded=False):
    g = tf.Graph()
    with g.as_default():
        vs = build(parts=parts, zero=True)
        saver = tf1.train.Saver(write_version=V1, sharded=sharded)
        with tf1.Session(target) as sess:
            sess.run(tf1.global_variables_initializer())
            saver.restore(sess, path)
            return values_of(sess, vs)


def tf_reads(path):
    """TensorFlow's local session restores `path`; NewCheckpointReader reads it."""
    g = tf.Graph()
    with g.as_default():
        vs = build(zero=True, device=None)
        saver = tf1.train.Saver(write_version=V1)
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            saver.restore(sess, path)
            check(values_of(sess, vs), "TensorFlow restores ferroflow's V1 file")
    r = tf1.train.NewCheckpointReader(path)
    shapes, dtypes = r.get_variable_to_shape_map(), r.get_variable_to_dtype_map()
    assert set(shapes) == set(VALUES), sorted(shapes)
    got = {}
    for name, want in VALUES.items():
        assert shapes[name] == list(np.shape(want)), (name, shapes[name])
        assert dtypes[name] == tf.as_dtype(np.asarray(want).dtype if name != "names" else tf.string), name
        if name == "emb":
            # TensorFlow's reader refuses partitioned tensors of a V1 file ("Sliced checkpoints
            # are not supported"), its own files' too: the Saver above read them.
            continue
        got[name] = r.get_tensor(name)
    got["emb"] = VALUES["emb"]
    check(got, "NewCheckpointReader reads ferroflow's V1 file (all but the sliced emb)")


def tf_writes(path):
    g = tf.Graph()
    with g.as_default():
        build(device=None)
        saver = tf1.train.Saver(write_version=V1)
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            return saver.save(sess, path, write_meta_graph=False)


tmp = tempfile.mkdtemp(prefix="ff-ckpt-v1-")
try:
    ff_path = os.path.join(tmp, "ff", "model.ckpt")
    sharded_path = os.path.join(tmp, "ff_sharded", "model.ckpt")
    tf_path = os.path.join(tmp, "tf", "model.ckpt")
    for d in ("ff", "ff_sharded", "tf"):
        os.makedirs(os.path.join(tmp, d))
    servers, _ = ffcluster.cluster({"ps": 1, "worker": 1})
    try:
        target = servers["worker"][0].target
        saved = save_on(target, ff_path, sharded=False)
        saved_sharded = save_on(target, sharded_path, sharded=True)
    finally:
        for s in [*servers["ps"], *servers["worker"]]:
            s.kill()
    assert saved == ff_path and os.path.isfile(ff_path), (saved, os.listdir(os.path.dirname(ff_path)))
    assert not os.path.exists(ff_path + ".index"), "a V1 save wrote a V2 index"
    print("  sharded V1 files:", sorted(os.listdir(os.path.dirname(sharded_path))))
    tf_writes(tf_path)
    servers, _ = ffcluster.cluster({"ps": 1, "worker": 1})
    try:
        target = servers["worker"][0].target
        check(restore_on(target, ff_path), "fresh ferroflow cluster restores its V1 file")
        check(restore_on(target, saved_sharded, sharded=True), "fresh ferroflow cluster restores its sharded V1 files")
        check(restore_on(target, tf_path), "ferroflow restores TensorFlow's V1 file")
        check(restore_on(target, tf_path, parts=3), "ferroflow restores TensorFlow's V1 file into 3 partitions")
    finally:
        for s in [*servers["ps"], *servers["worker"]]:
            s.kill()
    tf_reads(ff_path)
    tf_reads(saved_sharded)
    print("test_checkpoint_v1: OK")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
