"""The `ferroflow` Python package, as installed from the wheel (scripts/build-wheel.sh):

- `import ferroflow` works without importing TensorFlow, and the wheel does not require it;
  the `ferroflow` command is on the venv's PATH;
- `ferroflow.Server` takes what `tf.distribute.Server` takes (dict, `tf.train.ClusterSpec`,
  `ClusterDef`, `ServerDef`; job and task defaults; `create_local_server`) and raises
  TensorFlow's error types (a port in use is `UnknownError`, as TensorFlow's), or
  `ferroflow.ServerError` when TensorFlow is not imported;
- the classic TF 1.x trainer scripts switch by one line, `tf.distribute.Server(...)` →
  `ferroflow.Server(...)`: 1 ps + 2 workers, each its own process creating its own server,
  `replica_device_setter`, and (a) asynchronous training with `tf.compat.v1.train.Supervisor`,
  (b) `SyncReplicasOptimizer` with `MonitoredTrainingSession`. The synchronous run's variables equal
  gradient descent's (as TensorFlow computes them; TensorFlow's own servers stall its
  non-chief at exit), the asynchronous run, also run on TensorFlow's servers, ends at the
  same global step with a loss in TensorFlow's range.
- a task dies with the Python process that started it."""

import json
import os
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
PY = sys.executable
STEPS = 40
LR = 0.05
TIMEOUT = 240


def data():
    import numpy as np
    rng = np.random.RandomState(7)
    x = rng.rand(64, 8).astype(np.float32)
    y = (x @ rng.rand(8, 1) + 0.3).astype(np.float32)
    return x, y


def task_main(job, index, cluster_json, impl, mode):
    """One process of the trainer: its own server, then `join()` (ps) or training (worker)."""
    import numpy as np
    import tensorflow as tf
    import ferroflow
    tf.compat.v1.disable_v2_behavior()
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)
    cluster = tf.train.ClusterSpec(json.loads(cluster_json))
    make_server = ferroflow.Server if impl == "ff" else tf.distribute.Server  # the one-line switch
    server = make_server(cluster, job_name=job, task_index=index)
    if job == "ps":
        server.join()
        return
    x_val, y_val = data()
    with tf.compat.v1.device(tf.compat.v1.train.replica_device_setter(
            worker_device=f"/job:worker/task:{index}", cluster=cluster)):
        step = tf.compat.v1.train.get_or_create_global_step()
        w = tf.compat.v1.Variable(np.zeros([8, 1], np.float32), name="w")
        b = tf.compat.v1.Variable(0.0, name="b")
        loss = tf.reduce_mean(tf.square(tf.matmul(tf.constant(x_val), w) + b - tf.constant(y_val)))
        opt = tf.compat.v1.train.GradientDescentOptimizer(LR)
        if mode == "sync":
            opt = tf.compat.v1.train.SyncReplicasOptimizer(opt, replicas_to_aggregate=2, total_num_replicas=2)
        train = opt.minimize(loss, global_step=step)
        init = tf.compat.v1.global_variables_initializer()
    # As between-graph trainers do: a worker's sessions see the ps and itself only, so a
    # worker that finished (its process and task gone) does not hold up the other.
    config = tf.compat.v1.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{index}"])
    losses = []
    if mode == "async":
        sv = tf.compat.v1.train.Supervisor(is_chief=(index == 0), logdir=None, init_op=init, global_step=step,
                                           recovery_wait_secs=1, save_model_secs=0, save_summaries_secs=0)
        with sv.managed_session(server.target, config=config) as sess:
            while not sv.should_stop():
                lv, _, gs = sess.run([loss, train, step])
                losses.append(float(lv))
                if gs + 1 >= STEPS:
                    break
        sv.stop()
    else:
        hooks = [opt.make_session_run_hook(index == 0), tf.compat.v1.train.StopAtStepHook(last_step=STEPS)]
        with tf.compat.v1.train.MonitoredTrainingSession(master=server.target, is_chief=(index == 0), hooks=hooks,
                                                         config=config,
                                                         save_checkpoint_secs=None, save_summaries_steps=None,
                                                         log_step_count_steps=None, stop_grace_period_secs=5) as sess:
            while not sess.should_stop():
                losses.append(float(sess.run([loss, train])[0]))
    with tf.compat.v1.Session(server.target, config=config) as s:
        final = s.run([w, b, step, loss])
    print("RESULT " + json.dumps({"w": final[0].ravel().tolist(), "b": float(final[1]), "step": int(final[2]),
                                  "loss": float(final[3]), "local_steps": len(losses)}), flush=True)


def run_cluster(impl, mode):
    ports = ffcluster.free_ports(3)
    spec = {"ps": [f"localhost:{ports[0]}"], "worker": [f"localhost:{ports[1]}", f"localhost:{ports[2]}"]}
    procs = []
    try:
        for job, i in (("ps", 0), ("worker", 0), ("worker", 1)):
            procs.append(subprocess.Popen([PY, __file__, "task", job, str(i), json.dumps(spec), impl, mode],
                                          stdout=subprocess.PIPE, text=True))
        out = []
        for p in procs[1:]:
            stdout, _ = p.communicate(timeout=TIMEOUT)
            assert p.returncode == 0, f"{impl} {mode} worker failed ({p.returncode}): {stdout[-2000:]}"
            out.append(json.loads([ln for ln in stdout.splitlines() if ln.startswith("RESULT ")][-1][7:]))
        return out
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


def check_api():
    import ferroflow
    # No TensorFlow needed to import it, nor in the wheel's requirements.
    r = subprocess.run([PY, "-c", "import sys, ferroflow; print('tensorflow' in sys.modules)"],
                       capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "False", r.stdout
    from importlib import metadata
    assert not [q for q in (metadata.requires("ferroflow") or []) if "tensorflow" in q.lower()]
    exe = ferroflow.binary()
    assert os.path.dirname(exe) == os.path.dirname(PY), f"the wheel installs the binary in the venv: {exe}"
    v = subprocess.run([exe, "--version"], capture_output=True, text=True, check=True).stdout
    assert v.startswith("ferroflow "), v
    # Without TensorFlow: ferroflow's own error type, with TensorFlow's code.
    held = socket.socket()
    held.bind(("127.0.0.1", 0))
    held.listen(1)
    port = held.getsockname()[1]
    code = ("import ferroflow\ntry:\n    ferroflow.Server({'w': ['127.0.0.1:%d']})\nexcept ferroflow.ServerError as e:\n"
            "    print(e.code, 'Could not start gRPC server' in e.message)\n" % port)
    r = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.stdout.split() == ["UNKNOWN", "True"], (r.stdout, r.stderr[-1000:])
    import tensorflow as tf
    try:
        ferroflow.Server({"w": [f"127.0.0.1:{port}"]})
        raise AssertionError("a port in use must fail")
    except tf.errors.UnknownError as e:
        assert "Could not start gRPC server" in e.message and str(port) in e.message, e.message
    held.close()
    # tf.distribute.Server's argument forms and defaults.
    s = ferroflow.Server.create_local_server()
    assert s.target.startswith("grpc://localhost:"), s.target
    sd = s.server_def
    assert sd.job_name == "localhost" and sd.task_index == 0 and sd.protocol == "grpc", sd
    with tf.compat.v1.Session(s.target) as sess:
        assert sess.run(tf.constant(6.0) * 7.0) == 42.0
    s.stop()
    for bad in (lambda: ferroflow.Server({"ps": ["a:1"], "worker": ["b:1"]}),
                lambda: ferroflow.Server({"worker": ["a:1", "b:1"]}, job_name="worker"),
                lambda: ferroflow.Server({"worker": ["a:1"]}, job_name="ps")):
        try:
            bad()
            raise AssertionError("must raise ValueError")
        except ValueError:
            pass
    ports = ffcluster.free_ports(2)
    cd = tf.train.ClusterSpec({"ps": [f"localhost:{ports[0]}"], "worker": [f"localhost:{ports[1]}"]}).as_cluster_def()
    from tensorflow.core.protobuf import tensorflow_server_pb2
    servers = [ferroflow.Server(cd, job_name="ps", task_index=0),
               ferroflow.Server(tensorflow_server_pb2.ServerDef(cluster=cd, job_name="worker", task_index=0,
                                                                protocol="grpc"), start=False)]
    servers[1].start()
    tf.compat.v1.disable_eager_execution()
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            a = tf.constant(3.0)
        with tf.device("/job:worker/task:0"):
            c = a * 5.0
        with tf.compat.v1.Session(servers[1].target) as sess:
            assert sess.run(c) == 15.0
    for s in servers:
        s.stop()
    print("  API: import without TensorFlow, binary on PATH, error types, argument forms: ok")


def check_dies_with_parent():
    code = "import ferroflow, os, sys\ns = ferroflow.Server.create_local_server()\nprint(s._proc.pid, flush=True)\nsys.stdin.read()"
    p = subprocess.Popen([PY, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    child = int(p.stdout.readline())
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        with open(f"/proc/{child}/stat") as f:
            if f.read().split()[2] == "Z":  # exited, not yet reaped
                break
        time.sleep(0.05)
    else:
        os.kill(child, signal.SIGKILL)
        raise AssertionError("the ferroflow task outlived the Python process that started it")
    print("  a task dies with its Python process: ok")


def main():
    check_api()
    check_dies_with_parent()
    import numpy as np
    # Synchronous: every update averages two gradients of the same batch at the same
    # parameters, so the variables are plain gradient descent's (TensorFlow's own servers
    # leave the non-chief worker waiting for a token after the last step: its known sync
    # exit stall, so the reference is computed here).
    got = run_cluster("ff", "sync")
    x, y = (v.astype(np.float64) for v in data())
    w, b = np.zeros([8, 1]), 0.0
    for _ in range(STEPS):
        r = x @ w + b - y
        w, b = w - LR * 2.0 * x.T @ r / len(x), b - LR * 2.0 * r.mean()
    for g in got:
        assert g["step"] == STEPS, g
        np.testing.assert_allclose(np.array(g["w"]).reshape(8, 1), w, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(g["b"], b, rtol=1e-4, atol=1e-5)
    print(f"  sync replicas: gradient descent w[0]={w[0, 0]:.6f} b={b:.6f}\n                 ferroflow  {got[0]}")
    want = run_cluster("tf", "async")
    got = run_cluster("ff", "async")
    start_loss = float(np.mean(np.square(data()[1])))
    for w, g in zip(want, got):
        assert g["step"] >= STEPS and w["step"] >= STEPS, (w, g)
        assert g["loss"] < 0.5 * start_loss, (start_loss, g)
        assert abs(g["loss"] - w["loss"]) < 0.5 * max(w["loss"], g["loss"]) + 0.05, (w, g)
        assert g["local_steps"] > 0, g
    print(f"  async Supervisor: TensorFlow {want[0]}\n                   ferroflow  {got[0]}")
    print("test_python_package: OK")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "task":
        task_main(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6])
    else:
        main()
