"""Compressed gRPC messages: TensorFlow compresses its requests when a ConfigProto's
`rpc_options.compression_algorithm` asks for it ("gzip" or "deflate"). ferroflow must accept
them on every method, the raw tensor-carrying paths (RunStep, RunGraph, RecvTensor) included:

1. TensorFlow's client with a compressing session config against a ferroflow server
   (CreateSession, ExtendSession, RunStep with a large feed, CloseSession).
2. A TensorFlow server whose default session config compresses is the master of a cluster
   whose other task is a ferroflow server: TensorFlow's master sends compressed
   RegisterGraph/RunGraph requests to ferroflow's worker and reads its tensors. The losses
   must equal a local TensorFlow run."""

import json
import os
import subprocess
import sys

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


def train(target, ps, worker, config=None, steps=4):
    g = tf.Graph()
    with g.as_default():
        rng = np.random.RandomState(5)
        x_val = rng.rand(64, 300).astype(np.float32)
        y_val = rng.rand(64, 100).astype(np.float32)
        with tf.device(ps):
            w = tf.compat.v1.get_variable("w", initializer=tf.constant(rng.rand(300, 100).astype(np.float32) * 0.01))
        with tf.device(worker):
            loss = tf.reduce_mean(tf.square(tf.matmul(tf.constant(x_val), w) - y_val))
            train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss)
        with tf.compat.v1.Session(target, config=config) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            return [float(sess.run([loss, train_op])[0]) for _ in range(steps)]


TF_COMPRESSING_SERVER = (
    "import os, sys, json\n"
    "os.environ['TF_CPP_MIN_LOG_LEVEL'] = '2'\n"
    "import tensorflow as tf\n"
    "c = tf.compat.v1.ConfigProto()\n"
    "c.rpc_options.compression_algorithm = sys.argv[4]\n"
    "c.rpc_options.compression_level = 2\n"
    "s = tf.distribute.Server(tf.train.ClusterSpec(json.loads(sys.argv[1])), job_name=sys.argv[2],\n"
    "                         task_index=int(sys.argv[3]), config=c)\n"
    "s.join()\n"
)

server = ffcluster.Server("--port", "0")
try:
    for algorithm in ["gzip", "deflate"]:
        client_side(server.target, algorithm)
finally:
    server.kill()

want = train("", "/cpu:0", "/cpu:0")
for algorithm in ["gzip", "deflate"]:
    ports = ffcluster.free_ports(2)
    spec = {"ps": [f"127.0.0.1:{ports[0]}"], "worker": [f"127.0.0.1:{ports[1]}"]}
    master = subprocess.Popen([sys.executable, "-c", TF_COMPRESSING_SERVER, json.dumps(spec), "worker", "0", algorithm])
    ffcluster._procs.append(master)
    try:
        ffcluster.wait_port(ports[1], master)
        ps = ffcluster.Server("--cluster", f"ps={spec['ps'][0]};worker={spec['worker'][0]}", "--job_name", "ps",
                              "--task_index", "0")
        # TensorFlow's master (compressing) runs the model; the variable lives on ferroflow.
        got = train(f"grpc://{spec['worker'][0]}", "/job:ps/task:0", "/job:worker/task:0",
                    config=compressing(algorithm))
        print(f"TensorFlow master ({algorithm}), ferroflow ps:", got)
        np.testing.assert_allclose(got, want, rtol=1e-4)
        ps.kill()
    finally:
        master.kill()
        master.wait()
print("test_compression: OK")
