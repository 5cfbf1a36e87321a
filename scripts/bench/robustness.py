"""Robustness and load, ferroflow vs TensorFlow 2.21, side by side on this machine.

Two clusters of the same shape (one ps, one worker; each task its own OS process):
`ferroflow server` processes and tf.distribute.Server processes, both with their default
settings (no --memory_limit for ferroflow).

1. Bad inputs. Each request below is sent to both clusters through the worker's master,
   its op pinned to /job:ps and /job:worker alternately (--flip swaps them). Afterwards
   every task is checked: is its process alive, and does it answer a small step (a raw
   CreateSession + RunStep on its own master, Const+Const+Add on itself, 20 s deadline)?
   A cluster with a dead or silent task is replaced by a fresh one before the next input.
   The inputs (as crates/ferroflow/tests/server_process.rs's
   inputs_that_declare_huge_tensors_get_errors_and_the_task_stays_up):
     - a Const whose TensorProto declares float [2^20, 2^20] with one float_val, and one
       declaring string [2^40] with one string_val: a hand-built NodeDef imported with
       tf.import_graph_def, run by the TF1 Python client (Session on the worker's target);
     - a Placeholder fed a TensorProto declaring float [2^36] with one float_val: the Python
       client cannot build that feed (it needs a numpy array of 2^36 values), so it is sent
       raw: MasterService CreateSession + RunStep over grpcio with TensorFlow's protos;
     - kernels whose shape or size input asks for a huge output (Python client, graph mode,
       every node pinned to the task): Tile of 4 floats by 2^31-1, BroadcastTo [2^33],
       Range(0, 2^33) int64, OneHot depth 2^31-1 (one index), Pad by [[0, 2^33]],
       UnsortedSegmentSum num_segments 2^33, DynamicStitch with index 2^31-1 (data 1x2),
       RandomUniform [2^33], Fill [2^33].
   Reported per input and system: the status code, the message (shortened), the seconds,
   each task's peak resident memory while the input ran, and each task's fate.
   Safety: every server gets oom_score_adj 1000 (so the kernel's OOM killer takes a server
   before anyone else's process), and a guard kills the largest server process if the
   host's MemAvailable falls below 1.5 GiB; such a kill is reported as a death (with the
   RSS it had reached), since without the guard the kernel would have done it.

2. Load. 64 concurrent TF1 Python clients (8 processes x 8 threads, one Session each on
   the worker's target) run small steps for --duration s (10) after --warmup s (2): each step reads
   a scalar resource variable on the ps and adds a constant on the worker (one ps->worker
   tensor transfer, fetch through the worker). Reported: steps/s, p50 and p99 latency,
   errors, the servers' CPU time per step (ps + worker, from /proc), and ferroflow/TF
   ratios (median of the rounds). Fresh clusters for each run; --rounds (2) alternates the
   systems, ferroflow first then TensorFlow first (ABBA...), against a busy host's drift.

Prints a table and one JSON summary line (prefixed "JSON ").

Usage: .venv/bin/python scripts/bench/robustness.py [--duration 10] [--warmup 2]
       [--rounds 2] [--flip] [--only NAME] [--skip_load] [--skip_bad]
       (FERROFLOW_BIN overrides the ferroflow binary)
"""

import argparse
import atexit
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "compat"))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

CODES = ["OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
         "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
         "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
         "UNAUTHENTICATED"]
GUARD_BYTES = int(1.5 * (1 << 30))
STEP_TIMEOUT_S = 30.0      # RunOptions.timeout_in_ms of a bad input's step
HARD_TIMEOUT_S = 60.0      # the client thread is abandoned after this
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


GUARD = None


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
        for p in self.procs.values():
            if p.poll() is None:
                p.kill()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass

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


# ----------------------------------------------------------------------------------------
# 1. Bad inputs.

def huge_tensor_proto(tf, dtype, dims):
    from tensorflow.core.framework import tensor_pb2, tensor_shape_pb2, types_pb2
    p = tensor_pb2.TensorProto(dtype=dtype.as_datatype_enum,
                               tensor_shape=tensor_shape_pb2.TensorShapeProto(
                                   dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=d) for d in dims]))
    if dtype == tf.string:
        p.string_val.append(b"x")
    else:
        assert p.dtype == types_pb2.DT_FLOAT
        p.float_val.append(1.0)
    return p


def node_graph_def(tf, op, dtype, device, value=None):
    """A GraphDef of one node "huge" (Const with `value`, or Placeholder)."""
    gd = tf.compat.v1.GraphDef()
    gd.versions.CopyFrom(tf.Graph().as_graph_def().versions)
    n = gd.node.add(name="huge", op=op, device=device)
    n.attr["dtype"].type = dtype.as_datatype_enum
    if value is not None:
        n.attr["value"].tensor.CopyFrom(value)
    else:
        n.attr["shape"].shape.unknown_rank = True
    return gd


def kernel_inputs(tf):
    """name -> a function building the op (in the current graph and device scope)."""
    r = tf.raw_ops
    i64 = lambda v: tf.constant(v, tf.int64)  # noqa: E731
    i32 = lambda v: tf.constant(v, tf.int32)  # noqa: E731
    big = 1 << 33
    imax = (1 << 31) - 1
    return {
        "Tile 4 floats x (2^31-1)": lambda: r.Tile(input=tf.constant([1.0] * 4), multiples=i32([imax])),
        "BroadcastTo [2^33]": lambda: r.BroadcastTo(input=tf.constant(1.0), shape=i64([big])),
        "Range(0, 2^33) int64": lambda: r.Range(start=i64(0), limit=i64(big), delta=i64(1)),
        "OneHot depth 2^31-1": lambda: r.OneHot(indices=i32([0]), depth=i32(imax), on_value=tf.constant(1.0),
                                                off_value=tf.constant(0.0), axis=-1),
        "Pad [[0, 2^33]]": lambda: r.Pad(input=tf.constant([1.0]), paddings=i64([[0, big]])),
        "UnsortedSegmentSum num_segments 2^33": lambda: r.UnsortedSegmentSum(
            data=tf.constant([1.0]), segment_ids=i64([0]), num_segments=i64(big)),
        "DynamicStitch index 2^31-1": lambda: r.DynamicStitch(indices=[i32([imax])],
                                                               data=[tf.constant([[1.0, 2.0]])]),
        "RandomUniform [2^33]": lambda: r.RandomUniform(shape=i64([big]), dtype=tf.float32, seed=1, seed2=2),
        "Fill [2^33]": lambda: r.Fill(dims=i64([big]), value=tf.constant(1.0)),
    }


def bad_inputs(tf):
    """[(name, how, build)] where how is "python" (build(device) -> (graph, fetch name)) or
    "raw" (build(device) -> (graph_def, fetch name, feeds))."""
    from tensorflow.core.protobuf import named_tensor_pb2
    out = []

    def const_case(dtype, dims):
        def build(device):
            gd = node_graph_def(tf, "Const", dtype, device, huge_tensor_proto(tf, dtype, dims))
            g = tf.Graph()
            with g.as_default():
                tf.import_graph_def(gd, name="")
            return g, "huge:0"
        return build

    out.append(("Const float [2^20,2^20], 1 float_val", "python", const_case(tf.float32, [1 << 20, 1 << 20])))
    out.append(("Const string [2^40], 1 string_val", "python", const_case(tf.string, [1 << 40])))

    def feed_build(device):
        # Fetched through an Identity: TensorFlow refuses to feed and fetch one tensor.
        gd = node_graph_def(tf, "Placeholder", tf.float32, device)
        gd.node.add(name="out", op="Identity", input=["huge"], device=device).attr["T"].type = tf.float32.as_datatype_enum
        feed = named_tensor_pb2.NamedTensorProto(name="huge:0", tensor=huge_tensor_proto(tf, tf.float32, [1 << 36]))
        return gd, "out:0", [feed]

    out.append(("feed float [2^36], 1 float_val", "raw", feed_build))
    for name, f in kernel_inputs(tf).items():
        def build(device, f=f):
            g = tf.Graph()
            with g.as_default(), tf.device(device):
                t = f()
            return g, t.name
        out.append((name, "python", build))
    return out


def answer_graph(tf, job):
    g = tf.Graph()
    with g.as_default(), tf.device(f"/job:{job}/task:0"):
        tf.add(tf.constant(1.0), tf.constant(2.0), name="answer")
    return g.as_graph_def()


def python_step(tf, target, graph, fetch):
    """Runs `fetch` of `graph` with the TF1 Python client on `target`; (code, message).
    Run in a thread that is abandoned after HARD_TIMEOUT_S."""
    res = {}

    def go():
        try:
            opts = tf.compat.v1.RunOptions(timeout_in_ms=int(STEP_TIMEOUT_S * 1000))
            with graph.as_default(), tf.compat.v1.Session(target, graph=graph) as s:
                v = s.run(fetch, options=opts)
            res["r"] = ("OK", f"returned shape {getattr(v, 'shape', None)}")
        except tf.errors.OpError as e:
            res["r"] = (code_name(e.error_code), e.message)
        except Exception as e:  # noqa: BLE001 -- a client-side failure is a result too
            res["r"] = ("CLIENT " + type(e).__name__, str(e))

    t = threading.Thread(target=go, daemon=True)
    t.start()
    t.join(HARD_TIMEOUT_S)
    return res.get("r", ("NO ANSWER", f"no answer within {HARD_TIMEOUT_S:.0f} s"))


def reason(msg):
    """TensorFlow's own words in a client error: the Python client prefixes the server's
    message with "Graph execution error:" and the traceback of where the node was defined."""
    lines = [ln.strip() for ln in msg.splitlines()]
    last_node = max((i for i, ln in enumerate(lines) if ln.startswith("Node: '")), default=-1)
    keep = [ln for ln in lines[last_node + 1:] if ln and not ln.startswith("[[")
            and not ln.startswith("Additional GRPC error information") and not ln.startswith("Graph execution error")]
    return " ".join(keep) if keep else msg


def short(msg, n=150):
    m = " ".join(msg.split())
    return m if len(m) <= n else m[:n - 3] + "..."


def task_fates(cluster, msgs, answer_gds):
    """job -> "up", "alive, no answer (...)" or "DIED (...)"."""
    time.sleep(1.0)
    fates = {}
    for job, p in cluster.procs.items():
        if p.poll() is not None:
            how = f"signal {-p.returncode}" if p.returncode < 0 else f"exit {p.returncode}"
            if p.pid in GUARD.killed:
                how += f", memory guard at RSS {GUARD.killed[p.pid] / 2**30:.1f} GiB"
            fates[job] = f"DIED ({how})"
            continue
        rm = RawMaster(cluster.target[job], msgs)
        try:
            code, msg, tensors = rm.step(answer_gds[job], "answer:0", device_filters=[f"/job:{job}/task:0"])
        finally:
            rm.close()
        if code == "OK" and tensors:
            fates[job] = "up"
        else:
            fates[job] = f"alive, no answer ({code}: {short(msg, 80)})"
            if p.poll() is not None:
                fates[job] = f"DIED (exit {p.returncode}, during the check)"
    return fates


def run_bad_inputs(tf, msgs, logdir, flip, only=None):
    inputs = bad_inputs(tf)
    if only:
        keep = [k for k, x in enumerate(inputs) if only.lower() in x[0].lower()]
        inputs = [inputs[k] for k in keep]
        flip += keep[0] if keep else 0
    answer_gds = {j: answer_graph(tf, j) for j in ("ps", "worker")}
    systems = ("ferroflow", "tensorflow")
    gen = {s: 0 for s in systems}
    clusters = {}
    isa = None

    def fresh(kind):
        gen[kind] += 1
        c = Cluster(kind, logdir, f"bad{gen[kind]}")
        return c

    results = {s: [] for s in systems}
    try:
        for s in systems:
            clusters[s] = fresh(s)
        isa = isa_line(clusters["ferroflow"])
        for i, (name, how, build) in enumerate(inputs):
            job = ("ps", "worker")[(i + flip) % 2]
            device = f"/job:{job}/task:0"
            for s in systems:
                c = clusters[s]
                for pid in c.pids():
                    GUARD.reset_peak(pid)
                t0 = time.perf_counter()
                via = "python client"
                try:
                    if how == "python":
                        try:
                            graph, fetch = build(device)
                        except Exception as e:  # noqa: BLE001
                            code, msg = "CLIENT " + type(e).__name__, str(e)
                            graph = None
                        if graph is not None:
                            code, msg = python_step(tf, c.target["worker"], graph, fetch)
                    else:
                        via = "raw RunStep"
                        gd, fetch, feeds = build(device)
                        rm = RawMaster(c.target["worker"], msgs)
                        try:
                            code, msg, _ = rm.step(gd, fetch, feed=feeds, timeout=STEP_TIMEOUT_S)
                        finally:
                            rm.close()
                except Exception as e:  # noqa: BLE001
                    code, msg = "CLIENT " + type(e).__name__, str(e)
                secs = time.perf_counter() - t0
                fates = task_fates(c, msgs, answer_gds)
                peak = {j: GUARD.peak.get(p.pid, 0) for j, p in c.procs.items()}
                died = [j for j, f in fates.items() if f != "up"]
                tails = {j: c.log_tail(j) for j in died}
                results[s].append(dict(input=name, device=device, via=via, code=code, message=short(reason(msg), 400),
                                       seconds=round(secs, 2), peak_rss_gib={j: round(v / 2**30, 2) for j, v in peak.items()},
                                       fates=fates, log_tail=tails))
                print(f"  [{s}] {name} on {device}: {code} in {secs:.1f} s; "
                      + ", ".join(f"{j} {f}" for j, f in fates.items()), file=sys.stderr, flush=True)
                if died or code == "NO ANSWER":
                    # A step still running on the server would disturb the next input.
                    c.kill()
                    clusters[s] = fresh(s)
    finally:
        for c in clusters.values():
            c.kill()
    return results, isa


# ----------------------------------------------------------------------------------------
# 2. Load: client processes driven over stdin/stdout.

def load_client():
    """A client process: JSON commands on stdin, JSON answers on stdout."""
    import tensorflow as tf
    tf.get_logger().setLevel("ERROR")
    tf.compat.v1.disable_eager_execution()
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.compat.v1.get_variable("small", initializer=tf.constant(1.0), use_resource=True)
        with tf.device("/job:worker/task:0"):
            step = tf.add(v.read_value(), tf.constant(1.0), name="step")
        init = v.initializer
    g.finalize()
    sessions = []
    reply = lambda d: (sys.stdout.write(json.dumps(d) + "\n"), sys.stdout.flush())  # noqa: E731
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd["cmd"] == "prepare":
            sessions = [tf.compat.v1.Session(cmd["target"], graph=g) for _ in range(cmd["threads"])]
            sessions[0].run(init)
            for s in sessions:
                assert abs(s.run(step) - 2.0) < 1e-6
            reply({"ok": True})
        elif cmd["cmd"] == "go":
            start, warm, dur = cmd["start_at"], cmd["warmup"], cmd["duration"]
            w0, end = start + warm, start + warm + dur
            lats = [[] for _ in sessions]
            errs = [0]
            first = [None]

            def worker(k):
                s, out = sessions[k], lats[k]
                while time.time() < start:
                    time.sleep(0.001)
                while True:
                    a = time.time()
                    if a >= end:
                        break
                    t0 = time.perf_counter()
                    try:
                        s.run(step)
                    except Exception as e:  # noqa: BLE001
                        errs[0] += 1
                        first[0] = first[0] or f"{type(e).__name__}: {str(e)[:200]}"
                        continue
                    dt = time.perf_counter() - t0
                    if a >= w0 and a + dt <= end:
                        out.append(int(dt * 1e6))

            ts = [threading.Thread(target=worker, args=(k,)) for k in range(len(sessions))]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            reply({"lat_us": [x for lst in lats for x in lst], "errors": errs[0], "first_error": first[0]})
        elif cmd["cmd"] == "close":
            for s in sessions:
                s.close()
            sessions = []
            reply({"ok": True})
        elif cmd["cmd"] == "exit":
            return


class ClientPool:
    def __init__(self, nproc, logdir):
        self.procs = []
        for k in range(nproc):
            err = open(os.path.join(logdir, f"client{k}.log"), "w")
            p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--load_client"], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=err, text=True)
            err.close()
            ffcluster._procs.append(p)
            self.procs.append(p)

    def all(self, cmd, timeout=300):
        for p in self.procs:
            p.stdin.write(json.dumps(cmd) + "\n")
            p.stdin.flush()
        out = []
        for p in self.procs:
            line = p.stdout.readline()
            if not line:
                raise RuntimeError(f"load client {p.pid} exited ({p.poll()}); see its log")
            out.append(json.loads(line))
        return out

    def stop(self):
        for p in self.procs:
            try:
                p.stdin.write(json.dumps({"cmd": "exit"}) + "\n")
                p.stdin.flush()
            except (BrokenPipeError, OSError):
                pass
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()


def pct(xs, q):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def run_load(kind, pool, threads, warmup, duration, logdir, tag):
    c = Cluster(kind, logdir, tag)
    try:
        pool.all({"cmd": "prepare", "target": c.target["worker"], "threads": threads})
        cpu0 = {p: cpu_seconds(p) for p in c.pids()}
        start = time.time() + 0.5
        for p in pool.procs:
            p.stdin.write(json.dumps({"cmd": "go", "start_at": start, "warmup": warmup, "duration": duration}) + "\n")
            p.stdin.flush()
        # CPU of the servers over the measured window only.
        time.sleep(max(0.0, start + warmup - time.time()))
        cpu_w0 = {p: cpu_seconds(p) for p in c.pids()}
        time.sleep(max(0.0, start + warmup + duration - time.time()))
        cpu_w1 = {p: cpu_seconds(p) for p in c.pids()}
        outs = [json.loads(p.stdout.readline()) for p in pool.procs]
        pool.all({"cmd": "close"})
        alive = all(p.poll() is None for p in c.procs.values())
        isa = isa_line(c) if kind == "ferroflow" else None
        del cpu0
    finally:
        c.kill()
    lat = [x for o in outs for x in o["lat_us"]]
    steps = len(lat)
    server_cpu = sum(cpu_w1[p] - cpu_w0[p] for p in cpu_w0)
    return dict(steps_s=steps / duration, p50_us=pct(lat, 0.50), p99_us=pct(lat, 0.99), steps=steps,
                errors=sum(o["errors"] for o in outs),
                first_error=next((o["first_error"] for o in outs if o["first_error"]), None),
                server_cpu_us_per_step=(server_cpu / steps * 1e6) if steps else float("nan"),
                server_cpu_cores=server_cpu / duration, tasks_alive_after=alive, isa=isa)


# ----------------------------------------------------------------------------------------

def main():
    global GUARD, HARD_TIMEOUT_S
    ap = argparse.ArgumentParser()
    ap.add_argument("--load_client", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--duration", type=float, default=10.0)
    ap.add_argument("--warmup", type=float, default=2.0)
    ap.add_argument("--rounds", type=int, default=2, help="load rounds, systems alternating (ABBA...)")
    ap.add_argument("--procs", type=int, default=8)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--flip", action="store_true", help="pin the first input to the worker, not the ps")
    ap.add_argument("--skip_bad", action="store_true")
    ap.add_argument("--only", help="run only the bad inputs whose name contains this")
    ap.add_argument("--hard_timeout", type=float, default=HARD_TIMEOUT_S,
                    help="seconds after which a bad input's step counts as not answered")
    ap.add_argument("--skip_load", action="store_true")
    a = ap.parse_args()
    if a.load_client:
        return load_client()
    HARD_TIMEOUT_S = a.hard_timeout

    GUARD = Guard()
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: sys.exit(1))
    import tensorflow as tf
    tf.get_logger().setLevel("ERROR")
    tf.compat.v1.disable_eager_execution()
    msgs = master_messages()
    logdir = tempfile.mkdtemp(prefix="ff-robust-")
    t_start = time.time()
    cpu = cpu_model()
    binary = ffcluster.binary()
    print(f"CPU: model name: {cpu} ({os.cpu_count()} cores, {meminfo('MemTotal') / 2**30:.1f} GiB); "
          f"load average {os.getloadavg()[0]:.1f}", flush=True)
    print(f"ferroflow binary: {binary}; TensorFlow {tf.__version__}; server logs in {logdir}", flush=True)
    summary = {"cpu": cpu, "tf_version": tf.__version__, "loadavg_start": os.getloadavg()[0]}

    isa = None
    if not a.skip_bad:
        print("\n== 1. Bad inputs (each server's defaults; TF1 Python client on the worker's target) ==", flush=True)
        bad, isa = run_bad_inputs(tf, msgs, logdir, a.flip, a.only)
        summary["isa"] = isa
        print(f"ISA: {isa}")
        hdr = f"{'input':<40} {'pinned':<7} {'system':<10} {'status code':<20} {'s':>5} {'peak RSS ps/wk GiB':>18}  tasks after"
        print(hdr)
        print("-" * len(hdr))
        for k in range(len(bad["ferroflow"])):
            for s in ("ferroflow", "tensorflow"):
                r = bad[s][k]
                fates = ", ".join(f"{j} {f}" for j, f in r["fates"].items())
                rss = f"{r['peak_rss_gib']['ps']:.2f}/{r['peak_rss_gib']['worker']:.2f}"
                name = r["input"] if s == "ferroflow" else ""
                dev = r["device"].split("/")[1][4:] if s == "ferroflow" else ""
                print(f"{name:<40} {dev:<7} {s:<10} {r['code']:<20} {r['seconds']:>5.1f} {rss:>18}  {fates}")
        print("\nMessages:")
        for k in range(len(bad["ferroflow"])):
            print(f"  {bad['ferroflow'][k]['input']} ({bad['ferroflow'][k]['via']}):")
            for s in ("ferroflow", "tensorflow"):
                r = bad[s][k]
                print(f"    {s:<10} {r['code']}: {short(r['message'], 230)}")
                for j, tail in r["log_tail"].items():
                    for ln in tail:
                        print(f"      {j} log| {short(ln, 200)}")
        summary["bad_inputs"] = {}
        for s in ("ferroflow", "tensorflow"):
            rs = bad[s]
            killed = sum(1 for r in rs for f in r["fates"].values() if f.startswith("DIED"))
            silent = sum(1 for r in rs for f in r["fates"].values() if f.startswith("alive, no answer"))
            hung = sum(1 for r in rs if r["code"] == "NO ANSWER")
            inputs_bad = sum(1 for r in rs if any(f != "up" for f in r["fates"].values()))
            summary["bad_inputs"][s] = dict(tasks_killed=killed, tasks_silent=silent, inputs_that_hurt=inputs_bad,
                                            steps_without_answer=hung, results=rs)
            print(f"{s}: {killed} tasks killed, {silent} alive but not answering, {inputs_bad} of {len(rs)} inputs "
                  f"hurt a task; {hung} steps got no answer within {HARD_TIMEOUT_S:.0f} s")

    if not a.skip_load:
        print(f"\n== 2. Load: {a.procs * a.threads} concurrent TF1 Python clients ({a.procs} processes x {a.threads} "
              f"threads), {a.warmup:g} s warm-up + {a.duration:g} s ==", flush=True)
        pool = ClientPool(a.procs, logdir)
        try:
            order = []
            for r in range(a.rounds):
                order += [("ferroflow", "tensorflow"), ("tensorflow", "ferroflow")][r % 2]
            runs = {"ferroflow": [], "tensorflow": []}
            for n, kind in enumerate(order):
                res = run_load(kind, pool, a.threads, a.warmup, a.duration, logdir, f"load{n}")
                runs[kind].append(res)
                print(f"  round {n // 2 + 1} {kind:<10} {res['steps_s']:7.0f} steps/s, p50 {res['p50_us']} us, "
                      f"p99 {res['p99_us']} us, server CPU {res['server_cpu_us_per_step']:.0f} us/step "
                      f"({res['server_cpu_cores']:.2f} cores), {res['errors']} errors", flush=True)
        finally:
            pool.stop()

        def med(kind, key):
            return statistics.median(r[key] for r in runs[kind])

        rows = [("throughput (steps/s)", "steps_s", True), ("latency p50 (us)", "p50_us", False),
                ("latency p99 (us)", "p99_us", False), ("server CPU per step, ps+worker (us)", "server_cpu_us_per_step", False),
                ("server CPU used (cores)", "server_cpu_cores", None), ("failed steps", "errors", None)]
        print(f"{'metric' + (' (median of rounds)' if a.rounds > 1 else ''):<40} {'ferroflow':>12} {'TF 2.21':>12} {'ferroflow/TF':>13} {'ferroflow advantage':>20}")
        summary["load"] = {"clients": a.procs * a.threads, "warmup_s": a.warmup, "duration_s": a.duration,
                           "rounds": a.rounds, "runs": runs}
        for name, key, higher in rows:
            f, t = med("ferroflow", key), med("tensorflow", key)
            ratio = f / t if t else float("nan")
            adv = "" if higher is None or not t or not f else f"{(ratio if higher else 1 / ratio):.2f}x"
            rs = f"{ratio:>13.2f}" if t else f"{'-':>13}"
            print(f"{name:<40} {f:>12.1f} {t:>12.1f} {rs} {adv:>20}")
            summary["load"][key] = {"ferroflow": f, "tensorflow": t, "ratio_ff_over_tf": ratio if t else None}
        for kind in runs:
            for r in runs[kind]:
                if r["first_error"]:
                    print(f"  {kind} first error: {r['first_error']}")
                if not r["tasks_alive_after"]:
                    print(f"  {kind}: a task died during the load run")
    if isa is None and not a.skip_load:
        isa = runs["ferroflow"][0]["isa"]
        print(f"ISA: {isa}")
    summary["isa"] = isa
    summary["loadavg_end"] = os.getloadavg()[0]
    summary["runtime_s"] = round(time.time() - t_start, 1)
    print(f"\nruntime {summary['runtime_s']} s; load average {os.getloadavg()[0]:.1f} at the end")
    print("JSON " + json.dumps(summary))


if __name__ == "__main__":
    try:
        main()
    finally:
        if GUARD is not None:
            GUARD.stop = True
