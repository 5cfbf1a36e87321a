"""Event files ferroflow writes are read by TensorFlow's own event reader
(tf.compat.v1.train.summary_iterator, which checks every record's CRCs): the file-version
event comes first, the graph is there with ferroflow's nodes, the scalars have the right
steps and values, and the histogram equals, bucket for bucket, the one TensorFlow's
HistogramSummary computes from the same values."""

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.core.framework import graph_pb2, summary_pb2  # noqa: E402

tf.compat.v1.disable_eager_execution()

tmp = tempfile.mkdtemp(prefix="ff-summary-compat-")
try:
    steps = 4
    p = subprocess.run([ffcluster.binary(), "summary", "write-demo", "--logdir", tmp, "--steps", str(steps)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    js = json.loads(p.stdout)
    files = glob.glob(os.path.join(tmp, "events.out.tfevents.*"))
    assert files == [js["file"]], (files, js["file"])

    events = list(tf.compat.v1.train.summary_iterator(js["file"]))
    assert events[0].file_version == "brain.Event:2", events[0]
    graphs = [e for e in events if e.HasField("graph_def")]
    assert len(graphs) == 1
    gd = graph_pb2.GraphDef.FromString(graphs[0].graph_def)
    assert sorted(n.name for n in gd.node) == sorted(js["nodes"]), [n.name for n in gd.node]
    assert any(n.op == "MergeSummary" for n in gd.node)

    scalars, histos = [], []
    for e in events:
        for v in e.summary.value:
            if v.HasField("simple_value"):
                scalars.append((e.step, v.tag, v.simple_value))
            elif v.HasField("histo"):
                histos.append((e.step, v.tag, v.histo))
    want = [(i, "loss", np.float32(x)) for i, x in enumerate(js["scalars"]["loss"])]
    assert [(s, t, np.float32(x)) for s, t, x in scalars] == want, scalars
    assert [(s, t) for s, t, _ in histos] == [(i, "weights") for i in range(steps)], histos

    # TensorFlow's HistogramSummary on the same values.
    vals = np.array(js["histogram"]["values"], dtype=np.float32)
    with tf.Graph().as_default():
        op = tf.compat.v1.summary.histogram("weights", tf.constant(vals))
        with tf.compat.v1.Session() as sess:
            ref = summary_pb2.Summary.FromString(sess.run(op)).value[0].histo
    ours = histos[0][2]
    for f in ("min", "max", "num", "sum", "sum_squares"):
        assert getattr(ours, f) == getattr(ref, f), (f, getattr(ours, f), getattr(ref, f))
    assert list(ours.bucket_limit) == list(ref.bucket_limit), (list(ours.bucket_limit), list(ref.bucket_limit))
    assert list(ours.bucket) == list(ref.bucket), (list(ours.bucket), list(ref.bucket))
    print("  %d events; scalars %s; histogram of %d values equals TensorFlow's (%d buckets)"
          % (len(events), [round(float(x), 4) for _, _, x in scalars], int(ours.num), len(ours.bucket)))
    print("test_summary: OK")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
