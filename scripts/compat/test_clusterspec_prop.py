"""ClusterSpec propagation from TensorFlow's Python client: two ferroflow servers, each
started as the only task of its own one-task cluster (`local`), are joined into one cluster
by the session's `ConfigProto.cluster_def` (job `worker`, tasks 0 and 1 = their addresses).
The master takes, for the session, the name of the task whose address is its target, so
ops pinned to `/job:worker/task:0` and `/job:worker/task:1` run on the two servers, and a
variable created on task 1 keeps its value across steps of the session. The same with the
two tasks named in another job and order, from the other server. A second session of the
same propagated cluster sees the first one's variables only with
`experimental.share_session_state_in_clusterspec_propagation`."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

tf.compat.v1.disable_eager_execution()

ports = ffcluster.free_ports(2)
servers = [ffcluster.Server("--cluster", f"local=127.0.0.1:{p}", "--job_name", "local", "--task_index", "0")
           for p in ports]
addrs = [s.target[len("grpc://"):] for s in servers]


def run(target, cluster, a, b):
    cfg = tf.compat.v1.ConfigProto(cluster_def=tf.train.ClusterSpec(cluster).as_cluster_def())
    g = tf.Graph()
    with g.as_default():
        with tf.device(a):
            x = tf.constant([[1.0, 2.0]])
        with tf.device(b):
            v = tf.compat.v1.get_variable("v", initializer=[[3.0], [4.0]], use_resource=True)
            y = tf.matmul(x, v)
            bump = v.assign_add([[1.0], [1.0]])
        with tf.compat.v1.Session(target, config=cfg) as sess:
            names = sorted(d.name for d in sess.list_devices())
            sess.run(v.initializer)
            out = [float(sess.run(y)[0][0])]
            sess.run(bump)
            out.append(float(sess.run(y)[0][0]))
            return names, out


names, out = run(servers[0].target, {"worker": addrs}, "/job:worker/task:0", "/job:worker/task:1")
assert out == [11.0, 14.0], out
assert [n for n in names if "CPU" in n] == ["/job:worker/replica:0/task:0/device:CPU:0",
                                            "/job:worker/replica:0/task:1/device:CPU:0"], names
print("  propagated cluster from server 0:", names, out)
names, out = run(servers[1].target, {"trainer": [addrs[1]], "params": [addrs[0]]}, "/job:trainer/task:0",
                 "/job:params/task:0")
assert out == [11.0, 14.0], out
assert any("/job:params/" in n for n in names) and any("/job:trainer/" in n for n in names), names
print("  renamed jobs from server 1:", names, out)


def shared_state(share):
    """Session 1 initialises a variable on task 1 of a propagated cluster; session 2 (a new
    graph, same cluster) reads it: visible only with `share_session_state_in_clusterspec_
    propagation` (TensorFlow isolates propagated sessions otherwise)."""
    cluster = tf.train.ClusterSpec({"worker": addrs}).as_cluster_def()
    cfg = tf.compat.v1.ConfigProto(cluster_def=cluster)
    cfg.experimental.share_session_state_in_clusterspec_propagation = share
    name = f"shared_{share}"

    def graph():
        g = tf.Graph()
        with g.as_default(), tf.device("/job:worker/task:1"):
            v = tf.compat.v1.get_variable(name, initializer=5.0, use_resource=True)
        return g, v

    g1, v1 = graph()
    with g1.as_default(), tf.compat.v1.Session(servers[0].target, config=cfg) as s1:
        s1.run(v1.initializer)
        s1.run(v1.assign_add(2.0))
    g2, v2 = graph()
    with g2.as_default(), tf.compat.v1.Session(servers[0].target, config=cfg) as s2:
        try:
            return float(s2.run(v2.read_value()))
        except tf.errors.FailedPreconditionError:
            return "FailedPrecondition"


assert shared_state(True) == 7.0
assert shared_state(False) == "FailedPrecondition"
print("  share_session_state_in_clusterspec_propagation: shared 7.0, isolated FailedPrecondition")
print("ClusterSpec propagation: ok")
