"""Compressed gRPC messages: TensorFlow compresses its requests when a ConfigProto's
`rpc_options.compression_algorithm` asks for it ("gzip" or "deflate"). ferroflow must accept
them on every method, the raw tensor-carrying paths (RunStep, RunGraph, RecvTensor) included:

1. TensorFlow's client with a compressing session config against a ferroflow server
   (CreateSession, ExtendSession, RunStep with a large feed, CloseSession).
2. A TensorFlow server whose default session config compresses is the master of a cluster
   whose other task is a ferroflow server: TensorFlow's master sends compressed
   RegisterGraph/RunGraph requests to ferroflow's worker and reads its tensors. The losses
   must equal a local TensorFlow run."""

import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

tf.compat.v1.disable_eager_execution()


def compressing(algorithm):
    c = tf.compat.v1.ConfigProto()
    c.rpc_options.compression_algorithm = algorithm
    c.rpc_options.compression_level = 2
    return c


def client_side(target, algorithm):
    g = tf.Graph()
    with g.as_default():
        p = tf.compat.v1.placeholder(tf.float32, shape=[512, 512])
        total = tf.reduce_sum(p * 2.0)
        y = p + 1.0
        with tf.compat.v1.Session(target, config=compressing(algorithm)) as sess:
            feed = np.zeros([512, 512], np.float32)
            feed[7, 9] = 3.5
            t, out = sess.run([total, y], feed_dict={p: feed})
            assert t == 7.0, t
            assert out.shape == (512, 512) and out[7, 9] == 4.5 and out[0, 0] == 1.0
            # The graph grows: ExtendSession, compressed too.
            z = tf.reduce_max(y)
            assert sess.run(z, feed_dict={p: feed}) == 4.5
    print(f"client {algorithm}: OK")


def train(target, ps, worker, config=None):
    """The losses of 4 steps of gradient descent on a 300x100 linear model."""
    return ffcluster.train_linear(tf, target, ps, worker, seed=5, outputs=100, config=config, steps=4)[0]


server = ffcluster.Server("--port", "0")
try:
    for algorithm in ["gzip", "deflate"]:
        client_side(server.target, algorithm)
finally:
    server.kill()

want = train("", "/cpu:0", "/cpu:0")
with tempfile.TemporaryDirectory() as d:
    for algorithm in ["gzip", "deflate"]:
        config_path = os.path.join(d, f"{algorithm}.pb")
        with open(config_path, "wb") as f:
            f.write(compressing(algorithm).SerializeToString())
        # TensorFlow's master (compressing) runs the model; the variable lives on ferroflow.
        with ffcluster.mixed_cluster("worker", config_path) as (spec, _):
            got = train(f"grpc://{spec['worker'][0]}", "/job:ps/task:0", "/job:worker/task:0",
                        config=compressing(algorithm))
            print(f"TensorFlow master ({algorithm}), ferroflow ps:", got)
            np.testing.assert_allclose(got, want, rtol=1e-4)
print("test_compression: OK")
