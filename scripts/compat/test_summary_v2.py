"""TensorFlow 2's summary API in TF1 graph mode on a ferroflow cluster, from TensorFlow's
client, against TensorFlow's own servers: `tf.summary.create_file_writer(logdir)` on the
worker, under `writer.as_default()` and `tf.summary.record_if(True)` `tf.summary.scalar`,
`histogram`, `image` and `text` with a fed step, and `tf.compat.v2.summary.flush()`; the
writer's init op and then the summary ops (all_v2_summary_ops) and the flush run for 3 steps.
Both log directories are read back with `tf.compat.v1.train.summary_iterator` while the
servers still run (so the flush must have written them): the file name, the first event
(file_version and source_metadata), and every summary's step, tag, plugin metadata and value (tensors decoded
with `tf.make_ndarray`, PNG images decoded to pixels: the PNG bytes may differ, another
zlib) must equal TensorFlow's. Also the error classes of writing through a writer that was
never initialized and of a log directory that is a file."""

import glob
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

tf.compat.v1.disable_eager_execution()
tf.get_logger().setLevel("ERROR")

STEPS = 3


def build(logdir):
    with tf.compat.v1.device("/job:worker/task:0"):
        writer = tf.summary.create_file_writer(logdir)
        step = tf.compat.v1.placeholder(tf.int64, [], name="step")
        x = tf.cast(step, tf.float32)
        with writer.as_default(), tf.summary.record_if(True):
            tf.summary.scalar("loss", x * 0.5 + 0.25, step=step)
            tf.summary.histogram("weights", tf.constant([1.0, 2.0, 2.0, -3.0, 0.5]) * (x + 1.0), step=step)
            img = tf.reshape(tf.range(24, dtype=tf.float32), [2, 2, 2, 3]) / (23.0 + x)
            tf.summary.image("img", img, step=step, max_outputs=2)
            tf.summary.text("notes", tf.strings.join(["step ", tf.strings.as_string(step)]), step=step)
            flush = tf.compat.v2.summary.flush()
    return writer, step, tf.compat.v1.summary.all_v2_summary_ops(), flush


def read_events(logdir):
    files = sorted(glob.glob(os.path.join(logdir, "events.out.tfevents.*")))
    assert len(files) == 1, files
    assert files[0].endswith(".v2"), files[0]
    events = list(tf.compat.v1.train.summary_iterator(files[0]))
    # The first event: the file version and which writer made the file (source_metadata).
    head = (events[0].file_version, events[0].source_metadata.SerializeToString(), events[0].step)
    out = []
    with tf.Graph().as_default(), tf.compat.v1.Session() as local:
        png = tf.compat.v1.placeholder(tf.string)
        decoded = tf.io.decode_png(png)
        for e in events[1:]:
            for v in e.summary.value:
                value = tf.make_ndarray(v.tensor)
                if v.metadata.plugin_data.plugin_name == "images":
                    # [width, height, png...]: the sizes, then each image's pixels.
                    value = [value[0], value[1]] + [local.run(decoded, {png: p}).tolist() for p in value[2:]]
                elif value.dtype == object:
                    value = value.tolist()
                out.append((e.step, v.tag, v.metadata.SerializeToString(), str(v.tensor.dtype), value))
    out.sort(key=lambda r: (r[0], r[1]))
    return head, out


def scenario(target):
    root = tempfile.mkdtemp(prefix="ff-summary-v2-")
    logdir = os.path.join(root, "logs")
    g = tf.Graph()
    with g.as_default():
        writer, step, summaries, flush = build(logdir)
        with tf.compat.v1.Session(target) as s:
            s.run(writer.init())
            s.run(writer.init())  # a second init is a no-op
            for i in range(STEPS):
                s.run([summaries, flush], {step: i})
            # The flush above runs beside the writes of its step, not after them.
            s.run(flush)
            result = read_events(logdir)
    errors = []
    with tf.Graph().as_default():
        # A scope of its own: writers are shared by name across the task's sessions.
        with tf.compat.v1.device("/job:worker/task:0"), tf.name_scope("errors"):
            never = tf.summary.create_file_writer(os.path.join(root, "never"))
            with never.as_default(), tf.summary.record_if(True):
                orphan = tf.summary.scalar("x", 1.0, step=0)
            open(os.path.join(root, "afile"), "w").write("x")
            bad = tf.summary.create_file_writer(os.path.join(root, "afile"))
        with tf.compat.v1.Session(target) as s:
            errors.append(ffcluster.outcome(tf, lambda: s.run(orphan))[0])
            errors.append(ffcluster.outcome(tf, lambda: s.run(bad.init()))[0])
    return result, errors


(want, want_err), (got, got_err) = ffcluster.on_both([("ps", 1), ("worker", 1)], scenario)
HEAD = ("brain.Event:2", b'\n"tensorflow.core.util.events_writer', 0)
assert want[0] == got[0] == HEAD, (want[0], got[0])
print("first event equal:", got[0])
assert len(want[1]) == len(got[1]) == 4 * STEPS, ([r[:2] for r in want[1]], [r[:2] for r in got[1]])
for w, g in zip(want[1], got[1]):
    assert w[:4] == g[:4], (w[:4], g[:4])
    if isinstance(w[4], np.ndarray) and w[4].dtype.kind == "f":
        assert w[4].shape == g[4].shape and np.allclose(w[4], g[4], rtol=1e-6, atol=1e-12), (w, g)
    else:
        assert w[4] == g[4] if isinstance(w[4], list) else np.array_equal(w[4], g[4]), (w, g)
    print("step %d %-8s %-10s equal" % (w[0], w[1], w[3]))
assert want_err == got_err == ["NotFoundError", "FailedPreconditionError"], (want_err, got_err)
print("errors equal:", want_err)
print("test_summary_v2: OK (%d summary values over %d steps)" % (len(want[1]), STEPS))
