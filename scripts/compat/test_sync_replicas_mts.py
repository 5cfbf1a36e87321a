"""TensorFlow 1.x synchronous training from Python on a ferroflow cluster (1 ps + 2
workers), the way TensorFlow's own examples do it: with TensorFlow 2 behaviour off (ref
variables, v1 control flow), each worker builds its graph under `replica_device_setter`,
wraps its optimizer in `SyncReplicasOptimizer(replicas_to_aggregate=2)` and trains in a
`MonitoredTrainingSession` with the optimizer's session hook (the chief runs the chief queue
runner and the token queue; `report_uninitialized_variables` is placed with the variables
on the ps although it is built under the worker's scope). Both workers train on the same
batch, so every global step applies exactly one plain gradient-descent update, whichever
worker's gradients the accumulators took: the final variables must equal plain gradient
descent computed here (within the window TensorFlow's own optimizer leaves; see below), and each worker's MonitoredTrainingSession must stop at the last
step (no hang: the chief's tokens carry the global step read after its increment, and
closing the chief's session cancels its queue runner's step, blocked on gradients that
will not come, as TensorFlow's `Session::Close()` does)."""

import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

import numpy as np  # noqa: E402

tf = ffcluster.tf_in_mode("v1")

STEPS = 12
LR = 0.1
X = np.array([[1.0, 2.0], [0.5, -1.0], [2.0, 0.0], [-1.0, 1.5]], np.float32)
Y = np.array([[1.0], [0.0], [2.0], [-0.5]], np.float32)
W0 = np.array([[0.5], [-0.25]], np.float32)


def reference():
    w, b = W0.astype(np.float64), 0.1
    for _ in range(STEPS):
        r = X @ w + b - Y
        gw = 2.0 * X.T @ r / len(X)
        gb = 2.0 * r.mean()
        w, b = w - LR * gw, b - LR * gb
    return w, b


def worker(i, target, out):
    try:
        g = tf.Graph()
        with g.as_default():
            with tf.compat.v1.device(tf.compat.v1.train.replica_device_setter(
                    worker_device=f"/job:worker/task:{i}", cluster={"ps": ["p:0"], "worker": ["w:0", "w:1"]})):
                step = tf.compat.v1.train.get_or_create_global_step()
                w = tf.compat.v1.Variable(W0, name="w")
                b = tf.compat.v1.Variable(0.1, name="b")
                loss = tf.reduce_mean(tf.square(tf.matmul(tf.constant(X), w) + b - tf.constant(Y)))
                opt = tf.compat.v1.train.SyncReplicasOptimizer(
                    tf.compat.v1.train.GradientDescentOptimizer(LR), replicas_to_aggregate=2, total_num_replicas=2)
                train = opt.minimize(loss, global_step=step)
            hooks = [opt.make_session_run_hook(i == 0), tf.compat.v1.train.StopAtStepHook(last_step=STEPS)]
            local = 0
            with tf.compat.v1.train.MonitoredTrainingSession(master=target, is_chief=(i == 0), hooks=hooks,
                                                             save_checkpoint_secs=None, save_summaries_steps=None,
                                                             log_step_count_steps=None,
                                                             stop_grace_period_secs=5) as sess:
                while not sess.should_stop():
                    sess.run(train)
                    local += 1
            with tf.compat.v1.Session(target) as s:
                out[i] = (s.run(w), s.run(b), s.run(step), local)
    except Exception as e:  # reported by the main thread
        out[i] = e


servers, _ = ffcluster.cluster({"ps": 1, "worker": 2})
out = {}
threads = [threading.Thread(target=worker, args=(i, servers["worker"][i].target, out), daemon=True) for i in (0, 1)]
for t in threads:
    t.start()
for t in threads:
    t.join(timeout=240)
assert not any(t.is_alive() for t in threads), "a worker hung (no stop at the last step)"
for i in (0, 1):
    if isinstance(out.get(i), Exception):
        raise out[i]
want_w, want_b = reference()
for i in (0, 1):
    w, b, step, local = out[i]
    assert step == STEPS, (i, step)
    # Not bit-equal: TensorFlow's SyncReplicasOptimizer puts no barrier between the takes of
    # different accumulators and the variables' updates (w's update waits only for w's take).
    # A worker holding a token of the current step can read the new w and the old b in that
    # window, and its gradient for b still counts when b's accumulator has not been taken yet;
    # its gradient for w is dropped as stale. Under load this moves the result by ~5e-4 (seen
    # in CI). One global step lost or applied twice moves w[0] by >= 6.7e-3 at the end, so
    # 2e-3 still tells synchronous training from a lost or doubled update.
    np.testing.assert_allclose(w, want_w, rtol=0, atol=2e-3)
    np.testing.assert_allclose(b, want_b, rtol=0, atol=2e-3)
    print(f"  worker {i}: {local} local steps, global step {step}, w={w.ravel().tolist()}, b={float(b):.6f}")
print("sync replicas with MonitoredTrainingSession: ok")
