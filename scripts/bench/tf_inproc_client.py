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
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "compat"))
import ffcluster  # noqa: E402
from dist_bench import build_graph, timed  # noqa: E402  (also sets up TensorFlow)

import tensorflow as tf  # noqa: E402


def main():
    ps_port, w_port = ffcluster.free_ports(2)
    cluster = {"ps": [f"127.0.0.1:{ps_port}"], "worker": [f"127.0.0.1:{w_port}"]}
    ps = ffcluster.tf_server(cluster, "ps", 0)
    ffcluster.wait_port(ps_port, ps)
    server = tf.distribute.Server(tf.train.ClusterSpec(cluster), job_name="worker", task_index=0)
    g, op = build_graph()
    with g.as_default(), tf.compat.v1.Session(server.target) as sess:
        sess.run(op["init"])
        res = {
            "fetch64_mib_s": 64.0 / timed(sess, op["big_on_worker"], 8, 2),
            "fetch64_direct_mib_s": 64.0 / timed(sess, op["big_read"], 8, 2),
            "scalar_rtt_us": timed(sess, op["small_read"], 300, 20) * 1e6,
            "local_rtt_us": timed(sess, op["local"], 300, 20) * 1e6,
        }
    print(json.dumps(res), flush=True)
    ps.kill()
    ps.wait()
    # The in-process server cannot be stopped; leave without waiting for it.
    os._exit(0)


if __name__ == "__main__":
    main()
