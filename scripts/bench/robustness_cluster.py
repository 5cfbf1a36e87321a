"""The shared part of scripts/bench/robustness.py: its clusters, the memory guard that
watches them, and a raw MasterService client.

A cluster is one ps and one worker, each task its own OS process: `ferroflow server`
processes or tf.distribute.Server processes, both with their default settings (no
--memory_limit for ferroflow). Safety: every server gets oom_score_adj 1000 (so the kernel's
OOM killer takes a server before anyone else's process), and a guard kills the largest server
process if the host's MemAvailable falls below 1.5 GiB; such a kill is reported as a death
(with the RSS it had reached), since without the guard the kernel would have done it.

Also here: /proc readings (CPU model, MemAvailable, a process's RSS and CPU seconds) and a
subset of TensorFlow's master protos with a grpcio client for them (RawMaster).
"""

import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "compat"))
import ffcluster  # noqa: E402

CODES = ["OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
         "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
         "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
         "UNAUTHENTICATED"]
GUARD_BYTES = int(1.5 * (1 << 30))
ANSWER_DEADLINE_S = 20.0   # each gRPC call of the liveness step


def code_name(c):
    return CODES[c] if isinstance(c, int) and 0 <= c < len(CODES) else str(c)


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown"


def meminfo(key):
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return 0


def rss_bytes(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def cpu_seconds(pid):
    """utime + stime of a process (all its threads), seconds."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return float("nan")


# ----------------------------------------------------------------------------------------
# Servers, with a memory guard watching them.

class Guard:
    """Samples every registered server's RSS every 50 ms (keeping the peak), and kills the
    largest one when the host's MemAvailable falls below GUARD_BYTES."""

    def __init__(self):
        self.lock = threading.Lock()
        self.procs = {}      # pid -> Popen
        self.peak = {}       # pid -> bytes
        self.killed = {}     # pid -> rss at the kill
        self.stop = False
        threading.Thread(target=self.run, daemon=True).start()

    def add(self, proc):
        with self.lock:
            self.procs[proc.pid] = proc
            self.peak[proc.pid] = 0

    def reset_peak(self, pid):
        with self.lock:
            self.peak[pid] = rss_bytes(pid)

    def run(self):
        while not self.stop:
            with self.lock:
                live = {pid: p for pid, p in self.procs.items() if p.poll() is None}
                rss = {pid: rss_bytes(pid) for pid in live}
                for pid, r in rss.items():
                    self.peak[pid] = max(self.peak.get(pid, 0), r)
                if live and meminfo("MemAvailable") < GUARD_BYTES:
                    pid = max(rss, key=rss.get)
                    self.killed[pid] = rss[pid]
                    print(f"[guard] host MemAvailable below {GUARD_BYTES >> 20} MiB: killing server pid {pid} "
                          f"(RSS {rss[pid] / 2**30:.1f} GiB)", file=sys.stderr, flush=True)
                    live[pid].kill()
            time.sleep(0.05)


GUARD = None  # the running Guard, set by start_guard(); Cluster registers its servers with it


def start_guard():
    global GUARD
    GUARD = Guard()
    return GUARD


class Cluster:
    """One ps and one worker of `kind` ("ferroflow" or "tensorflow"), each a process whose
    stdout/stderr go to files in `logdir`."""

    def __init__(self, kind, logdir, tag):
        self.kind = kind
        ps_port, w_port = ffcluster.free_ports(2)
        self.spec = {"ps": [f"127.0.0.1:{ps_port}"], "worker": [f"127.0.0.1:{w_port}"]}
        self.ports = {"ps": ps_port, "worker": w_port}
        self.target = {j: f"grpc://127.0.0.1:{p}" for j, p in self.ports.items()}
        self.procs, self.logs = {}, {}
        flag = ";".join(f"{j}={','.join(a)}" for j, a in self.spec.items())
        for job in ("ps", "worker"):
            log = os.path.join(logdir, f"{kind}-{tag}-{job}.log")
            self.logs[job] = log
            out = open(log, "w")
            if kind == "ferroflow":
                p = subprocess.Popen([ffcluster.binary(), "server", "--cluster", flag, "--job_name", job,
                                      "--task_index", "0"], stdout=out, stderr=subprocess.STDOUT)
                ffcluster._procs.append(p)
            else:
                p = ffcluster.tf_server(self.spec, job, 0, stdout=out, stderr=subprocess.STDOUT)
            out.close()
            try:
                with open(f"/proc/{p.pid}/oom_score_adj", "w") as f:
                    f.write("1000")
            except OSError:
                pass
            GUARD.add(p)
            self.procs[job] = p
        for job in ("ps", "worker"):
            ffcluster.wait_port(self.ports[job], self.procs[job])

    def pids(self):
        return [p.pid for p in self.procs.values()]

    def kill(self):
        ffcluster.stop(self.procs.values())

    def log_tail(self, job, n=6):
        try:
            with open(self.logs[job], errors="replace") as f:
                lines = [ln.rstrip() for ln in f if ln.strip()]
            return lines[-n:]
        except OSError:
            return []


def isa_line(cluster):
    for line in cluster.log_tail("ps", 50):
        if "compute path" in line:
            return line.strip()
    return "unknown"


# ----------------------------------------------------------------------------------------
# TensorFlow's master protos (not shipped in the pip package): a subset declared here with
# TensorFlow's field numbers (tensorflow/core/protobuf/master.proto).

def master_messages():
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    from tensorflow.core.framework import graph_pb2  # noqa: F401
    from tensorflow.core.protobuf import config_pb2, named_tensor_pb2  # noqa: F401
    F = descriptor_pb2.FieldDescriptorProto
    fdp = descriptor_pb2.FileDescriptorProto(
        name="ffbench/master_subset.proto", package="ffbench", syntax="proto3",
        dependency=["tensorflow/core/framework/graph.proto", "tensorflow/core/protobuf/config.proto",
                    "tensorflow/core/protobuf/named_tensor.proto"])
    S, M, B, I32, I64 = F.TYPE_STRING, F.TYPE_MESSAGE, F.TYPE_BOOL, F.TYPE_INT32, F.TYPE_INT64
    O, R = F.LABEL_OPTIONAL, F.LABEL_REPEATED
    defs = {
        "CreateSessionRequest": [("graph_def", 1, M, O, ".tensorflow.GraphDef"),
                                 ("config", 2, M, O, ".tensorflow.ConfigProto"), ("target", 3, S, O, None)],
        "CreateSessionResponse": [("session_handle", 1, S, O, None), ("graph_version", 2, I64, O, None)],
        "RunStepRequest": [("session_handle", 1, S, O, None), ("feed", 2, M, R, ".tensorflow.NamedTensorProto"),
                           ("fetch", 3, S, R, None), ("target", 4, S, R, None),
                           ("options", 5, M, O, ".tensorflow.RunOptions"), ("partial_run_handle", 6, S, O, None),
                           ("store_errors_in_response_body", 7, B, O, None), ("request_id", 8, I64, O, None)],
        "RunStepResponse": [("tensor", 1, M, R, ".tensorflow.NamedTensorProto"),
                            ("metadata", 2, M, O, ".tensorflow.RunMetadata"), ("status_code", 3, I32, O, None),
                            ("status_error_message", 4, S, O, None)],
        "CloseSessionRequest": [("session_handle", 1, S, O, None)],
        "CloseSessionResponse": [],
    }
    for name, fields in defs.items():
        m = fdp.message_type.add(name=name)
        for fname, num, typ, label, tname in fields:
            f = m.field.add(name=fname, number=num, type=typ, label=label)
            if tname:
                f.type_name = tname
    pool = descriptor_pool.Default()
    pool.Add(fdp)
    return {n: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"ffbench.{n}")) for n in defs}


class RawMaster:
    """MasterService calls over grpcio, every call with a deadline."""

    def __init__(self, target, msgs):
        import grpc
        self.grpc = grpc
        self.m = msgs
        self.ch = grpc.insecure_channel(target.replace("grpc://", ""),
                                        options=[("grpc.max_receive_message_length", -1),
                                                 ("grpc.max_send_message_length", -1)])

    def call(self, method, req, resp, timeout):
        f = self.ch.unary_unary(f"/tensorflow.MasterService/{method}",
                                request_serializer=lambda x: x.SerializeToString(),
                                response_deserializer=self.m[resp].FromString)
        return f(req, timeout=timeout)

    def step(self, graph_def, fetch, feed=(), device_filters=(), timeout=ANSWER_DEADLINE_S):
        """(code name, message, fetched NamedTensorProtos)."""
        from tensorflow.core.protobuf import config_pb2
        try:
            cfg = config_pb2.ConfigProto(device_filters=list(device_filters))
            h = self.call("CreateSession", self.m["CreateSessionRequest"](graph_def=graph_def, config=cfg),
                          "CreateSessionResponse", timeout).session_handle
        except self.grpc.RpcError as e:
            return e.code().name, f"CreateSession: {e.details()}", []
        try:
            r = self.call("RunStep", self.m["RunStepRequest"](session_handle=h, feed=list(feed), fetch=[fetch],
                                                             store_errors_in_response_body=True),
                          "RunStepResponse", timeout)
            return code_name(r.status_code), r.status_error_message, list(r.tensor)
        except self.grpc.RpcError as e:
            return e.code().name, f"RunStep: {e.details()}", []
        finally:
            try:
                self.call("CloseSession", self.m["CloseSessionRequest"](session_handle=h), "CloseSessionResponse", 5)
            except self.grpc.RpcError:
                pass

    def close(self):
        self.ch.close()
