"""Starts `ferroflow server` processes for the compatibility tests and always stops them.

The binary is $FERROFLOW_BIN, else target/release/ferroflow (or $CARGO_TARGET_DIR/release).
Readiness is the line the server prints once its port is open ("... listening on
grpc://host:port"), waited for with a bound; every process is killed at exit, even when a
test fails.
"""

import atexit
import contextlib
import os
import queue
import random
import re
import socket
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_procs = []


def binary():
    if os.environ.get("FERROFLOW_BIN"):
        return os.environ["FERROFLOW_BIN"]
    for d in (os.environ.get("CARGO_TARGET_DIR"), os.path.join(ROOT, "target")):
        if d:
            p = os.path.join(d, "release", "ferroflow")
            if os.path.exists(p):
                return p
    sys.exit("ferroflow binary not found: build it (cargo build --release) or set FERROFLOW_BIN")


# A TensorFlow 2.21 task: `python -c TF_SERVER '<cluster json>' <job> <task>`.
TF_SERVER = (
    "import os, sys, json\n"
    "os.environ['TF_CPP_MIN_LOG_LEVEL'] = '2'\n"
    "import tensorflow as tf\n"
    "c = json.loads(sys.argv[1])\n"
    "cfg = None\n"
    "if len(sys.argv) > 4:\n"
    "    cfg = tf.compat.v1.ConfigProto.FromString(open(sys.argv[4], 'rb').read())\n"
    "s = tf.distribute.Server(tf.train.ClusterSpec(c), job_name=sys.argv[2], task_index=int(sys.argv[3]), config=cfg)\n"
    "s.join()\n"
)

# TensorFlow's between-graph start, as its distributed guide does it: the chief (task 0)
# runs `init`; every other worker polls `ready` (report_uninitialized_variables) until it
# is empty, and gives up after 120 s. Source to put in front of a `python -c` worker script
# (which imports `sys` and `time`).
TF_INIT_OR_WAIT = r'''
def init_or_wait(sess, task, init, ready, poll, timeout_message):
    if task == 0:
        sess.run(init)
        return
    t0 = time.time()
    while len(sess.run(ready)) > 0:
        if time.time() - t0 > 120:
            sys.exit(timeout_message)
        time.sleep(poll)
'''


def tf_server(cluster, job, task, config_path=None, **popen_kw):
    """Starts a TensorFlow server process for `job`/`task` of `cluster` (a dict of job ->
    addresses), with the serialized ConfigProto at `config_path` as its config; it is killed
    at exit like the ferroflow servers."""
    import json
    extra = [config_path] if config_path else []
    p = subprocess.Popen([sys.executable, "-c", TF_SERVER, json.dumps(cluster), job, str(task), *extra], **popen_kw)
    _procs.append(p)
    return p


def leader_config(d, leader="/job:worker/replica:0/task:0"):
    """A serialized ConfigProto in directory `d` naming the collective group leader (for
    `tf_server(config_path=...)` and ferroflow's `--default_session_config`); its path."""
    tf = tf_in_mode("v1")
    c = tf.compat.v1.ConfigProto()
    c.experimental.collective_group_leader = leader
    path = os.path.join(d, "leader.pb")
    with open(path, "wb") as f:
        f.write(c.SerializeToString())
    return path


def wait_port(port, proc, timeout=120.0):
    """Waits until 127.0.0.1:`port` accepts connections (TensorFlow prints no ready line);
    returns the seconds waited (polled every 2 ms, so start-up times can be measured)."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        if proc.poll() is not None:
            raise RuntimeError(f"server on port {port} exited with {proc.returncode}")
        try:
            c = socket.create_connection(("127.0.0.1", port), timeout=0.2)
            # A connect to a port nobody listens on can pick that very port as its source and
            # connect to itself (TCP simultaneous open); that is not the server.
            own = c.getsockname() == c.getpeername()
            c.close()
            if not own:
                return time.perf_counter() - t0
        except OSError:
            pass
        time.sleep(0.002)
    raise RuntimeError(f"port {port} did not open within {timeout} s")


def proc_status_mib(pid, field):
    """A memory figure of process `pid` from /proc (`VmRSS`, `VmHWM` ...), in MiB; nan if absent."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def _ephemeral_range():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            lo, hi = (int(x) for x in f.read().split())
        return lo, hi
    except (OSError, ValueError):
        return 32768, 60999


_port_rng = random.Random(os.getpid())


def free_ports(n):
    """`n` distinct ports free on 127.0.0.1 and 0.0.0.0, taken below the kernel's ephemeral
    range: a port from that range can be handed to any outgoing connection (the port polls of
    `wait_port` among them) between the moment it is chosen and the moment a server that
    starts slowly (TensorFlow's, seconds to import) binds it."""
    lo, _ = _ephemeral_range()
    first = 10000 if lo > 12000 else 1024
    ports = []
    for _ in range(2000):
        if len(ports) == n:
            return ports
        port = _port_rng.randrange(first, lo)
        if port in ports:
            continue
        try:
            for host in ("0.0.0.0", "127.0.0.1"):
                with socket.socket() as s:
                    s.bind((host, port))
        except OSError:
            continue
        ports.append(port)
    raise RuntimeError(f"found only {len(ports)} of {n} free ports in {first}..{lo}")


class Server:
    """One `ferroflow server` process."""

    def __init__(self, *args, env=None, ready_timeout=30.0):
        e = dict(os.environ)
        e.update(env or {})
        self.started = time.perf_counter()
        self.proc = subprocess.Popen([binary(), "server", *args], stdout=subprocess.PIPE, env=e, text=True)
        _procs.append(self.proc)
        lines = queue.Queue()

        def pump():
            for line in self.proc.stdout:
                lines.put(line)

        threading.Thread(target=pump, daemon=True).start()
        deadline = time.monotonic() + ready_timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or self.proc.poll() is not None:
                self.kill()
                raise RuntimeError(f"ferroflow server {args} did not become ready (exit {self.proc.poll()})")
            try:
                line = lines.get(timeout=min(left, 0.5))
            except queue.Empty:
                continue
            if "listening on " in line:
                self.target = line.split("listening on ", 1)[1].strip()
                self.ready_seconds = time.perf_counter() - self.started
                return

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)


def cluster(jobs, **kw):
    """Starts one server per task of `jobs` ({"ps": 1, "worker": 2}); returns
    ({"ps": [Server], ...}, cluster_flag)."""
    n = sum(jobs.values())
    ports = iter(free_ports(n))
    spec = {j: [f"127.0.0.1:{next(ports)}" for _ in range(k)] for j, k in jobs.items()}
    flag = ";".join(f"{j}={','.join(a)}" for j, a in spec.items())
    servers = {j: [Server("--cluster", flag, "--job_name", j, "--task_index", str(i), **kw) for i in range(k)]
               for j, k in jobs.items()}
    return servers, flag


@contextlib.contextmanager
def mixed_cluster(tf_job, config_path=None):
    """A cluster of one ps and one worker task, `tf_job` a TensorFlow server (given the
    serialized ConfigProto at `config_path` as its config) and the other a ferroflow server;
    yields ({job: [address]}, the ferroflow Server) and kills both at the end."""
    ports = free_ports(2)
    spec = {"ps": [f"127.0.0.1:{ports[0]}"], "worker": [f"127.0.0.1:{ports[1]}"]}
    tf_proc = tf_server(spec, tf_job, 0, config_path)
    try:
        wait_port(ports[list(spec).index(tf_job)], tf_proc)
        ff_job = "worker" if tf_job == "ps" else "ps"
        ff = Server("--cluster", f"ps={spec['ps'][0]};worker={spec['worker'][0]}", "--job_name", ff_job,
                    "--task_index", "0")
        try:
            yield spec, ff
        finally:
            ff.kill()
    finally:
        tf_proc.kill()
        tf_proc.wait()


def train_linear(tf, target, ps, worker, seed, outputs, bias=False, config=None, steps=5):
    """Runs `steps` of gradient descent (learning rate 0.1) on a 300x`outputs` linear model
    (with a bias if `bias`) fitting a random batch of 64 (`RandomState(seed)`), its variables
    on device `ps` and the model on `worker`, in a session on `target`; returns the losses and
    the final weights' sum."""
    import numpy as np
    g = tf.Graph()
    with g.as_default():
        rng = np.random.RandomState(seed)
        x_val = rng.rand(64, 300).astype(np.float32)
        y_val = rng.rand(64, outputs).astype(np.float32)
        with tf.device(ps):
            w0 = rng.rand(300, outputs).astype(np.float32) * 0.01
            w = tf.compat.v1.get_variable("w", initializer=tf.constant(w0))
            b = tf.compat.v1.get_variable("b", initializer=tf.zeros([outputs])) if bias else None
        with tf.device(worker):
            y = tf.matmul(tf.constant(x_val), w)
            loss = tf.reduce_mean(tf.square((y if b is None else y + b) - y_val))
            train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss)
        with tf.compat.v1.Session(target, config=config) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            losses = [float(sess.run([loss, train_op])[0]) for _ in range(steps)]
            return losses, float(sess.run(tf.reduce_sum(w)))


def sync_replicas_ops(tf, m):
    """Adds to `m`, one replica's handles (its graph the default one, its
    SyncReplicasOptimizer `m["opt"]`), the ops a test runs in place of TensorFlow's chief
    and workers: `init`, `local_init`, `init_tokens` (none ahead: the replicas step in
    lockstep) and `sync`, the chief queue runner's op."""
    opt = m["opt"]
    m["init"] = tf.compat.v1.global_variables_initializer()
    m["local_init"] = tf.compat.v1.local_variables_initializer()
    m["init_tokens"] = opt.get_init_tokens_op(0)
    m["sync"] = opt.get_chief_queue_runner().enqueue_ops[0]


def start_sync_replicas(sessions, models, steps, opts):
    """Initializes two replicas (`models` with `sync_replicas_ops`, each run in its session
    of `sessions`, the chief first) as TensorFlow's chief and other worker do; returns the
    chief queue runner, a function that runs `steps` of its sync op."""
    chief, other = models
    sessions[0].run(chief["init"], options=opts)
    sessions[0].run(chief["local_init"], options=opts)
    sessions[0].run([chief["opt"].chief_init_op, chief["init_tokens"]], options=opts)
    sessions[1].run(other["local_init"], options=opts)
    sessions[1].run(other["opt"].local_step_init_op, options=opts)

    def chief_queue_runner():
        for _ in range(steps):
            sessions[0].run(chief["sync"], options=opts)
    return chief_queue_runner


def outcome(tf, f):
    """`("ok", f())`, or the error's class and TensorFlow's own words for it (the first line
    that is not the client's or the runtime's framing)."""
    try:
        return ("ok", f())
    except tf.errors.OpError as e:
        framing = ("Graph execution error", "Detected at node", "From /job", "File \"", "[[", "Node:")
        lines = [ln.strip() for ln in e.message.splitlines() if ln.strip() and not ln.strip().startswith(framing)]
        return (type(e).__name__, lines[0].split(" [[")[0] if lines else "")


def on_both(jobs, scenarios, config_path=None):
    """Runs `scenarios(target)` on a TensorFlow cluster and then on a ferroflow cluster of the
    same shape (`jobs` = [("ps", 1), ("worker", 1)]; the target is the first task of the last
    job), both servers given the serialized ConfigProto at `config_path` as their config.
    Returns (TensorFlow's result, ferroflow's result)."""
    tasks = [(j, i) for j, k in jobs for i in range(k)]
    ports = free_ports(len(tasks))
    spec = {}
    for (j, _), port in zip(tasks, ports):
        spec.setdefault(j, []).append(f"127.0.0.1:{port}")
    target = f"grpc://{spec[jobs[-1][0]][0]}"
    procs = [tf_server(spec, j, i, config_path) for j, i in tasks]
    try:
        for p, port in zip(procs, ports):
            wait_port(port, p)
        want = scenarios(target)
    finally:
        for p in procs:
            p.kill()
            p.wait()
    ports = free_ports(len(tasks))
    flag = ";".join(f"{j}={','.join(f'127.0.0.1:{ports[n]}' for n, (jj, _) in enumerate(tasks) if jj == j)}"
                    for j, _ in jobs)
    extra = ["--default_session_config", config_path] if config_path else []
    servers = []
    try:
        for j, i in tasks:
            servers.append(Server("--cluster", flag, "--job_name", j, "--task_index", str(i), *extra))
        got = scenarios(servers[-len([t for t in tasks if t[0] == jobs[-1][0]])].target)
    finally:
        for s in servers:
            s.kill()
    return want, got


def tf_in_mode(mode):
    """TensorFlow in TF 1.x behaviour ("v1") or TF 2's graph mode ("v2"), logging errors
    only."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf
    tf.get_logger().setLevel("ERROR")
    if mode == "v1":
        tf.compat.v1.disable_v2_behavior()
    else:
        tf.compat.v1.disable_eager_execution()
    return tf


def run_threads(fns, timeout, what, barrier=None):
    """Runs each of `fns` on its own thread and waits for all, each at most `timeout`
    seconds (failing, naming `what`, if one is stuck); returns the exceptions they raised.
    A failing function aborts `barrier`, so that the others do not wait for it."""
    errors = []

    def guarded(f):
        def run():
            try:
                f()
            except Exception as e:  # returned to the caller
                errors.append(e)
                if barrier is not None:
                    barrier.abort()
        return run

    threads = [threading.Thread(target=guarded(f)) for f in fns]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=timeout)
        assert not t.is_alive(), f"{what} is stuck"
    return errors


def report(mode, want, got, close):
    """Prints each scenario's TensorFlow result (and ferroflow's where `close` says they
    differ); fails if any differs."""
    assert len(want) == len(got), f"{len(want)} TensorFlow results, {len(got)} ferroflow results"
    bad = 0
    for i, (w, g) in enumerate(zip(want, got)):
        ok = close(w, g)
        bad += not ok
        print(f"{mode} {i:2d} {'ok ' if ok else 'BAD'} TensorFlow {w}")
        if not ok:
            print(f"           ferroflow  {g}")
    assert bad == 0, f"{bad} scenarios differ in mode {mode}"


def main(path, run_mode, done=None):
    """A compat script's entry: `run_mode(mode)` for the mode given, else both modes, each in
    its own process (TensorFlow's mode is per process), then `done` (by default
    "<script>: OK")."""
    if len(sys.argv) > 1:
        run_mode(sys.argv[1])
    else:
        for m in ("v1", "v2"):
            subprocess.run([sys.executable, os.path.abspath(path), m], check=True)
        print(done or f"{os.path.splitext(os.path.basename(path))[0]}: OK")


# A log line in absl's format (`E0000 00:00:1795920637.004238 15626 util.cc:131] ...`). On
# some CPUs TensorFlow appends its recent log lines to an error's message (oneDNN's "DT_HALF
# only on platforms with AVX-512"); they are never the error's reason.
ABSL_LOG_LINE = re.compile(r"[IWEF]\d{4} \d\d:\d\d:\d\d")


def error_result(e, message=True):
    """An `OpError` as a comparable result: ("InvalidArgumentError", reason) where reason is
    the last line of the message without TensorFlow's node framing (None when only the
    class is to be compared)."""
    if not message:
        return (type(e).__name__, None)
    text = e.message
    # TensorFlow's client sometimes passes on a peer's status as gRPC framing:
    # `... grpc_message:"<reason>\n\t [[{{node x}}]]"}` with escaped newlines.
    if 'grpc_message:"' in text:
        text = text.split('grpc_message:"', 1)[1].rsplit('"', 1)[0].replace("\\n", "\n").replace("\\t", "\t")
    # TensorFlow may append the process's recent log lines to the message.
    text = text.split("Recent warning and error logs:", 1)[0]
    lines = [ln.strip() for ln in text.splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith("[[") and not ln.startswith("Node:")
             and not ln.startswith("Detected at node") and not ln.startswith("File ")
             and "Graph execution error" not in ln and not ABSL_LOG_LINE.match(ln)]
    return (type(e).__name__, lines[-1] if lines else e.message)


def close(want, got, tol=1e-4):
    """Whether ferroflow's result `got` matches TensorFlow's `want`: floats within `tol`
    (relative above 1), errors of the same class whose TensorFlow reason (from
    `error_result`) appears in ferroflow's message, containers element by element."""
    if isinstance(want, tuple) and len(want) == 2 and isinstance(want[0], str) and want[0].endswith("Error"):
        if not (isinstance(got, tuple) and len(got) == 2 and got[0] == want[0]):
            return False
        return want[1] is None or (got[1] is not None and want[1] in got[1])
    if isinstance(want, float) or isinstance(got, float):
        return (isinstance(want, (int, float)) and isinstance(got, (int, float))
                and abs(want - got) <= tol * max(1.0, abs(want)))
    if isinstance(want, (list, tuple)) and isinstance(got, (list, tuple)):
        return len(want) == len(got) and all(close(a, b, tol) for a, b in zip(want, got))
    if isinstance(want, dict) and isinstance(got, dict):
        return want.keys() == got.keys() and all(close(want[k], got[k], tol) for k in want)
    return want == got


def compare(want, got, label, tol=1e-4):
    """Prints each scenario of two {name: result} dicts and asserts they are `close`."""
    assert want.keys() == got.keys(), (label, sorted(want), sorted(got))
    bad = []
    for k, w in want.items():
        ok = close(w, got[k], tol)
        print(f"  {label} {'ok ' if ok else 'BAD'} {k}: TensorFlow {str(w)[:160]}")
        if not ok:
            print(f"      ferroflow {str(got[k])[:400]}")
            bad.append(k)
    assert not bad, f"{label}: {len(bad)} scenarios differ from TensorFlow: {bad}"
    return len(want)


def stop(procs):
    """Kills the processes still running and reaps them (at most 10 s each)."""
    for p in procs:
        if p.poll() is None:
            p.kill()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass


@atexit.register
def _cleanup():
    stop(_procs)
