"""Start-up order from TensorFlow's client, on TensorFlow's servers and on ferroflow's: a
session on worker 0 of a 1 ps + 2 worker cluster whose worker 1 is started 2 s later.

- Without device filters the master waits at CreateSession until every task answers, so
  the session's first step finishes only after worker 1 was launched (what makes a classic
  `Supervisor` chief start with the whole cluster instead of training alone);
- with `device_filters=["/job:ps", "/job:worker/task:0"]` nothing waits for worker 1: the
  step finishes before it is launched (checked on ferroflow; TensorFlow documents it).
The step itself does not use worker 1. Run in TF 1.x behaviour (one mode: this is about the
servers, not the client's graph building)."""

import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

tf.compat.v1.disable_eager_execution()
LATE = 2.0


def start(kind, spec, job, task):
    """A task of `spec` (TensorFlow's or ferroflow's server); returns (its target, stopper)."""
    addr = spec[job][task]
    if kind == "tf":
        p = ffcluster.tf_server(spec, job, task)
        ffcluster.wait_port(int(addr.rsplit(":", 1)[1]), p)
        return "grpc://" + addr, p.kill
    flag = ";".join(f"{j}={','.join(a)}" for j, a in spec.items())
    s = ffcluster.Server("--cluster", flag, "--job_name", job, "--task_index", str(task))
    return s.target, s.kill


def first_step_time(kind, filters):
    """When the session's first step finished, and when worker 1 was launched."""
    ports = ffcluster.free_ports(3)
    spec = {"ps": [f"127.0.0.1:{ports[0]}"], "worker": [f"127.0.0.1:{ports[1]}", f"127.0.0.1:{ports[2]}"]}
    stops = []
    try:
        stops.append(start(kind, spec, "ps", 0)[1])
        target, stop = start(kind, spec, "worker", 0)
        stops.append(stop)
        g = tf.Graph()
        with g.as_default(), tf.device("/job:worker/task:0"):
            y = tf.constant(20.0) + 1.0
        config = tf.compat.v1.ConfigProto(device_filters=filters)
        got = {}

        def run():
            with tf.compat.v1.Session(target, graph=g, config=config) as sess:
                got["value"] = float(sess.run(y))
                got["at"] = time.monotonic()

        t = threading.Thread(target=run, daemon=True)
        t.start()
        time.sleep(LATE)
        launched = time.monotonic()
        stops.append(start(kind, spec, "worker", 1)[1])
        t.join(120)
        assert not t.is_alive(), f"{kind}: the step did not finish within 120 s of worker 1 coming up"
        assert got.get("value") == 21.0, got
        return got["at"], launched
    finally:
        for s in stops:
            s()


for kind in ("tf", "ferroflow"):
    at, launched = first_step_time(kind, [])
    assert at > launched, f"{kind}: the first step finished {launched - at:.2f} s before worker 1 was launched"
    print(f"  {kind}: without device filters the first step finished {at - launched:.2f} s after worker 1 was launched")
    if kind == "tf":
        continue  # TensorFlow's device filters are documented; each TensorFlow task costs ~10 s here
    at, launched = first_step_time(kind, ["/job:ps", "/job:worker/task:0"])
    assert at < launched, f"{kind}: with device filters the step waited for worker 1 ({at - launched:.2f} s after)"
    print(f"  {kind}: with device filters it finished {launched - at:.2f} s before worker 1 was launched")
print("test_startup_order: OK")
