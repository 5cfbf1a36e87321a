"""TensorBoard 2.21 opens the logdir a distributed ferroflow run leaves behind.

`ferroflow demo` (1 ps + 2 worker processes) trains the MLP with --logdir; then
1. TensorBoard's own event reader (EventAccumulator, what `--load_fast=false` serves from)
   finds the scalars with increasing steps, the histogram and the graph with ferroflow's
   nodes and their device placements;
2. a real `tensorboard` server, in both its loading modes (the Rust data server TensorBoard
   uses by default, and the Python one), serves those scalars over its HTTP API with the
   same steps and values.
"""

import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import json
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
from tensorboard.backend.event_processing import event_accumulator as ea  # noqa: E402

VENV_BIN = os.path.dirname(sys.executable)


def http_json(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read().decode())


def serve(logdir, load_fast, want_steps):
    """Starts tensorboard on an ephemeral port; returns the loss scalars it serves."""
    p = subprocess.Popen([os.path.join(VENV_BIN, "tensorboard"), "--logdir", logdir, "--host", "127.0.0.1",
                          "--port", "0", "--load_fast", load_fast, "--reload_interval", "1"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(l) for l in p.stdout], daemon=True).start()
    try:
        deadline = time.monotonic() + 90
        url = None
        seen = []
        while url is None:
            left = deadline - time.monotonic()
            assert left > 0 and p.poll() is None, "tensorboard did not start: %s" % "".join(seen)
            try:
                line = lines.get(timeout=min(left, 1.0))
            except queue.Empty:
                continue
            seen.append(line)
            m = re.search(r"at (http://127\.0\.0\.1:\d+)/", line)
            if m:
                url = m.group(1)
        # Both loaders read the logdir in the background: poll until every step is served.
        while True:
            try:
                got = http_json(url + "/data/plugin/scalars/scalars?run=.&tag=loss")
            except Exception as e:  # not loaded yet: 400/404 until the run appears
                got = [str(e)]
            if [s[1] for s in got if isinstance(s, list)] == want_steps:
                return got, http_json(url + "/data/plugin/histograms/tags"), url
            assert time.monotonic() < deadline, "tensorboard (load_fast=%s) served %s, want steps %s" % (
                load_fast, got, want_steps)
            time.sleep(0.5)
    finally:
        p.kill()
        p.wait(timeout=30)


tmp = tempfile.mkdtemp(prefix="ff-tensorboard-compat-")
try:
    logdir = os.path.join(tmp, "logs")
    r = subprocess.run([ffcluster.binary(), "demo", "--model", "mlp", "--steps", "600", "--logdir", logdir,
                        "--no_progress", "--data_dir", os.path.join(ffcluster.ROOT, "data", "mnist")],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr

    acc = ea.EventAccumulator(logdir, size_guidance={ea.SCALARS: 0, ea.HISTOGRAMS: 0})
    acc.Reload()
    tags = acc.Tags()
    assert {"loss", "accuracy", "test_accuracy"} <= set(tags["scalars"]), tags
    assert tags["histograms"], tags
    assert tags["graph"], tags
    loss = acc.Scalars("loss")
    steps = [e.step for e in loss]
    assert len(steps) >= 2 and steps == sorted(steps) and len(set(steps)) == len(steps), steps
    # It trained: the chief's summary hook records its first step, as TensorFlow's
    # MonitoredTrainingSession does, where an untrained 10-class model's loss is about
    # ln(10) = 2.30; every later point is well below it. Training is asynchronous, so the
    # other worker may have taken a step or two before the chief's first one: that step is
    # the global step after it, small but not always 1.
    assert 1 <= steps[0] <= 10 and loss[0].value > 1.5, loss
    assert all(0.0 < e.value < 1.5 for e in loss[1:]), loss
    test_acc = acc.Scalars("test_accuracy")[-1]
    assert test_acc.step >= 600 and test_acc.value > 0.85, test_acc
    h = acc.Histograms(tags["histograms"][0])[0].histogram_value
    assert h.num > 0 and sum(h.bucket) == h.num, h
    graph = acc.Graph()
    devices = {n.device for n in graph.node}
    assert any(d.startswith("/job:ps/") for d in devices), devices
    assert any(d.startswith("/job:worker/") for d in devices), devices
    print("  EventAccumulator: scalars %s, loss at steps %s (%.3f -> %.3f), %d graph nodes on %d devices"
          % (sorted(tags["scalars"]), steps, loss[0].value, loss[-1].value, len(graph.node), len(devices)))

    for mode in ("true", "false"):
        served, histo_tags, url = serve(logdir, mode, steps)
        assert [(s[1], round(s[2], 5)) for s in served] == [(e.step, round(e.value, 5)) for e in loss], served
        assert tags["histograms"][0] in histo_tags.get(".", {}), histo_tags
        print("  tensorboard --load_fast=%s at %s served loss %s" % (mode, url, [(s[1], round(s[2], 4)) for s in served]))
    print("test_tensorboard: OK")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
