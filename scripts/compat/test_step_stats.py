"""Step traces from TensorFlow's Python client: `RunOptions(trace_level=...)` on a cluster of
1 ps + 2 workers returns `RunMetadata.step_stats` with each device that ran and each node it
ran, as TensorFlow's servers do, and TensorFlow's own `timeline.Timeline` turns it into a
Chrome trace. Run on a TensorFlow cluster and a ferroflow cluster of the same shape; what
must be equal: the (device, node) pairs of the named nodes, the partition graphs' devices,
and the ops and number of inputs the timeline shows for them. (TensorFlow's distributed
master traces only FULL_TRACE; ferroflow traces SOFTWARE_TRACE too, as TensorFlow's local
sessions do.) On ferroflow, a
cross-task step also records its RPCs (`RecvTensor`, with bytes and peers), times are
consistent (every node inside the step's span) and threads are named."""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

MODE = sys.argv[1] if len(sys.argv) > 1 else None
# (Not the Identity `w_read`: TensorFlow's graph optimizer removes it, ferroflow runs it.)
NAMED = ("cps", "c0", "c1", "prod", "total", "wupd")


def scenarios(target):
    tf = ffcluster.tf_in_mode(MODE)
    from tensorflow.python.client import timeline

    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:ps/task:0"):
            w = tf.compat.v1.get_variable("w", initializer=tf.ones([4, 4]), use_resource=True)
            cps = tf.constant(2.0, name="cps")
            w_read = tf.identity(w.read_value(), name="w_read")
        with tf.device("/job:worker/task:0"):
            c0 = tf.constant([[1.0, 2.0, 3.0, 4.0]], name="c0")
            prod = tf.matmul(c0, w_read, name="prod")
        with tf.device("/job:worker/task:1"):
            c1 = tf.constant(3.0, name="c1")
            total = tf.multiply(tf.reduce_sum(prod) * c1, cps, name="total")
        with tf.device("/job:ps/task:0"), tf.control_dependencies([total]):
            wupd = w.assign_add(tf.ones([4, 4]) * 0.5, name="wupd", read_value=False)
        out = {}
        with tf.compat.v1.Session(target) as sess:
            sess.run(w.initializer)
            for level in ("NO_TRACE", "SOFTWARE_TRACE", "FULL_TRACE"):
                opts = tf.compat.v1.RunOptions(trace_level=getattr(tf.compat.v1.RunOptions, level),
                                               output_partition_graphs=True)
                md = tf.compat.v1.RunMetadata()
                value = sess.run([total, wupd], options=opts, run_metadata=md)[0]
                pairs = sorted({(d.device, n.node_name) for d in md.step_stats.dev_stats for n in d.node_stats
                                if n.node_name in NAMED})
                parts = sorted({n.device for pg in md.partition_graphs for n in pg.node if n.device})
                shown = None
                if level == "FULL_TRACE":
                    # Before Timeline, which rewrites thread ids into its own lanes.
                    out["_raw"] = md.step_stats.SerializeToString()
                if md.step_stats.dev_stats:
                    trace = json.loads(timeline.Timeline(md.step_stats).generate_chrome_trace_format(
                        show_dataflow=True, show_memory=True))
                    # On CPUs where oneDNN takes over, TensorFlow's timeline names its kernel
                    # (`_MklMatMul`); the op is still MatMul.
                    shown = sorted({(e["args"]["name"], e["args"]["op"].removeprefix("_Mkl"),
                                     len([k for k in e["args"] if k.startswith("input")]))
                                    for e in trace["traceEvents"]
                                    if e.get("ph") == "X" and e["args"].get("name") in NAMED})
                out[level] = {"value": float(value), "pairs": pairs, "partition_devices": parts, "timeline": shown}
        return out


def check_ferroflow_extras(raw):
    """What TensorFlow's own servers do not show the same way: RPC records, consistent times,
    thread names."""
    from tensorflow.core.framework import step_stats_pb2

    st = step_stats_pb2.StepStats.FromString(raw)
    recvs = [n for d in st.dev_stats for n in d.node_stats if n.node_name == "RecvTensor"]
    assert recvs, "a cross-task step records its RecvTensor calls"
    assert all("B] " in n.timeline_label and " from /job:" in n.timeline_label and " to /job:" in n.timeline_label
               for n in recvs), [n.timeline_label for n in recvs]
    starts = [n.all_start_micros for d in st.dev_stats for n in d.node_stats]
    ends = [n.all_start_micros + n.all_end_rel_micros for d in st.dev_stats for n in d.node_stats]
    assert max(ends) - min(starts) < 60_000_000, "one step's records span under a minute"
    for d in st.dev_stats:
        assert set(n.thread_id for n in d.node_stats) <= set(d.thread_names), d.device
        for n in d.node_stats:
            assert n.all_end_rel_micros >= n.op_end_rel_micros >= n.op_start_rel_micros >= 0, n
            if n.node_name == "prod":
                desc = n.output[0].tensor_description
                assert list(d.size for d in desc.shape.dim) == [1, 4] and desc.allocation_description.requested_bytes == 16
    print(f"  ferroflow: {len(recvs)} RecvTensor records; "
          f"{sum(len(d.node_stats) for d in st.dev_stats)} records on {len(st.dev_stats)} devices")


def run_mode(mode):
    global MODE
    MODE = mode
    want, got = ffcluster.on_both([("ps", 1), ("worker", 2)], scenarios)
    check_ferroflow_extras(got.pop("_raw"))
    want.pop("_raw")
    for level in want:
        print(f"{mode} {level}: TensorFlow {want[level]}")
        # TensorFlow's distributed master traces only FULL_TRACE; ferroflow traces every
        # level above NO_TRACE (as TensorFlow's local sessions do), the same way.
        expect = dict(want["FULL_TRACE"], value=want[level]["value"]) if level == "SOFTWARE_TRACE" else want[level]
        assert expect == got[level], f"{level}: ferroflow gave {got[level]}"


if __name__ == "__main__":
    ffcluster.main(__file__, run_mode)
