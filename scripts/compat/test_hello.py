"""TensorFlow's own client drives a ferroflow server: hello world via
tf.compat.v1.Session("grpc://...") (CreateSession, ExtendSession, RunStep, CloseSession)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

tf.compat.v1.disable_eager_execution()

server = ffcluster.Server("--port", "0")
print("server ready in %.3f s at %s" % (server.ready_seconds, server.target))
try:
    g = tf.Graph()
    with g.as_default():
        hello = tf.constant("Hello, distributed ferroflow!")
        with tf.compat.v1.Session(server.target) as sess:
            assert sess.run(hello) == b"Hello, distributed ferroflow!"
            # The graph grows between runs: ExtendSession.
            x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
            y = tf.matmul(x, x) + 1.0
            p = tf.compat.v1.placeholder(tf.float32, shape=[2])
            q = p * 3.0
            out, h = sess.run([y, hello])
            assert (out == [[8.0, 11.0], [16.0, 23.0]]).all(), out
            assert (sess.run(q, feed_dict={p: [1.0, 2.0]}) == [3.0, 6.0]).all()
            devices = [d.name for d in sess.list_devices()]
            assert devices == ["/job:localhost/replica:0/task:0/device:CPU:0"], devices
            # Errors come back as TensorFlow exceptions with the right class.
            shape = tf.compat.v1.placeholder(tf.int32, shape=[None])
            bad = tf.reshape(x, shape)
            try:
                sess.run(bad, feed_dict={shape: [3]})
                raise AssertionError("expected InvalidArgumentError")
            except tf.errors.InvalidArgumentError as e:
                print("expected error:", str(e).splitlines()[0])
            assert sess.run(hello) == b"Hello, distributed ferroflow!"
    print("test_hello: OK")
finally:
    server.kill()
