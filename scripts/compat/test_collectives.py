"""Collective ops in TF 1.x graphs on a cluster, from TensorFlow's client: CollectiveReduceV2
(Add/Mul/Max, Id/Div, float32/float64/float16/int32: TensorFlow's truncating integer Div),
CollectiveGatherV2, CollectiveBcastSendV2/RecvV2 and the V1 CollectiveReduce of
`collective_ops.all_reduce`, over 3 workers whose servers name a group leader
(`experimental.collective_group_leader`), for two steps; a linear model trained by
all-reducing its gradients (no parameter server), with TensorFlow's losses; and TensorFlow's
error for members that disagree on the group size. The same graphs run on TensorFlow's
servers and on ferroflow's, and a mixed cluster (a TensorFlow leader with ferroflow
members, and the reverse) gives the same values; and between-graph: one client per worker,
each running only its own member in its own session, the masters agreeing on step ids."""

import os
import tempfile

import numpy as np

import ffcluster

N = 3
LEADER = "/job:worker/replica:0/task:0"


def dev(t):
    return f"/job:worker/replica:0/task:{t}/device:CPU:0"


def graphs(tf, n):
    from tensorflow.python.ops import collective_ops
    g = tf.Graph()
    outs = {k: [] for k in ("add_div", "int_div", "max", "mul", "half", "gather", "bcast", "v1", "big")}
    with g.as_default():
        rng = np.random.RandomState(3)
        big = rng.randn(n, 70001).astype(np.float32)
        for t in range(n):
            with tf.device(dev(t)):
                def red(x, ik, merge="Add", final="Div"):
                    return tf.raw_ops.CollectiveReduceV2(
                        input=x, group_size=tf.constant(n), group_key=tf.constant(1), instance_key=tf.constant(ik),
                        ordering_token=[], merge_op=merge, final_op=final)
                x = tf.constant(np.arange(40, dtype=np.float32)) * (t + 1)
                outs["add_div"].append(red(x, 1))
                outs["int_div"].append(red(tf.constant([-7, 7, 5]) * t, 2))
                outs["max"].append(red(tf.constant([float(t), -float(t), 3.0], tf.float64), 3, "Max", "Id"))
                outs["mul"].append(red(tf.constant([t + 1.0, 0.5]), 4, "Mul", "Id"))
                outs["half"].append(red(tf.constant([0.1 * (t + 1), 1000.0 + t], tf.float16), 5, "Add", "Id"))
                outs["gather"].append(tf.raw_ops.CollectiveGatherV2(
                    input=tf.fill([2, 2], t), group_size=tf.constant(n), group_key=tf.constant(1),
                    instance_key=tf.constant(6), ordering_token=[]))
                if t == 1:
                    outs["bcast"].append(tf.raw_ops.CollectiveBcastSendV2(
                        input=tf.constant([7, 8, 9], tf.int64), group_size=tf.constant(n), group_key=tf.constant(1),
                        instance_key=tf.constant(7)))
                else:
                    outs["bcast"].append(tf.raw_ops.CollectiveBcastRecvV2(
                        group_size=tf.constant(n), group_key=tf.constant(1), instance_key=tf.constant(7),
                        shape=tf.constant([3]), T=tf.int64))
                outs["v1"].append(collective_ops.all_reduce(x, n, 2, 8, "Add", "Id"))
                outs["big"].append(red(tf.constant(big[t]), 9))
    return g, outs


def train(tf, target, n, steps=6):
    """Each worker fits its own shard; gradients averaged by all-reduce, every worker applying
    the same update to its own copy of the weights (no ps)."""
    g = tf.Graph()
    with g.as_default():
        rng = np.random.RandomState(0)
        x = rng.randn(n * 16, 3).astype(np.float32)
        y = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)
        losses, steps_ops, weights = [], [], []
        for t in range(n):
            with tf.device(dev(t)):
                w = tf.compat.v1.get_variable(f"w{t}", [3, 1], initializer=tf.compat.v1.zeros_initializer(),
                                              use_resource=True)
                b = tf.compat.v1.get_variable(f"b{t}", [1], initializer=tf.compat.v1.zeros_initializer(),
                                              use_resource=True)
                xs, ys = tf.constant(x[t * 16:(t + 1) * 16]), tf.constant(y[t * 16:(t + 1) * 16])
                loss = tf.reduce_mean(tf.square(tf.matmul(xs, w) + b - ys))
                gw, gb = tf.gradients(loss, [w, b])
                avg = [tf.raw_ops.CollectiveReduceV2(
                    input=gr, group_size=tf.constant(n), group_key=tf.constant(2), instance_key=tf.constant(20 + i),
                    ordering_token=[], merge_op="Add", final_op="Div") for i, gr in enumerate([gw, gb])]
                steps_ops.append(tf.group(w.assign_sub(0.1 * avg[0]), b.assign_sub(0.1 * avg[1])))
                losses.append(loss)
                weights.append(w)
        init = tf.compat.v1.global_variables_initializer()
    with tf.compat.v1.Session(target, graph=g) as sess:
        sess.run(init)
        out = [[float(v) for v in sess.run([losses, steps_ops])[0]] for _ in range(steps)]
        w = sess.run(weights)
        assert all(np.array_equal(w[0], wi) for wi in w), "the replicas' weights differ"
        return out + [np.asarray(w[0]).ravel().tolist()]


def mismatch(tf, target, n):
    """Members that disagree on the group size: TensorFlow's INTERNAL error."""
    g = tf.Graph()
    with g.as_default():
        outs = []
        for t in range(n):
            with tf.device(dev(t)):
                outs.append(tf.raw_ops.CollectiveReduceV2(
                    input=tf.constant([1.0]), group_size=tf.constant(n + (t == n - 1)), group_key=tf.constant(9),
                    instance_key=tf.constant(1), ordering_token=[], merge_op="Add", final_op="Id",
                    timeout_seconds=20.0))
    with tf.compat.v1.Session(target, graph=g) as sess:
        try:
            sess.run(outs)
            return "ok"
        except tf.errors.OpError as e:
            assert "is joining a group with size" in e.message, e.message
            return type(e).__name__


def scenarios(tf, target, n, with_error=True):
    g, outs = graphs(tf, n)
    res = []
    with tf.compat.v1.Session(target, graph=g) as sess:
        for _ in range(2):
            got = sess.run(outs)
            res.append({k: [np.asarray(v).tolist() for v in vs] for k, vs in got.items() if k != "big"})
            res[-1]["big"] = [float(np.abs(np.asarray(v)).sum()) for v in got["big"]]
            assert all(np.array_equal(got["big"][0], v) for v in got["big"]), "members' all-reduce differ"
    res.append(train(tf, target, n))
    if with_error:
        # Last: TensorFlow's collective executor stays aborted after it.
        res.append(mismatch(tf, target, n))
    return res


def close(w, g):
    if isinstance(w, float) or isinstance(g, float):
        return abs(w - g) <= 1e-5 * max(1.0, abs(w))
    if isinstance(w, (list, tuple)) and isinstance(g, (list, tuple)):
        return len(w) == len(g) and all(close(a, b) for a, b in zip(w, g))
    if isinstance(w, dict) and isinstance(g, dict):
        return w.keys() == g.keys() and all(close(w[k], g[k]) for k in w)
    return w == g


def on_tasks(tf, config_path, tf_tasks, fn):
    """`fn(targets)` on three workers, those in `tf_tasks` TensorFlow's servers, the others
    ferroflow's; every server given the leader config."""
    ports = ffcluster.free_ports(N)
    spec = {"worker": [f"127.0.0.1:{p}" for p in ports]}
    flag = "worker=" + ",".join(spec["worker"])
    procs, servers = [], []
    try:
        for t in range(N):
            if t in tf_tasks:
                procs.append(ffcluster.tf_server(spec, "worker", t, config_path))
                ffcluster.wait_port(ports[t], procs[-1])
            else:
                servers.append(ffcluster.Server("--cluster", flag, "--job_name", "worker", "--task_index", str(t),
                                                "--default_session_config", config_path))
        return fn(["grpc://" + a for a in spec["worker"]])
    finally:
        for s in servers:
            s.kill()
        for p in procs:
            p.kill()
            p.wait()


def between_graph(tf, targets, steps=3):
    """One client per worker, each with its own graph holding only its own member and its own
    session on its own task (the masters agree on step ids through GetStepSequence)."""
    results = [None] * N

    def client(t):
        g = tf.Graph()
        with g.as_default(), tf.device(dev(t)):
            step = tf.compat.v1.placeholder(tf.float32, [])
            out = tf.raw_ops.CollectiveReduceV2(
                input=tf.constant([1.0, 2.0, 3.0]) * (t + 1) * step, group_size=tf.constant(N),
                group_key=tf.constant(3), instance_key=tf.constant(30), ordering_token=[], merge_op="Add",
                final_op="Id", timeout_seconds=60.0)
        with tf.compat.v1.Session(targets[t], graph=g) as sess:
            results[t] = [sess.run(out, {step: float(k + 1)}).tolist() for k in range(steps)]

    errors = ffcluster.run_threads([lambda t=t: client(t) for t in range(N)], 120, "a between-graph client")
    assert not errors, errors
    return results


def run_mode(mode):
    tf = ffcluster.tf_in_mode(mode)
    with tempfile.TemporaryDirectory() as d:
        cfg = ffcluster.leader_config(d, LEADER)
        want, got = ffcluster.on_both([("worker", N)], lambda t: scenarios(tf, t, N), config_path=cfg)
        ffcluster.report(mode, want, got, close)
        if mode == "v1":
            every = lambda targets: scenarios(tf, targets[0], N, with_error=False)  # noqa: E731
            for tf_tasks in ({0}, {1, 2}):
                label = f"mixed (TensorFlow tasks {sorted(tf_tasks)})"
                ffcluster.report(label, want[:-1], on_tasks(tf, cfg, tf_tasks, every), close)
            bg = lambda targets: between_graph(tf, targets)  # noqa: E731
            want_bg = on_tasks(tf, cfg, {0, 1, 2}, bg)
            assert want_bg[0] == [[6.0 * k * v for v in (1.0, 2.0, 3.0)] for k in (1, 2, 3)], want_bg
            ffcluster.report("between-graph", want_bg, on_tasks(tf, cfg, set(), bg), close)
            ffcluster.report("between-graph mixed", want_bg, on_tasks(tf, cfg, {1}, bg), close)


if __name__ == "__main__":
    ffcluster.main(__file__, run_mode)
