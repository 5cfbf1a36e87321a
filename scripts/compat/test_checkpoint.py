"""V2 checkpoints between ferroflow and TensorFlow, both ways.

(a) A checkpoint ferroflow's Saver writes (a small model trained with Adagrad: weights,
    biases, their Adagrad slots, global_step) is read by tf.train.load_checkpoint /
    list_variables / latest_checkpoint and restored by a tf.compat.v1 Saver; the values equal
    what ferroflow's session held.
(b) A checkpoint TensorFlow's tf.compat.v1 Saver writes (resource and ref variables, float,
    double, int64, bool and string, Adagrad slots) is listed by `ferroflow checkpoint
    inspect` and restored by a ferroflow Saver (`ferroflow checkpoint verify`, with resource
    and with ref variables); the values equal TensorFlow's.
(c) A corrupted data file is reported as an error naming the tensor, never a wrong value.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
import ffcluster  # noqa: E402
import fixture_io  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

tf.compat.v1.disable_eager_execution()
BIN = ffcluster.binary()


def ff(*args, check=True):
    p = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=120)
    if check and p.returncode != 0:
        raise AssertionError("ferroflow %s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr))
    return p


def by_name(js):
    return {t["name"]: t for t in js["tensors"]}


def ferroflow_writes_tensorflow_reads(tmp, ref):
    d = os.path.join(tmp, "ff_ref" if ref else "ff_res")
    args = ["checkpoint", "write-demo", "--dir", d, "--steps", "4"] + (["--ref-variables"] if ref else [])
    js = json.loads(ff(*args).stdout)
    prefix = js["prefix"]
    want = by_name(js)
    assert set(want) == {
        "global_step", "hidden/weights", "hidden/biases", "hidden/weights/Adagrad", "hidden/biases/Adagrad"
    }, sorted(want)
    assert want["global_step"]["values"] == [4], want["global_step"]
    assert tf.train.latest_checkpoint(d) == prefix, (tf.train.latest_checkpoint(d), prefix)
    listed = dict(tf.train.list_variables(prefix))
    assert listed == {n: t["shape"] for n, t in want.items()}, listed
    reader = tf.train.load_checkpoint(prefix)
    dtypes = reader.get_variable_to_dtype_map()
    for n, t in want.items():
        got = reader.get_tensor(n)
        assert dtypes[n].name == t["dtype"], (n, dtypes[n], t["dtype"])
        np.testing.assert_array_equal(got.reshape(-1), np.array(t["values"], dtype=got.dtype), err_msg=n)
    # TensorFlow's own Saver restores it into a TF graph.
    g = tf.Graph()
    with g.as_default():
        tvars = {
            n: tf.compat.v1.Variable(np.zeros(t["shape"], dtype=t["dtype"]), name=n.replace("/", "_"))
            for n, t in want.items()
        }
        saver = tf.compat.v1.train.Saver(var_list=tvars)
        with tf.compat.v1.Session() as sess:
            saver.restore(sess, prefix)
            for n, t in want.items():
                got = sess.run(tvars[n])
                np.testing.assert_array_equal(np.reshape(got, -1), np.array(t["values"], dtype=got.dtype), err_msg=n)
    print("  ferroflow -> TensorFlow (%s variables): %d tensors equal" % ("ref" if ref else "resource", len(want)))


def tensorflow_writes_ferroflow_reads(tmp):
    d = os.path.join(tmp, "tf")
    g = tf.Graph()
    with g.as_default():
        tf.compat.v1.set_random_seed(3)
        x = tf.constant(np.arange(8, dtype=np.float32).reshape(4, 2) / 4.0)
        y = tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3) / 8.0)
        with tf.compat.v1.variable_scope("hidden"):
            w = tf.compat.v1.get_variable("weights", [2, 3], use_resource=True)
            b = tf.compat.v1.get_variable("biases", [3], initializer=tf.compat.v1.ones_initializer(), use_resource=False)
        with tf.compat.v1.variable_scope("extra"):
            tf.compat.v1.get_variable("count", initializer=np.int64(-7), use_resource=False)
            tf.compat.v1.get_variable("scale", initializer=np.array([1.5, -2.25], dtype=np.float64), use_resource=True)
            tf.compat.v1.get_variable("flags", initializer=np.array([True, False, True]), use_resource=True)
            tf.compat.v1.Variable([b"alpha", b"", b"\xce\xbb gamma"], name="names")
            tf.compat.v1.get_variable("empty", initializer=np.zeros([0, 4], dtype=np.float32), use_resource=True)
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        values, prefix = fixture_io.adagrad_and_save(tf, loss, os.path.join(d, "model.ckpt"))
    assert "hidden/weights/Adagrad" in values and values["global_step"] == 3, sorted(values)

    def check(js, what):
        got = by_name(js)
        assert set(got) == set(values), (what, sorted(got), sorted(values))
        for n, v in values.items():
            v = np.asarray(v)
            t = got[n]
            assert t["shape"] == list(v.shape), (what, n, t["shape"], v.shape)
            assert t["dtype"] == (v.dtype.name if v.dtype != object else "string"), (what, n, t["dtype"], v.dtype)
            if v.dtype == object:
                assert t["values"] == [s.decode() for s in v.reshape(-1)], (what, n, t["values"])
            else:
                np.testing.assert_array_equal(np.array(t["values"], dtype=v.dtype), v.reshape(-1), err_msg=what + n)

    check(json.loads(ff("checkpoint", "inspect", d, "--values", "--json").stdout), "inspect ")
    check(json.loads(ff("checkpoint", "verify", prefix, "--json").stdout), "verify(resource) ")
    check(json.loads(ff("checkpoint", "verify", prefix, "--json", "--ref-variables").stdout), "verify(ref) ")
    print("  TensorFlow -> ferroflow: %d tensors equal (inspect, Saver restore into resource and ref variables)"
          % len(values))

    # A flipped byte inside the weights' bytes is caught by the checksum.
    reader = tf.train.load_checkpoint(prefix)
    assert reader.has_tensor("hidden/weights")
    data = prefix + ".data-00000-of-00001"
    blob = bytearray(open(data, "rb").read())
    target = np.asarray(values["hidden/weights"]).tobytes()
    at = bytes(blob).find(target)
    assert at >= 0, "weights bytes not found in the data file"
    blob[at + 2] ^= 0x40
    open(data, "wb").write(bytes(blob))
    p = ff("checkpoint", "verify", prefix, check=False)
    assert p.returncode != 0, p.stdout
    assert "hidden/weights" in p.stderr and "DATA_LOSS" in p.stderr.upper().replace(" ", "_"), p.stderr
    print("  corrupted data file -> error:", p.stderr.strip().splitlines()[-1][:160])


tmp = tempfile.mkdtemp(prefix="ff-ckpt-compat-")
try:
    ferroflow_writes_tensorflow_reads(tmp, ref=False)
    ferroflow_writes_tensorflow_reads(tmp, ref=True)
    tensorflow_writes_ferroflow_reads(tmp)
    print("test_checkpoint: OK")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
