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


def train(target, ps, worker):
    """5 steps of gradient descent on a 300x200 linear model with a bias: the losses and the
    final weights' sum."""
    return ffcluster.train_linear(tf, target, ps, worker, seed=3, outputs=200, bias=True)


want = train("", "/cpu:0", "/cpu:0")
with ffcluster.mixed_cluster("ps") as (spec, worker):
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
