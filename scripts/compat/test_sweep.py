"""The op-coverage sweep keeps what it found: every case that `docs/op-coverage.md` (the
committed sweep table) lists as equal to TensorFlow is run again on a ferroflow ps + worker
cluster and must still equal TensorFlow (outputs, gradients and, for the models and
optimizers, three training steps). The application models run in CI are a few small ones
(FERROFLOW_SWEEP_APPS=all runs every model the table lists as equal; the full sweep is
`scripts/compat/sweep.py`)."""

import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import sweep  # noqa: E402  (sets the environment before TensorFlow is imported)

ROOT = os.path.dirname(os.path.dirname(HERE))
TABLE = os.path.join(ROOT, "docs", "op-coverage.md")
# Two application models (their check is seeded and in inference mode, so it is the same
# check on every run; the others run with FERROFLOW_SWEEP_APPS=all): a grouped-convolution
# network and a depthwise one.
CI_APPS = {"applications.RegNetX002", "applications.MobileNetV2"}


def equal_in_table():
    names = set()
    for line in open(TABLE):
        # Strictly equal cases only: "within TF's own spread" ones depend on fresh random
        # initial values and on this host's rounding.
        m = re.match(r"\| `([^`]+)` \| (equal|equal \(shapes; random\)) \|", line)
        if m:
            names.add(m.group(1))
    return names


def main():
    import tensorflow as tf
    tf.compat.v1.disable_eager_execution()
    want = equal_in_table()
    assert len(want) > 50, f"the sweep table lists only {len(want)} equal cases"
    every_app = os.environ.get("FERROFLOW_SWEEP_APPS") == "all"
    cases = [c for c in sweep.all_cases() if c.name in want
             and (every_app or not c.name.startswith("applications.") or c.name in CI_APPS)]
    servers, _ = sweep.ffcluster.cluster({"ps": 1, "worker": 1})
    target = servers["worker"][0].target
    bad = []
    for c in cases:
        r = sweep.run_case(tf, c, target, ops_only=False)
        if not r["status"].startswith("equal"):
            bad.append(f"{c.name}: {r['status']} {', '.join(r['missing']) or r['detail']}")
    print(f"sweep: {len(cases) - len(bad)} of {len(cases)} cases still equal TensorFlow")
    assert not bad, "regressed:\n  " + "\n  ".join(bad)


if __name__ == "__main__":
    main()
