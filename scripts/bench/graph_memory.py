"""Memory per graph node, ferroflow vs TensorFlow 2.21 (issue #22 item 2).

Starts a single-task `ferroflow server` and a single-task TensorFlow server
(tf.distribute.Server), each its own process, and on each:

  session   TensorFlow's TF1 client (`tf.compat.v1.Session(target)`) sends an N-node graph
            (a Placeholder, then a chain of Const -> AddV2 -> Identity with TensorFlow's
            attrs and distinct values, so no two nodes are alike) and fetches the chain's end: the
            master keeps the session graph, prunes, places, partitions and registers the
            partition with the task's worker, which creates every kernel;
  session-noopt  the same with TensorFlow's graph rewrites off in the session config
            (Grappler and the classic optimizer): with them on, TensorFlow's master folds
            the chain and registers a handful of nodes, so only this mode has both tasks
            register every node (ferroflow does not fold either way);
  register  the same nodes placed on the task's CPU, sent straight to the worker service
            (WorkerService.RegisterGraph, the legacy session): the worker alone.

Each mode gets fresh servers. A 31-node session runs first (warm-up: thread pools, lazily
built tables), then the server's RSS (VmRSS in /proc/PID/status) is read, the big graph is
sent, and RSS is read again after 2 s (and the peak, VmHWM). Prints bytes per node for
both servers and the ratio, with the CPU model, and (session mode) how many nodes each
task registered (`RunOptions.output_partition_graphs`, asked after the RSS is read).

Usage: .venv/bin/python scripts/bench/graph_memory.py [--nodes 100000] [--modes session,session-noopt,register]
(the binary: $FERROFLOW_BIN, else $CARGO_TARGET_DIR/release/ferroflow, else target/release)
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "compat"))
import ffcluster  # noqa: E402
from robustness_cluster import cpu_model  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import grpc  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.core.framework import graph_pb2  # noqa: E402

DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"
FEED = {"input:0": 1.0}


def status_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/{pid}/status")


def chain_graph(nodes, device=""):
    """A Placeholder `input`, then (`nodes` - 1) / 3 links Const -> AddV2 -> Identity, each
    AddV2 taking the previous Identity and its own Const (all values distinct), under
    TensorFlow-like scope names: nothing can be folded or merged, so both servers register
    every node. Returns the GraphDef and the name of the chain's last node."""
    gd = graph_pb2.GraphDef()
    gd.versions.producer = 1994
    p = gd.node.add(name="input", op="Placeholder", device=device)
    p.attr["dtype"].type = tf.float32.as_datatype_enum
    p.attr["shape"].shape.SetInParent()
    prev = "input"
    for i in range((nodes - 1) // 3):
        scope = f"layer_{i // 1000}"
        c = gd.node.add(name=f"{scope}/Const_{i}", op="Const", device=device)
        c.attr["dtype"].type = tf.float32.as_datatype_enum
        c.attr["value"].tensor.dtype = tf.float32.as_datatype_enum
        c.attr["value"].tensor.tensor_shape.SetInParent()
        c.attr["value"].tensor.float_val.append(float(i))
        a = gd.node.add(name=f"{scope}/add_{i}", op="AddV2", device=device)
        a.input.extend([prev, c.name])
        a.attr["T"].type = tf.float32.as_datatype_enum
        d = gd.node.add(name=f"{scope}/Identity_{i}", op="Identity", device=device)
        d.input.append(a.name)
        d.attr["T"].type = tf.float32.as_datatype_enum
        prev = d.name
    return gd, prev


def no_optimizations():
    """A session config with TensorFlow's graph rewrites off (Grappler and the classic
    optimizer: no constant folding, no common subexpression elimination)."""
    c = tf.compat.v1.ConfigProto()
    c.graph_options.rewrite_options.disable_meta_optimizer = True
    c.graph_options.optimizer_options.opt_level = tf.compat.v1.OptimizerOptions.L0
    c.graph_options.optimizer_options.do_constant_folding = False
    c.graph_options.optimizer_options.do_common_subexpression_elimination = False
    return c


def run_session(target, gd, fetch, config=None):
    """Runs the chain twice (the first run registers its partition); returns the session,
    the value, both times and the graph's bytes."""
    g = tf.Graph()
    with g.as_default():
        tf.graph_util.import_graph_def(gd, name="")
    t0 = time.perf_counter()
    sess = tf.compat.v1.Session(target, graph=g, config=config)
    value = sess.run(fetch + ":0", FEED)
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    sess.run(fetch + ":0", FEED)
    step = time.perf_counter() - t0
    return sess, value, first, step, len(g.as_graph_def().SerializeToString())


def registered_nodes(sess, fetch):
    """Nodes of the partition graphs the task registered for the step."""
    meta = tf.compat.v1.RunMetadata()
    opts = tf.compat.v1.RunOptions(output_partition_graphs=True)
    sess.run(fetch + ":0", FEED, options=opts, run_metadata=meta)
    return sum(len(p.node) for p in meta.partition_graphs)


def field(num, wire, payload):
    """One protobuf field (wire type 0 varint or 2 bytes)."""
    def varint(v):
        out = bytearray()
        while True:
            b = v & 0x7F
            v >>= 7
            out.append(b | (0x80 if v else 0))
            if not v:
                return bytes(out)
    key = varint(num << 3 | wire)
    return key + (varint(payload) if wire == 0 else varint(len(payload)) + payload)


def register(target, gd):
    """WorkerService.RegisterGraph in the legacy session (RegisterGraphRequest encoded by
    hand: graph_def = 2); returns the graph handle and the seconds it took."""
    req = field(2, 2, gd.SerializeToString())
    ch = grpc.insecure_channel(target.replace("grpc://", ""),
                               options=[("grpc.max_send_message_length", -1),
                                        ("grpc.max_receive_message_length", -1)])
    call = ch.unary_unary("/tensorflow.WorkerService/RegisterGraph")
    t0 = time.perf_counter()
    resp = call(req, timeout=600)
    took = time.perf_counter() - t0
    return ch, resp, took, len(req)


def measure(kind, mode, nodes):
    port = ffcluster.free_ports(1)[0]
    if kind == "tensorflow":
        proc = ffcluster.tf_server({"localhost": [f"127.0.0.1:{port}"]}, "localhost", 0)
        ffcluster.wait_port(port, proc)
        pid, target, stop = proc.pid, f"grpc://127.0.0.1:{port}", proc.kill
    else:
        s = ffcluster.Server("--port", str(port))
        pid, target, stop = s.proc.pid, s.target, s.kill
    try:
        small, small_fetch = chain_graph(31)
        warm = run_session(target, small, small_fetch)[0]
        warm.close()
        time.sleep(1.0)
        before = status_kib(pid, "VmRSS")
        gd, fetch = chain_graph(nodes, DEVICE if mode == "register" else "")
        keep = None
        if mode.startswith("session"):
            config = no_optimizations() if mode == "session-noopt" else None
            keep, value, first, step, wire = run_session(target, gd, fetch, config)
            detail = f"first run {first:.2f} s, next step {step * 1e3:.1f} ms, value {value}"
        else:
            keep, _, first, wire = register(target, gd)
            detail = f"RegisterGraph {first:.2f} s"
        time.sleep(2.0)
        after = status_kib(pid, "VmRSS")
        peak = status_kib(pid, "VmHWM")
        if mode.startswith("session"):
            detail = f"{registered_nodes(keep, fetch)} nodes registered; " + detail
        del keep
        return {"before": before, "after": after, "peak": peak, "wire": wire, "detail": detail}
    finally:
        stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=100_000)
    ap.add_argument("--modes", default="session,session-noopt,register")
    args = ap.parse_args()
    nodes = args.nodes - (args.nodes - 1) % 3
    print(f"cpu: {cpu_model()}; nodes: {nodes}; ferroflow: {ffcluster.binary()}; tensorflow {tf.__version__}")
    for mode in args.modes.split(","):
        res = {}
        for kind in ("ferroflow", "tensorflow"):
            r = measure(kind, mode, nodes)
            res[kind] = r
            per = (r["after"] - r["before"]) * 1024 / nodes
            peak = (r["peak"] - r["before"]) * 1024 / nodes
            print(f"{mode:13s} {kind:10s} graph {r['wire'] / 1e6:.2f} MB on the wire; RSS {r['before'] / 1024:.1f} -> "
                  f"{r['after'] / 1024:.1f} MiB (peak {r['peak'] / 1024:.1f}): {per:,.0f} B/node "
                  f"(peak {peak:,.0f} B/node); {r['detail']}", flush=True)
        ff, tfr = res["ferroflow"], res["tensorflow"]
        ratio = (ff["after"] - ff["before"]) / max(1, tfr["after"] - tfr["before"])
        peak_ratio = (ff["peak"] - ff["before"]) / max(1, tfr["peak"] - tfr["before"])
        print(f"{mode:13s} ferroflow/TensorFlow bytes per node: {ratio:.2f}x (peak {peak_ratio:.2f}x)", flush=True)


if __name__ == "__main__":
    main()
