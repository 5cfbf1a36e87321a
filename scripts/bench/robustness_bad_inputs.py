"""Part 1 of scripts/bench/robustness.py: bad inputs, ferroflow vs TensorFlow 2.21.

Each request below is sent to both clusters (robustness_cluster.Cluster: one ps, one worker,
each server with its defaults) through the worker's master, its op pinned to /job:ps and
/job:worker alternately (--flip swaps them). Afterwards every task is checked: is its process
alive, and does it answer a small step (a raw CreateSession + RunStep on its own master,
Const+Const+Add on itself, 20 s deadline)? A cluster with a dead or silent task is replaced by
a fresh one before the next input. The inputs (as crates/ferroflow/tests/server_process.rs's
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
Reported per input and system: the status code, the message (shortened), the seconds, each
task's peak resident memory while the input ran (sampled by the memory guard), and each
task's fate; a server killed by the memory guard is reported as a death.
"""

import sys
import threading
import time

import robustness_cluster as rc
from robustness_cluster import Cluster, RawMaster, code_name, isa_line

STEP_TIMEOUT_S = 30.0      # RunOptions.timeout_in_ms of a bad input's step
HARD_TIMEOUT_S = 60.0      # the client thread is abandoned after this (robustness.py --hard_timeout)


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
            if p.pid in rc.GUARD.killed:
                how += f", memory guard at RSS {rc.GUARD.killed[p.pid] / 2**30:.1f} GiB"
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
                    rc.GUARD.reset_peak(pid)
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
                peak = {j: rc.GUARD.peak.get(p.pid, 0) for j, p in c.procs.items()}
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

def run_section(tf, msgs, logdir, flip, only=None):
    """Runs every bad input on both systems and prints the table and the messages; returns
    (the ISA line of ferroflow's ps, the "bad_inputs" part of the JSON summary)."""
    print("\n== 1. Bad inputs (each server's defaults; TF1 Python client on the worker's target) ==", flush=True)
    bad, isa = run_bad_inputs(tf, msgs, logdir, flip, only)
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
    summary = {}
    for s in ("ferroflow", "tensorflow"):
        rs = bad[s]
        killed = sum(1 for r in rs for f in r["fates"].values() if f.startswith("DIED"))
        silent = sum(1 for r in rs for f in r["fates"].values() if f.startswith("alive, no answer"))
        hung = sum(1 for r in rs if r["code"] == "NO ANSWER")
        inputs_bad = sum(1 for r in rs if any(f != "up" for f in r["fates"].values()))
        summary[s] = dict(tasks_killed=killed, tasks_silent=silent, inputs_that_hurt=inputs_bad,
                          steps_without_answer=hung, results=rs)
        print(f"{s}: {killed} tasks killed, {silent} alive but not answering, {inputs_bad} of {len(rs)} inputs "
              f"hurt a task; {hung} steps got no answer within {HARD_TIMEOUT_S:.0f} s")
    return isa, summary
