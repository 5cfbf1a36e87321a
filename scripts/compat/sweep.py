#!/usr/bin/env python3
"""The op-coverage sweep: builds public TensorFlow functions, every tf_keras layer and
application model in graph mode with TensorFlow 2.21's client, and checks each on ferroflow.

    .venv/bin/python scripts/compat/sweep.py --ops-only        # which ops ferroflow lacks
    .venv/bin/python scripts/compat/sweep.py                   # run everything, both sides
    .venv/bin/python scripts/compat/sweep.py --filter 'layers\\.' --write docs/op-coverage.md
    .venv/bin/python scripts/compat/sweep.py --filter 'Conv3D' --merge docs/op-coverage.md

`--ops-only` needs no cluster: it lists, per case, the op types its graph holds (forward,
gradient and update ops, function bodies included) that the built `ferroflow` binary cannot
run (`ferroflow ops --missing`). The full sweep starts a ferroflow ps + worker cluster, runs
each case there (variables on the ps through `replica_device_setter`, with TensorFlow's
initial values) and in a local TensorFlow session, and compares every output and gradient
(relative error to the largest magnitude <= 1e-4; shapes only for cases that draw unseeded
random numbers). `--write FILE` writes the coverage table of the cases run; `--merge FILE`
updates an existing table with them (their rows replaced, the others kept).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time
import traceback

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# Keras 2 (tf_keras) behind tf.keras and tf.compat.v1.nn.rnn_cell, as TF 1.x programs expect.
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "sweep"))

import numpy as np  # noqa: E402

import ffcluster  # noqa: E402
import harness  # noqa: E402

RTOL = 1e-4
# A tensor TensorFlow itself moves by s under a 1e-6 relative change of its float inputs may
# differ from TensorFlow by up to SPREAD_X * s.
PERTURB = 1e-6
SPREAD_X = 4.0


def first_line(e):
    """The first line of an error that says something (TensorFlow's 'Graph execution error'
    and its traceback of this machine's paths are left out)."""
    text = str(e)
    lines = [ln.strip() for ln in text.splitlines()
             if ln.strip() and "Graph execution error" not in ln and not ln.strip().startswith(("File ", "Detected at"))]
    if lines:
        return lines[0]
    return text.splitlines()[0] if text.strip() else type(e).__name__


def tf_spread(tf, case, values, ref, ref_losses):
    """Per output and per loss: TensorFlow's relative change when the case's float feeds are
    scaled by (1 + PERTURB), from the same variable values; None if it cannot be measured."""
    try:
        g, parts = harness.build_graph(tf, case)
        parts["feeds"] = {p: (v * (1 + PERTURB)).astype(v.dtype) if np.asarray(v).dtype.kind == "f" else v
                          for p, v in parts["feeds"].items()}
        with tf.compat.v1.Session(graph=g) as s:
            _, moved, moved_losses = harness.run_parts(tf, s, parts, var_values=values, steps=3)
    except Exception:  # noqa: BLE001 - no second chance then
        return None
    return ([harness.compare(a, b)[0] for a, b in zip(moved, ref)],
            [harness.compare(a, b)[0] for a, b in zip(moved_losses, ref_losses)])


def all_cases():
    import cases_apps
    import cases_funcs
    import cases_layers
    return cases_funcs.cases() + cases_layers.cases() + cases_apps.cases()


def missing_ops(names):
    if not names:
        return set()
    out = subprocess.run([ffcluster.binary(), "ops", "--missing", *names], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def run_case(tf, case, target, ops_only):
    row = {"case": case.name, "ops": [], "missing": [], "status": "", "err": None, "detail": ""}
    try:
        g, parts = harness.build_graph(tf, case)
    except Exception as e:  # noqa: BLE001 - a case TensorFlow itself cannot build
        row["status"] = "not built"
        row["detail"] = f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"
        return row
    row["ops"] = harness.graph_ops(g.as_graph_def())
    row["missing"] = sorted(missing_ops(row["ops"]))
    if ops_only:
        row["status"] = "missing ops" if row["missing"] else "ops present"
        return row
    with tf.compat.v1.Session(graph=g) as s:
        values, ref, ref_losses = harness.run_parts(tf, s, parts, steps=3)
    setter = tf.compat.v1.train.replica_device_setter(ps_tasks=1, worker_device="/job:worker/task:0")
    try:
        g2, parts2 = harness.build_graph(tf, case, device_fn=setter)
    except tf.errors.InvalidArgumentError:
        # tf_keras ran its own local session while building (MobileNetV3) and could not place
        # the ps variables: build again with a session on the cluster, as a cluster user would.
        g2, parts2 = harness.build_graph(tf, case, device_fn=setter, target=target)
    try:
        config = tf.compat.v1.ConfigProto(allow_soft_placement=True) if case.soft else None
        with tf.compat.v1.Session(target, graph=g2, config=config) as s:
            _, got, losses = harness.run_parts(tf, s, parts2, var_values=values, steps=3)
    except Exception as e:  # noqa: BLE001 - ferroflow's error is the result
        msg = first_line(e)
        row["status"] = "missing ops" if row["missing"] else "error"
        row["detail"] = f"{type(e).__name__}: {msg[:240]}"
        return row
    errs = [harness.compare(a, b) for a, b in zip(got, ref)] if not case.random else []
    if case.random and any(np.asarray(a).shape != np.asarray(b).shape for a, b in zip(got, ref)):
        errs = [(float("inf"), "shape")]
    loss_errs = [harness.compare(a, b) for a, b in zip(losses, ref_losses)]
    worst, why = max(errs + [(e, w or "train losses") for e, w in loss_errs], key=lambda t: t[0], default=(0.0, ""))
    row["err"] = worst
    if worst <= RTOL:
        row["status"] = "equal" if not case.random else "equal (shapes; random)"
        return row
    # Second chance: how far TensorFlow itself moves when its float inputs change by one part
    # in 10^6. A gradient that is zero in exact arithmetic (a bias before batch norm, the input
    # of a standardization) is rounding noise on both sides, and a deep network trained a few
    # steps amplifies rounding; such tensors are compared against TensorFlow's own spread.
    spread = tf_spread(tf, case, values, ref, ref_losses) if not case.random else None
    if spread is not None:
        out_spread, loss_spread = spread
        within = all(e <= max(RTOL, SPREAD_X * sp) for (e, _), sp in zip(errs, out_spread)) and all(
            e <= max(RTOL, SPREAD_X * sp) for (e, _), sp in zip(loss_errs, loss_spread))
        if within:
            row["status"] = "equal (within TF's own spread)"
            row["detail"] = f"max rel err {worst:.2e}; TensorFlow's own spread up to {max(out_spread + loss_spread):.2e}"
            return row
    row["status"] = "differs"
    row["detail"] = why or f"max rel err {worst:.2e}"
    return row


def read_table(path):
    """The rows of a table `write_table` wrote (case, status, detail), in order."""
    rows = []
    with open(path) as f:
        for line in f:
            m = re.match(r"^\| `([^`]+)` \| ([^|]+) \| (.*) \|$", line.rstrip("\n"))
            if m:
                rows.append({"case": m.group(1), "status": m.group(2).strip(), "missing": [],
                             "detail": m.group(3).replace("\\|", "|")})
    return rows


def merge_rows(old, new):
    """`old` rows with those of the same case replaced by `new` ones; new cases appended."""
    fresh = {r["case"]: r for r in new}
    out = [fresh.pop(r["case"], r) for r in old]
    return out + list(fresh.values())


def write_table(rows, path, filt=""):
    by = {}
    for r in rows:
        by.setdefault(r["status"], 0)
        by[r["status"]] += 1
    ok = sum(v for k, v in by.items() if k.startswith("equal"))
    lines = [
        "# Op coverage: the sweep",
        "",
        "Written by `scripts/compat/sweep.py --write docs/op-coverage.md` (do not edit by hand): each public",
        "function, `tf_keras` layer and `tf_keras.applications` model below is built in graph mode with",
        "TensorFlow 2.21's client, run with its gradient (and, for models and optimizers, three training",
        "steps) on a ferroflow ps + worker cluster and in a local TensorFlow session, and compared",
        f"(relative error to the largest magnitude <= {RTOL:g}). A case that differs gets a second",
        f"chance: TensorFlow runs again with its float inputs scaled by 1 + {PERTURB:g}, and each",
        f"tensor may differ from TensorFlow by up to {SPREAD_X:g}x how far TensorFlow itself moved",
        "(\"equal (within TF's own spread)\": gradients that are zero in exact arithmetic, and",
        "training steps of networks that amplify rounding). Variables start from fresh random",
        "values on every run, so such cases can change status between runs.",
        "",
        (f"Cases run: those whose name matches `{filt}`. " if filt else "")
        + "Missing ops of the cases not run are listed by `sweep.py --ops-only`.",
        "",
        f"**{ok} of {len(rows)} cases equal TensorFlow.** "
        + ", ".join(f"{k}: {v}" for k, v in sorted(by.items())),
        "",
        "| case | result | ops ferroflow lacks / detail |",
        "|---|---|---|",
    ]
    for r in rows:
        detail = ", ".join(r["missing"]) if r["missing"] else r["detail"]
        detail = " ".join((first_line(detail) if detail else "").split()).replace("|", "\\|")
        lines.append(f"| `{r['case']}` | {r['status']} | {detail} |")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ops-only", action="store_true")
    ap.add_argument("--filter", default="")
    ap.add_argument("--write")
    ap.add_argument("--merge", help="update this table: the cases run replace their rows, the rest stay")
    ap.add_argument("--json")
    a = ap.parse_args()
    import tensorflow as tf
    tf.compat.v1.disable_eager_execution()
    cases = [c for c in all_cases() if re.search(a.filter, c.name)]
    target = None
    if not a.ops_only:
        servers, _ = ffcluster.cluster({"ps": 1, "worker": 1})
        target = servers["worker"][0].target
    rows = []
    for c in cases:
        t0 = time.time()
        try:
            r = run_case(tf, c, target, a.ops_only)
        except Exception as e:  # noqa: BLE001
            r = {"case": c.name, "ops": [], "missing": [], "status": "harness error", "err": None,
                 "detail": f"{type(e).__name__}: {first_line(e)[:160]}"}
            traceback.print_exc()
        rows.append(r)
        print(f"{r['status']:14} {c.name:45} {time.time() - t0:6.1f}s {','.join(r['missing']) or r['detail']}",
              flush=True)
    miss = {}
    for r in rows:
        for m in r["missing"]:
            miss.setdefault(m, []).append(r["case"])
    print("\nmissing ops by number of cases:")
    for m, cs in sorted(miss.items(), key=lambda kv: -len(kv[1])):
        print(f"  {m:40} {len(cs):3}  {', '.join(cs[:4])}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    if a.write:
        write_table(rows, a.write, a.filter)
    if a.merge:
        write_table(merge_rows(read_table(a.merge), rows), a.merge)


if __name__ == "__main__":
    main()
