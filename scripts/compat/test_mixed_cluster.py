"""A cluster of TensorFlow and ferroflow tasks: a TensorFlow 2.21 server (`tf.distribute.Server`)
is the ps and a ferroflow server the worker, in one ClusterSpec. TensorFlow's client trains
a small model through each master in turn, so tensors move both ways between the two
implementations (RecvTensor from TensorFlow's worker service to ferroflow's and back,
ferroflow's master registering and running graphs on TensorFlow's worker), with tensors
large enough to span many HTTP/2 frames. The losses must equal a local TensorFlow run."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

tf.compat.v1.disable_eager_execution()

def train(target, ps, worker, steps=5):
    """Runs `steps` of gradient descent on a 300x200 linear model; returns the losses and the
    final weights' sum."""
    g = tf.Graph()
    with g.as_default():
        rng = np.random.RandomState(3)
        x_val = rng.rand(64, 300).astype(np.float32)
        y_val = rng.rand(64, 200).astype(np.float32)
        with tf.device(ps):
            w = tf.compat.v1.get_variable("w", initializer=tf.constant(rng.rand(300, 200).astype(np.float32) * 0.01))
            b = tf.compat.v1.get_variable("b", initializer=tf.zeros([200]))
        with tf.device(worker):
            x = tf.constant(x_val)
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y_val))
            train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss)
        with tf.compat.v1.Session(target) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            losses = [float(sess.run([loss, train_op])[0]) for _ in range(steps)]
            return losses, float(sess.run(tf.reduce_sum(w)))


want = train("", "/cpu:0", "/cpu:0")
ports = ffcluster.free_ports(2)
spec = {"ps": [f"127.0.0.1:{ports[0]}"], "worker": [f"127.0.0.1:{ports[1]}"]}
ps = ffcluster.tf_server(spec, "ps", 0)
try:
    ffcluster.wait_port(ports[0], ps)
    worker = ffcluster.Server("--cluster", f"ps={spec['ps'][0]};worker={spec['worker'][0]}", "--job_name", "worker",
                              "--task_index", "0")
    # ferroflow's master runs the step: variables on TensorFlow's ps, the model on ferroflow.
    got = train(worker.target, "/job:ps/task:0", "/job:worker/task:0")
    print("ferroflow master, TensorFlow ps:", got)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-4)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-4)
    # TensorFlow's master runs the step: the variables on ferroflow, the model on TensorFlow.
    got = train(f"grpc://{spec['ps'][0]}", "/job:worker/task:0", "/job:ps/task:0")
    print("TensorFlow master, ferroflow variables:", got)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-4)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-4)
    print("test_mixed_cluster: OK")
finally:
    ps.kill()
    ps.wait()
