"""TensorFlow 2's clients on ferroflow servers through the remote eager service (issue #44):
each program of eager_clients.py runs against a cluster of TensorFlow 2.21 servers and then
against the same cluster of `ferroflow server`s, and must print the same values (losses
within 1e-4 relative; one worker, so training is deterministic). Also: the same with
TensorFlow's streaming Enqueue turned off, two workers training asynchronously, and a worker
killed and restarted mid-training, which ClusterCoordinator must retry, a ps killed
mid-training, which must end the job with TensorFlow's error, mixed clusters both ways
(ferroflow's ps with TensorFlow's worker, TensorFlow's ps with ferroflow's worker), and
ferroflow's tasks started from Python with `ferroflow.Server`."""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CLIENTS = os.path.join(HERE, "eager_clients.py")


def spec_for(jobs):
    ports = iter(ffcluster.free_ports(sum(n for _, n in jobs)))
    return {j: [f"127.0.0.1:{next(ports)}" for _ in range(n)] for j, n in jobs}


def client(scenario, spec, env=None, timeout=240):
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run([sys.executable, CLIENTS, scenario, json.dumps(spec)], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=timeout, env=e)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    raise AssertionError(f"{scenario} printed no result (exit {p.returncode}):\n{p.stdout[-4000:]}")


def server_jobs(spec):
    return [(j, i) for j in spec for i in range(len(spec[j])) if j != "chief"]


def on_tensorflow(scenario, spec, env=None):
    procs = [ffcluster.tf_server(spec, j, i) for j, i in server_jobs(spec)]
    try:
        for (j, i), p in zip(server_jobs(spec), procs):
            ffcluster.wait_port(int(spec[j][i].rsplit(":", 1)[1]), p)
        return client(scenario, spec, env)
    finally:
        ffcluster.stop(procs)


def ff_servers(spec):
    flag = ";".join(f"{j}={','.join(a)}" for j, a in spec.items())
    return {(j, i): ffcluster.Server("--cluster", flag, "--job_name", j, "--task_index", str(i))
            for j, i in server_jobs(spec)}


def on_ferroflow(scenario, spec, env=None):
    servers = ff_servers(spec)
    try:
        return client(scenario, spec, env)
    finally:
        for s in servers.values():
            s.kill()


def on_mixed(scenario, spec, tf_job="worker"):
    """A mixed cluster: TensorFlow's servers for the tasks of `tf_job`, ferroflow's for the
    others. TensorFlow's workers over ferroflow's ps partition each step function and run the
    ps part on ferroflow with RunComponentFunction, the parts meeting through RecvTensor at the
    call's step id. ferroflow's workers over TensorFlow's ps fetch each variable's handle from
    the ps (an eager `_Send` and a RecvTensor) and run the function as a TF 1.x step whose ps
    partition is registered on TensorFlow's WorkerService."""
    flag = ";".join(f"{j}={','.join(a)}" for j, a in spec.items())
    tf_procs = [ffcluster.tf_server(spec, tf_job, i) for i in range(len(spec[tf_job]))]
    ff_job = "ps" if tf_job == "worker" else "worker"
    ff = [ffcluster.Server("--cluster", flag, "--job_name", ff_job, "--task_index", str(i))
          for i in range(len(spec[ff_job]))]
    try:
        for i, p in enumerate(tf_procs):
            ffcluster.wait_port(int(spec[tf_job][i].rsplit(":", 1)[1]), p)
        return client(scenario, spec)
    finally:
        ffcluster.stop(tf_procs)
        for s in ff:
            s.kill()


PY_TASK = """
import json, sys
import tensorflow as tf
import ferroflow
spec = tf.train.ClusterSpec(json.loads(sys.argv[1]))
server = ferroflow.Server(spec, job_name=sys.argv[2], task_index=int(sys.argv[3]), protocol="grpc", start=True)
print("ready", flush=True)
server.join()
"""


def on_python_servers(scenario, spec):
    """ferroflow's servers started as a TensorFlow 2 user starts `tf.distribute.Server`s, from
    Python with the package's `ferroflow.Server` (a `tf.train.ClusterSpec`, `server.join()`)."""
    cluster = {j: a for j, a in spec.items() if j != "chief"}
    env = dict(os.environ, FERROFLOW_BIN=ffcluster.binary(), TF_CPP_MIN_LOG_LEVEL="2")
    procs = [subprocess.Popen([sys.executable, "-c", PY_TASK, json.dumps(cluster), j, str(i)], env=env)
             for j, i in server_jobs(spec)]
    try:
        for (j, i), p in zip(server_jobs(spec), procs):
            ffcluster.wait_port(int(spec[j][i].rsplit(":", 1)[1]), p)
        return client(scenario, spec)
    finally:
        ffcluster.stop(procs)


def close(a, b, tol=1e-4):
    if isinstance(a, list):
        return len(a) == len(b) and all(close(x, y, tol) for x, y in zip(a, b))
    if isinstance(a, float):
        return abs(a - b) <= tol * max(1.0, abs(a))
    return a == b


def same(scenario, jobs, env=None, mixed=False):
    want = on_tensorflow(scenario, spec_for(jobs), env)
    got = on_ferroflow(scenario, spec_for(jobs), env)
    runs = [("ferroflow's servers", got)]
    if mixed:
        runs.append(("ferroflow's ps and TensorFlow's worker", on_mixed(scenario, spec_for(jobs))))
        runs.append(("TensorFlow's ps and ferroflow's worker", on_mixed(scenario, spec_for(jobs), "ps")))
        runs.append(("ferroflow.Server tasks started from Python", on_python_servers(scenario, spec_for(jobs))))
    for what, res in runs:
        for k in want:
            if k.endswith("device"):
                continue
            assert close(want[k], res[k]), f"{scenario} on {what}: {k}: TensorFlow {want[k]} ferroflow {res[k]}"
        print(f"{scenario} on {what}: equal to TensorFlow's servers: {res}")
    return got


def worker_restarted():
    """A worker killed while ClusterCoordinator schedules steps, then restarted on its port:
    the coordinator finds the new server (its contexts are gone), recreates its context,
    retries the lost closures there and the job finishes."""
    spec = spec_for([("ps", 1), ("worker", 1), ("chief", 1)])
    servers = ff_servers(spec)
    flag = ";".join(f"{j}={','.join(a)}" for j, a in spec.items())
    p = subprocess.Popen([sys.executable, CLIENTS, "pss_long", json.dumps(spec)], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    out = []
    try:
        deadline = time.monotonic() + 120
        for line in p.stdout:
            out.append(line)
            if line.startswith("PROGRESS 50") or time.monotonic() > deadline:
                break
        assert any(ln.startswith("PROGRESS 50") for ln in out), "".join(out[-40:])
        servers[("worker", 0)].kill()
        time.sleep(1.0)
        servers[("worker", 0)] = ffcluster.Server("--cluster", flag, "--job_name", "worker", "--task_index", "0")
        rest, _ = p.communicate(timeout=240)
        out.append(rest)
    finally:
        if p.poll() is None:
            p.kill()
        for s in servers.values():
            s.kill()
    text = "".join(out)
    line = [ln for ln in text.splitlines() if ln.startswith("RESULT ")]
    assert line, f"pss_long with a restarted worker printed no result (exit {p.returncode}):\n{text[-4000:]}"
    w = json.loads(line[0][len("RESULT "):])["w"]
    # Every increment ran; a few may have run twice (retried after their worker died).
    assert 300.0 <= w <= 310.0, w
    print(f"worker killed and restarted mid-training: the job finished, w = {w}")


def ps_lost(system):
    """The ps killed mid-training: the coordinator ends the job with TensorFlow's error,
    within a bound, on TensorFlow's servers and on ferroflow's alike."""
    spec = spec_for([("ps", 1), ("worker", 1), ("chief", 1)])
    tasks = server_jobs(spec)
    if system == "tf":
        procs = dict(zip(tasks, [ffcluster.tf_server(spec, j, i) for j, i in tasks]))
        for (j, i), p in procs.items():
            ffcluster.wait_port(int(spec[j][i].rsplit(":", 1)[1]), p)
        kill_ps = procs[("ps", 0)].kill
        stop = lambda: ffcluster.stop(list(procs.values()))  # noqa: E731
    else:
        servers = ff_servers(spec)
        kill_ps = servers[("ps", 0)].kill
        stop = lambda: [s.kill() for s in servers.values()]  # noqa: E731
    p = subprocess.Popen([sys.executable, CLIENTS, "pss_ps_lost", json.dumps(spec)], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    out = []
    try:
        for line in p.stdout:
            out.append(line)
            if line.startswith("PROGRESS 50"):
                break
        kill_ps()
        start = time.monotonic()
        rest, _ = p.communicate(timeout=240)
        took = time.monotonic() - start
        out.append(rest)
    finally:
        if p.poll() is None:
            p.kill()
        stop()
    text = "".join(out)
    line = [ln for ln in text.splitlines() if ln.startswith("RESULT ")]
    assert line, f"{system}: pss_ps_lost printed no result (exit {p.returncode}):\n{text[-4000:]}"
    got = json.loads(line[0][len("RESULT "):])
    print(f"{system}: ps killed mid-training: {got} after {took:.1f} s")
    return got


def main():
    single = [("worker", 1)]
    pss = [("ps", 1), ("worker", 1), ("chief", 1)]
    got = same("remote_ops", single)
    assert got["device"] == "/job:worker/replica:0/task:0/device:CPU:0", got
    assert got["error"] == "InvalidArgumentError", got
    same("remote_ops", single, env={"TF_ENABLE_EAGER_CLIENT_STREAMING_ENQUEUE": "False"})
    got = same("packed", [("worker", 2)])
    assert got["reads"] == [[1001.0, 2002.0], [1010.0, 2020.0]], got
    got = same("pss_loop", pss, mixed=True)
    assert got["w_device"] == "/job:ps/replica:0/task:0/device:CPU:0", got
    assert got["losses"][-1] < got["losses"][0] / 2, got
    same("pss_fit", pss, mixed=True)
    same("pss_fit_gru", pss)
    two = on_ferroflow("pss_two_workers", spec_for([("ps", 2), ("worker", 2), ("chief", 1)]))
    # 20 increments from 5, whichever worker ran them.
    assert two["w"] == 25.0, two
    print("two ps, two workers:", two)
    worker_restarted()
    want, got = ps_lost("tf"), ps_lost("ff")
    assert "error" in want and got.get("error") == want["error"], (want, got)
    print("test_eager_service: OK")


if __name__ == "__main__":
    main()
