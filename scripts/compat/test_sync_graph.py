"""tf.compat.v1.train.SyncReplicasOptimizer graphs, written by TensorFlow, train on a
ferroflow server with between-graph replication: each of two replicas builds its own graph
and opens its own session (the variables, the accumulators `w:0/grad_accum`, ... and the
token queue `sync_token_q` are shared by name; each replica's local step is its own,
kept apart by a name scope); the chief (replica 0) runs the sync op that TensorFlow's chief
queue runner would run. Every update must apply the average of both replicas' gradients
computed at the same parameters: the final variables must equal the hand-computed
synchronous run.

Everything lives on one task: with variables on a ps and the local step on a worker,
TensorFlow's graph assigns the local step on the ps device (`train_op` is built under
`tf.device(global_step.device)`); TensorFlow's placer then ignores that request because of
the resource edge, while ferroflow's placer reports the conflict (a known difference)."""

import os
import sys
import threading

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

tf = ffcluster.tf_in_mode("v2")

STEPS = 5
LR = 0.1
TIMEOUT_MS = 60000


def data(r, t):
    return (np.array([1.0 + r + 0.5 * t, 2.0 - r + 0.25 * t], np.float32), np.float32(3.0 * r - 1.0 + 0.5 * t))


def expected():
    w, b = np.zeros(2), 0.0
    for t in range(STEPS):
        gw, gb = np.zeros(2), 0.0
        for r in range(2):
            x, y = data(r, t)
            err = float(w @ x.astype(np.float64)) + b - float(y)
            gw += err * x / 2.0
            gb += err / 2.0
        w, b = w - LR * gw, b - LR * gb
    return w, b


def build(task):
    g = tf.Graph()
    with g.as_default(), tf.device("/job:worker/task:0"):
        step = tf.compat.v1.train.get_or_create_global_step()
        w = tf.compat.v1.get_variable("w", initializer=tf.zeros([2]))
        b = tf.compat.v1.get_variable("b", initializer=tf.zeros([]))
        with tf.compat.v1.name_scope(f"replica_{task}"):
            x = tf.compat.v1.placeholder(tf.float32, [2], name="x")
            y = tf.compat.v1.placeholder(tf.float32, [], name="y")
            loss = 0.5 * tf.square(tf.reduce_sum(w * x) + b - y)
            opt = tf.compat.v1.train.SyncReplicasOptimizer(
                tf.compat.v1.train.GradientDescentOptimizer(LR), replicas_to_aggregate=2, total_num_replicas=2
            )
            train = opt.minimize(loss, global_step=step)
        m = dict(graph=g, x=x, y=y, w=w, b=b, step=step, train=train, opt=opt)
        ffcluster.sync_replicas_ops(tf, m)
    return m


servers, flag = ffcluster.cluster({"worker": 1})
try:
    models = [build(0), build(1)]
    sessions = [tf.compat.v1.Session(servers["worker"][0].target, graph=models[i]["graph"]) for i in range(2)]
    opts = tf.compat.v1.RunOptions(timeout_in_ms=TIMEOUT_MS)
    chief = models[0]
    chief_queue_runner = ffcluster.start_sync_replicas(sessions, models, STEPS, opts)

    # Replicas step together. TensorFlow's token queue is shared: a replica that finished
    # step t quickly could otherwise take the token of update t meant for the other one
    # (whose dequeue had not started yet) with its step t + 1, then both of its gradients
    # go to one update and the last update never gets its second one (TensorFlow's own
    # semantics; ferroflow's trainer uses one token queue per replica instead).
    barrier = threading.Barrier(2, timeout=120)

    def replica(i):
        m = models[i]
        for t in range(STEPS):
            x, y = data(i, t)
            sessions[i].run(m["train"], feed_dict={m["x"]: x, m["y"]: y}, options=opts)
            barrier.wait()

    fns = [chief_queue_runner] + [lambda i=i: replica(i) for i in range(2)]
    errors = ffcluster.run_threads(fns, 120, "a replica or the chief", barrier)
    assert not errors, "\n".join(f"{type(e).__name__}: {e}"[:800] for e in errors)

    got_w, got_b, got_step = sessions[0].run([chief["w"], chief["b"], chief["step"]])
    ew, eb = expected()
    print(f"global_step {got_step}; w {got_w} b {got_b} (hand-computed synchronous average: w {ew} b {eb})")
    assert got_step == STEPS
    np.testing.assert_allclose(got_w, ew, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got_b, eb, rtol=1e-4, atol=1e-5)
    for s in sessions:
        s.close()
    print("test_sync_graph: OK")
finally:
    for ss in servers.values():
        for s in ss:
            s.kill()
