#!/usr/bin/env bash
# The project's test command (the README's second command; .ci/run calls exactly this).
# Installs what the tests need (the Python venv with tensorflow-cpu 2.21 for the
# compatibility tests), runs every Rust test in release mode (one build serves the tests,
# the multi-process tests and the compatibility scripts), builds and installs the Python
# wheel, then runs the TensorFlow compatibility tests.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each phase's wall time, printed at the end (also when a phase fails), so that a CI log's
# tail says where the time went.
PHASES=""
phase_start=$SECONDS
phase() {
  PHASES="$PHASES $1=$((SECONDS - phase_start))s"
  phase_start=$SECONDS
}
trap 'echo "test.sh phase times:$PHASES (total ${SECONDS}s)"' EXIT
scripts/setup-python.sh
phase setup-python
cargo test --workspace --release --locked --no-run
phase cargo-build
cargo test --workspace --release --locked
phase cargo-test
# The Python package (`pip install` of the wheel maturin builds), which the compatibility
# tests use (test_python_package.py).
scripts/build-wheel.sh
phase build-wheel
# The compatibility scripts, two at a time (scripts/compat/run_all.py prints each one's time).
"${FERROFLOW_VENV:-.venv}/bin/python" scripts/compat/run_all.py
phase compat
