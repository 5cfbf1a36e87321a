"""TensorFlow 2.21's side of dist_bench.py's between-graph rows: this process is
/job:worker/task:0 (tf.distribute.Server) and its client (Session(server.target), which
reaches the worker's master in-process, as a TensorFlow trainer does); the ps is a separate
TensorFlow server process. Prints one JSON line with the same keys as
dist_client_bench's: fetch64_mib_s (through an Identity on the worker),
fetch64_direct_mib_s (the variable itself), scalar_rtt_us, local_rtt_us.

Usage: .venv/bin/python scripts/bench/tf_inproc_client.py
"""

import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "compat"))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

tf.compat.v1.disable_eager_execution()
N = 16 * 1024 * 1024


def timed(sess, fetch, n, warm):
    for _ in range(warm):
        sess.run(fetch)
    t = []
    for _ in range(n):
        t0 = time.perf_counter()
        sess.run(fetch)
        t.append(time.perf_counter() - t0)
    return statistics.median(t)


def main():
    ps_port, w_port = ffcluster.free_ports(2)
    cluster = {"ps": [f"127.0.0.1:{ps_port}"], "worker": [f"127.0.0.1:{w_port}"]}
    ps = ffcluster.tf_server(cluster, "ps", 0)
    ffcluster.wait_port(ps_port, ps)
    server = tf.distribute.Server(tf.train.ClusterSpec(cluster), job_name="worker", task_index=0)
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:ps/task:0"):
            big = tf.compat.v1.get_variable("big", shape=[N], initializer=tf.compat.v1.zeros_initializer())
            small = tf.compat.v1.get_variable("small", initializer=tf.constant(1.0))
            big_read = big.read_value()
            small_read = small.read_value()
        with tf.device("/job:worker/task:0"):
            big_on_worker = tf.identity(big)
            local = tf.constant(2.0) * tf.constant(3.0)
        init = tf.compat.v1.global_variables_initializer()
        with tf.compat.v1.Session(server.target) as sess:
            sess.run(init)
            res = {
                "fetch64_mib_s": 64.0 / timed(sess, big_on_worker, 8, 2),
                "fetch64_direct_mib_s": 64.0 / timed(sess, big_read, 8, 2),
                "scalar_rtt_us": timed(sess, small_read, 300, 20) * 1e6,
                "local_rtt_us": timed(sess, local, 300, 20) * 1e6,
            }
    print(json.dumps(res), flush=True)
    ps.kill()
    ps.wait()
    # The in-process server cannot be stopped; leave without waiting for it.
    os._exit(0)


if __name__ == "__main__":
    main()
