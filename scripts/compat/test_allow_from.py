"""TensorFlow's Python client and `--allow_from`: a ferroflow task that allows loopback
serves TensorFlow's client; one that allows only another network closes the client's
connection before any RPC, which TensorFlow reports as UnavailableError (or a deadline)."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def run(target):
    import tensorflow as tf
    g = tf.Graph()
    with g.as_default():
        y = tf.constant(6.0) * 7.0
        cfg = tf.compat.v1.ConfigProto(operation_timeout_in_ms=5000)
        with tf.compat.v1.Session(target, config=cfg) as s:
            return float(s.run(y))


def main():
    tf = ffcluster.tf_in_mode("v1")
    allowed = ffcluster.Server("--port", "0", "--allow_from", "127.0.0.0/8")
    try:
        assert run(allowed.target) == 42.0
    finally:
        allowed.kill()
    refused = ffcluster.Server("--port", "0", "--bind", "0.0.0.0", "--allow_from", "10.0.0.0/8")
    try:
        t0 = time.monotonic()
        try:
            run(refused.target)
            raise AssertionError("a client outside --allow_from was served")
        except (tf.errors.UnavailableError, tf.errors.DeadlineExceededError) as e:
            print(f"  refused as {type(e).__name__} after {time.monotonic() - t0:.1f} s")
        assert refused.proc.poll() is None, "the task stays up"
    finally:
        refused.kill()
    print("test_allow_from: OK")


if __name__ == "__main__":
    main()
