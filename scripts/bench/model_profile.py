"""Where a model's training step spends its time, node by node, on ferroflow or on
TensorFlow 2.21 (issue #41): the model_ratio.py models and trainer (ps + worker, or one
process with --layout single), traced with RunOptions(trace_level=FULL_TRACE) and the
step stats of each node summed over the traced steps (the worker's devices; wall time of
each node from its start to the end of its outputs).

  .venv/bin/python scripts/bench/model_profile.py mobilenetv2 ff --steps 5 --out ff.json
  .venv/bin/python scripts/bench/model_profile.py mobilenetv2 tf --steps 5 --out tf.json
  .venv/bin/python scripts/bench/model_profile.py --compare ff.json tf.json [--top 40]

The first two print the top nodes and op types; --compare lines up two runs by node name
and prints the nodes whose time differs most, then totals by op type.
"""

import argparse
import collections
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import model_ratio  # noqa: E402  (sets TensorFlow's environment up)


def profile(args):
    import tensorflow as tf
    import tf_keras as keras
    tf.compat.v1.disable_eager_execution()
    single = args.layout == "single"
    if args.system == "tf":
        procs, _, target = model_ratio.tf_cluster(single)
    else:
        procs, _, target = model_ratio.ff_cluster(single, model_ratio.ffcluster.binary())
    try:
        t = model_ratio.Trainer(tf, keras, model_ratio.MODELS[args.model], target, single)
        t.steps(args.warmup)
        opts = tf.compat.v1.RunOptions(timeout_in_ms=600_000, trace_level=tf.compat.v1.RunOptions.FULL_TRACE)
        per_node = collections.defaultdict(float)
        op_of = {}
        walls = []
        for _ in range(args.steps):
            md = tf.compat.v1.RunMetadata()
            import time
            t0 = time.perf_counter()
            t.sess.run([t.loss, t.train], feed_dict=t.feed, options=opts, run_metadata=md)
            walls.append(time.perf_counter() - t0)
            for dev in md.step_stats.dev_stats:
                if "/job:ps" in dev.device:
                    continue
                for ns in dev.node_stats:
                    name = ns.node_name.split(":")[0]
                    per_node[name] += ns.all_end_rel_micros / 1000.0
                    label = ns.timeline_label
                    if "=" in label and "(" in label:
                        op_of[name] = label.split("=", 1)[1].strip().split("(", 1)[0]
        # Transfers and the receives that wait for them measure waiting, not work.
        per_node = {k: v / args.steps for k, v in per_node.items()
                    if k in op_of and op_of[k] not in ("_Recv", "_HostRecv", "_Send", "_HostSend")}
        result = {"system": args.system, "model": args.model, "wall_ms": 1000 * sorted(walls)[len(walls) // 2],
                  "nodes": per_node, "ops": op_of}
        show(result, args.top)
        if args.out:
            with open(args.out, "w") as f:
                json.dump(result, f)
        t.sess.close()
    finally:
        model_ratio.ffcluster.stop(procs)


def op_family(op):
    """TensorFlow's oneDNN rewrites (`_MklNativeConv2D`) and both systems' fusions
    (`_FusedBatchNormEx`) under one name, so that op types line up."""
    for p in ("_MklNative", "_Mkl"):
        if op.startswith(p):
            op = op[len(p):]
    return {"_FusedBatchNormEx": "FusedBatchNormV3", "_FusedBatchNormGradEx": "FusedBatchNormGradV3",
            "_FusedConv2D": "Conv2D", "FusedConv2D": "Conv2D", "_FusedMatMul": "MatMul", "FusedMatMul": "MatMul"}.get(op, op)


def by_op(r):
    out = collections.defaultdict(float)
    for k, v in r["nodes"].items():
        out[op_family(r["ops"].get(k, "?"))] += v
    return out


def show(r, top):
    print(f"# {r['system']} {r['model']}: median traced step {r['wall_ms']:.1f} ms, "
          f"node time {sum(r['nodes'].values()):.1f} ms")
    for k, v in sorted(r["nodes"].items(), key=lambda kv: -kv[1])[:top]:
        print(f"{v:9.3f} ms  {r['ops'].get(k, '?'):28s} {k}")
    print("# by op type")
    for k, v in sorted(by_op(r).items(), key=lambda kv: -kv[1])[:top]:
        print(f"{v:9.3f} ms  {k}")


def compare(a_path, b_path, top):
    a, b = (json.load(open(p)) for p in (a_path, b_path))
    print(f"# {a['system']} {a['wall_ms']:.1f} ms vs {b['system']} {b['wall_ms']:.1f} ms per traced step")
    names = set(a["nodes"]) | set(b["nodes"])
    diff = sorted(names, key=lambda n: -(a["nodes"].get(n, 0) - b["nodes"].get(n, 0)))
    print(f"# nodes where {a['system']} spends most more than {b['system']}")
    for n in diff[:top]:
        op = a["ops"].get(n) or b["ops"].get(n, "?")
        print(f"{a['nodes'].get(n, 0):9.3f} {b['nodes'].get(n, 0):9.3f}  {op:28s} {n}")
    print("# by op type")
    oa, ob = by_op(a), by_op(b)
    for k in sorted(set(oa) | set(ob), key=lambda k: -(oa.get(k, 0) - ob.get(k, 0)))[:top]:
        print(f"{oa.get(k, 0):9.3f} {ob.get(k, 0):9.3f}  {k}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model", nargs="?", choices=list(model_ratio.MODELS))
    ap.add_argument("system", nargs="?", choices=("ff", "tf"))
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--layout", choices=("cluster", "single"), default="cluster")
    ap.add_argument("--out")
    ap.add_argument("--compare", nargs=2, metavar=("A", "B"))
    args = ap.parse_args()
    if args.compare:
        compare(*args.compare, args.top)
    elif args.model and args.system:
        profile(args)
    else:
        ap.error("give a model and a system, or --compare A B")


if __name__ == "__main__":
    main()
