#!/usr/bin/env bash
# The project's test command (the README's second command; .ci/run calls exactly this).
# Installs what the tests need (the Python venv with tensorflow-cpu 2.21 for the
# compatibility tests), runs every Rust test in release mode (one build serves the tests,
# the multi-process tests and the compatibility scripts), builds and installs the Python
# wheel, then runs the TensorFlow compatibility tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-python.sh
cargo test --workspace --release --locked
# The Python package (`pip install` of the wheel maturin builds), which the compatibility
# tests use (test_python_package.py).
scripts/build-wheel.sh
if [ -d scripts/compat ]; then
  for t in scripts/compat/test_*.py; do
    [ -e "$t" ] || continue
    echo "== $t"
    "${FERROFLOW_VENV:-.venv}/bin/python" "$t"
  done
fi
