"""`Server`: one task of a cluster as a `ferroflow server` child process tied to this one."""

import atexit
import ctypes
import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time

# How long a starting task may take to listen, and a stopping one to exit.
START_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0

_children = []


class ServerError(RuntimeError):
    """A task that could not start; `code` is TensorFlow's status code name (e.g. "UNKNOWN")."""

    def __init__(self, code, message):
        super().__init__(f"{code}: {message}" if code else message)
        self.code = code
        self.message = message


def binary():
    """The `ferroflow` executable: `$FERROFLOW_BIN`, else the one this package installed,
    else the first on PATH."""
    env = os.environ.get("FERROFLOW_BIN")
    if env:
        return env
    scripts = sysconfig.get_path("scripts")
    for d in (scripts, os.path.dirname(sys.executable)):
        p = os.path.join(d, "ferroflow")
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    p = shutil.which("ferroflow")
    if p:
        return p
    raise ServerError("NOT_FOUND", "the ferroflow executable is not installed (pip install ferroflow, or set "
                      "FERROFLOW_BIN)")


def _die_with_parent():
    """In the child: the kernel kills it when this Python process dies (Linux)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def _stop_children():
    for p in list(_children):
        _stop(p)


atexit.register(_stop_children)


def _stop(p):
    """SIGTERM, then SIGKILL if it has not exited in STOP_TIMEOUT."""
    if p.poll() is None:
        p.terminate()
        try:
            p.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=STOP_TIMEOUT)
    if p in _children:
        _children.remove(p)


def _tf_error(code, message):
    """The TensorFlow exception for `code` when TensorFlow is already imported, else ours."""
    tf_errors = sys.modules.get("tensorflow.python.framework.errors_impl")
    if tf_errors is not None:
        cls = {
            "INVALID_ARGUMENT": "InvalidArgumentError",
            "NOT_FOUND": "NotFoundError",
            "ALREADY_EXISTS": "AlreadyExistsError",
            "PERMISSION_DENIED": "PermissionDeniedError",
            "FAILED_PRECONDITION": "FailedPreconditionError",
            "UNAVAILABLE": "UnavailableError",
            "UNIMPLEMENTED": "UnimplementedError",
            "INTERNAL": "InternalError",
            "RESOURCE_EXHAUSTED": "ResourceExhaustedError",
        }.get(code, "UnknownError")
        return getattr(tf_errors, cls)(None, None, message)
    return ServerError(code, message)


def _cluster_dict(spec):
    """{job: {index: address}} from a dict, a `tf.train.ClusterSpec`, a `ClusterDef` or a
    `ServerDef`'s cluster."""
    if hasattr(spec, "as_dict"):
        spec = spec.as_dict()
    if isinstance(spec, dict):
        out = {}
        for job, tasks in spec.items():
            if isinstance(tasks, dict):
                out[job] = {int(i): str(a) for i, a in tasks.items()}
            elif isinstance(tasks, (list, tuple)):
                out[job] = {i: str(a) for i, a in enumerate(tasks)}
            else:
                raise TypeError(f"job '{job}': expected a list or dict of addresses, got {type(tasks).__name__}")
        return out
    if hasattr(spec, "job"):  # a ClusterDef
        return {j.name: {int(i): a for i, a in j.tasks.items()} for j in spec.job}
    raise TypeError("server_or_cluster_def must be a ServerDef, ClusterDef, tf.train.ClusterSpec or dict, got "
                    f"{type(spec).__name__}")


def _free_port(host):
    with socket.socket() as s:
        s.bind((host if host not in ("localhost", "") else "127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One task of a cluster, as `tf.distribute.Server`: `Server(server_or_cluster_def,
    job_name=None, task_index=None, protocol=None, config=None, start=True)`."""

    def __init__(self, server_or_cluster_def, job_name=None, task_index=None, protocol=None, config=None,
                 start=True):
        spec = server_or_cluster_def
        if hasattr(spec, "cluster") and hasattr(spec, "job_name"):  # a ServerDef
            job_name = job_name if job_name is not None else (spec.job_name or None)
            task_index = task_index if task_index is not None else spec.task_index
            protocol = protocol or spec.protocol or None
            if config is None and spec.HasField("default_session_config"):
                config = spec.default_session_config
            spec = spec.cluster
        self._jobs = _cluster_dict(spec)
        if job_name is None:
            if len(self._jobs) != 1:
                raise ValueError("Must specify an explicit `job_name`.")
            job_name = next(iter(self._jobs))
        if job_name not in self._jobs:
            raise ValueError(f"Job '{job_name}' is not in the cluster ({sorted(self._jobs)}).")
        if task_index is None:
            if len(self._jobs[job_name]) != 1:
                raise ValueError("Must specify an explicit `task_index`.")
            task_index = next(iter(self._jobs[job_name]))
        if task_index not in self._jobs[job_name]:
            raise ValueError(f"Task {task_index} is not in job '{job_name}' ({sorted(self._jobs[job_name])}).")
        if protocol not in (None, "grpc"):
            raise ValueError(f"protocol '{protocol}': ferroflow speaks 'grpc'")
        self._job, self._task, self._config = job_name, int(task_index), config
        host, _, port = self._jobs[job_name][self._task].rpartition(":")
        if port == "0" and not start:
            # The address must be known before start: pick a free port now.
            self._jobs[job_name][self._task] = f"{host}:{_free_port(host)}"
        self.target = "grpc://" + self._jobs[job_name][self._task]
        self._proc = None
        self._config_file = None
        if start:
            self.start()

    @staticmethod
    def create_local_server(config=None, start=True):
        """A single-task cluster on a free localhost port."""
        return Server({"localhost": ["localhost:0"]}, protocol="grpc", config=config, start=start)

    @property
    def server_def(self):
        """TensorFlow's `ServerDef` of this task (a dict when TensorFlow is not installed)."""
        d = {"cluster": {j: dict(t) for j, t in self._jobs.items()}, "job_name": self._job,
             "task_index": self._task, "protocol": "grpc"}
        try:
            from tensorflow.core.protobuf import cluster_pb2, tensorflow_server_pb2
        except ImportError:
            return d
        cluster = cluster_pb2.ClusterDef()
        for job, tasks in self._jobs.items():
            j = cluster.job.add(name=job)
            for i, a in tasks.items():
                j.tasks[i] = a
        sd = tensorflow_server_pb2.ServerDef(cluster=cluster, job_name=self._job, task_index=self._task,
                                             protocol="grpc")
        if self._config is not None:
            sd.default_session_config.CopyFrom(self._config)
        return sd

    def _args(self):
        args = [binary(), "server"]
        env = dict(os.environ)
        env.pop("TF_CONFIG", None)
        dense = all(sorted(t) == list(range(len(t))) for t in self._jobs.values())
        if dense:
            flag = ";".join(f"{j}={','.join(t[i] for i in sorted(t))}" for j, t in self._jobs.items())
            args += ["--cluster", flag, "--job_name", self._job, "--task_index", str(self._task)]
        else:  # sparse task indices: only TF_CONFIG can say them
            env["TF_CONFIG"] = json.dumps({"cluster": {j: {str(i): a for i, a in t.items()}
                                                       for j, t in self._jobs.items()},
                                           "task": {"type": self._job, "index": self._task}})
        if self._config is not None and self._config.ByteSize():
            f = tempfile.NamedTemporaryFile(prefix="ferroflow-config-", suffix=".pb", delete=False)
            f.write(self._config.SerializeToString())
            f.close()
            self._config_file = f.name
            args += ["--default_session_config", f.name]
        return args, env

    def start(self):
        """Starts the task (once); returns when it listens. Raises the task's error if it
        cannot start (e.g. `UnknownError` "Could not start gRPC server" for a port in use)."""
        if self._proc is not None:
            return
        args, env = self._args()
        err = tempfile.TemporaryFile()
        p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=err, env=env, text=True,
                             preexec_fn=_die_with_parent)
        _children.append(p)
        lines = queue.Queue()

        def pump():
            for line in p.stdout:
                lines.put(line)
            lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                # Short waits: the end of the output can come before the exit is visible
                # (the process is not yet reaped), and a long wait then would sit out the
                # whole start timeout instead of reporting the error.
                line = lines.get(timeout=max(0.05, min(0.25, deadline - time.monotonic())))
            except queue.Empty:
                line = None
            if line and "listening on " in line:
                self.target = line.split("listening on ", 1)[1].strip()
                self._proc = p
                return
            if line is None and (p.poll() is not None or time.monotonic() > deadline):
                _stop(p)
                err.seek(0)
                text = err.read().decode(errors="replace")
                msgs = [ln[len("error: "):] for ln in text.splitlines() if ln.startswith("error: ")]
                if msgs:
                    code, _, msg = msgs[-1].partition(": ")
                    if not code.isupper():
                        code, msg = "UNKNOWN", msgs[-1]
                else:
                    code, msg = "UNKNOWN", (f"ferroflow server for /job:{self._job}/task:{self._task} did not start "
                                            f"within {START_TIMEOUT:.0f} s (exit {p.returncode}): {text[-500:]}")
                raise _tf_error(code, msg)

    def join(self):
        """Blocks until the task stops (a Shutdown call, or `stop()` from another thread)."""
        if self._proc is not None:
            self._proc.wait()

    def stop(self):
        """Stops the task (TensorFlow's servers cannot be stopped; ferroflow's can)."""
        if self._proc is not None:
            _stop(self._proc)
        if self._config_file:
            try:
                os.remove(self._config_file)
            except OSError:
                pass
            self._config_file = None

    def __repr__(self):
        return f"ferroflow.Server(/job:{self._job}/task:{self._task}, target={self.target!r})"


def create_local_server(config=None, start=True):
    """`Server.create_local_server`."""
    return Server.create_local_server(config=config, start=start)
