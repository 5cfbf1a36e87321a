#!/usr/bin/env bash
# Builds ferroflow's Python wheel with maturin (the `ferroflow` binary plus the `ferroflow`
# module, python/ferroflow) into target/wheels and installs it into the venv, as
# `pip install ferroflow` would. Needs the venv of scripts/setup-python.sh (for maturin).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${FERROFLOW_VENV:-.venv}
OUT=${CARGO_TARGET_DIR:-target}/wheels
rm -f "$OUT"/ferroflow-*.whl
"$VENV/bin/maturin" build --release --locked --quiet --out "$OUT"
"$VENV/bin/pip" install --quiet --force-reinstall --no-deps "$OUT"/ferroflow-*.whl
echo "build-wheel: installed $(ls "$OUT"/ferroflow-*.whl) into $VENV"
