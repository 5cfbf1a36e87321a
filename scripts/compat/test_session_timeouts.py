"""Bounded waits, as TensorFlow's client sees them on a ferroflow server:

1. `ConfigProto.operation_timeout_in_ms` of a session bounds a blocked op (a dequeue on an
   empty queue): DeadlineExceededError.
2. The same bound as the server's default session config (`tf.train.Server(...,
   config=...)`; `ferroflow server --default_session_config FILE` or
   `--operation_timeout_in_ms`), for a client that sets none.
3. `Session.close()` from another thread cancels a step blocked in a dequeue: the blocked
   `run` raises CancelledError, promptly."""

import os
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

tf.compat.v1.disable_eager_execution()


def blocked_dequeue_fails_within(target, config, bound):
    g = tf.Graph()
    with g.as_default():
        q = tf.queue.FIFOQueue(4, tf.float32, shared_name="empty_queue")
        x = q.dequeue()
        with tf.compat.v1.Session(target, config=config) as sess:
            t0 = time.time()
            try:
                sess.run(x)
                raise AssertionError("a dequeue on an empty queue returned")
            except tf.errors.DeadlineExceededError as e:
                took = time.time() - t0
                print(f"  DeadlineExceededError after {took:.2f}s: {str(e).splitlines()[0][:100]}")
                assert took < bound, f"took {took:.1f}s, bound {bound}s"


def close_cancels_a_blocked_step(target):
    g = tf.Graph()
    with g.as_default():
        q = tf.queue.FIFOQueue(4, tf.float32, shared_name="close_queue")
        x = q.dequeue()
        sess = tf.compat.v1.Session(target)
        sess.run(q.size())
        got = {}

        def blocked():
            t0 = time.time()
            try:
                sess.run(x)
                got["result"] = "returned"
            except Exception as e:  # noqa: BLE001 - the type is the assertion
                got["result"] = type(e).__name__
            got["took"] = time.time() - t0

        th = threading.Thread(target=blocked, daemon=True)
        th.start()
        time.sleep(1.0)
        t0 = time.time()
        sess.close()
        th.join(30)
        assert not th.is_alive(), "the blocked step did not end after Session.close()"
        print(f"  blocked step ended with {got['result']} {time.time() - t0:.2f}s after close()")
        assert got["result"] == "CancelledError", got


server = ffcluster.Server("--port", "0")
try:
    print("session config operation_timeout_in_ms=1500:")
    blocked_dequeue_fails_within(server.target, tf.compat.v1.ConfigProto(operation_timeout_in_ms=1500), 20)
    print("Session.close() from another thread:")
    close_cancels_a_blocked_step(server.target)
finally:
    server.kill()

# The server's default session config, from a serialized ConfigProto and from the flag.
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "config.pb")
    with open(path, "wb") as f:
        f.write(tf.compat.v1.ConfigProto(operation_timeout_in_ms=1200).SerializeToString())
    for flags in (["--default_session_config", path], ["--operation_timeout_in_ms", "1200"]):
        server = ffcluster.Server("--port", "0", *flags)
        try:
            print(f"server {' '.join(flags[:1])}, client config unset:")
            blocked_dequeue_fails_within(server.target, None, 20)
        finally:
            server.kill()
print("test_session_timeouts: OK")
