#!/usr/bin/env bash
# Creates .venv with tensorflow-cpu==2.21.0 (and tensorboard, for the event-file
# compatibility test) for the compatibility tests and golden-value generation, and maturin,
# which builds ferroflow's wheel (scripts/build-wheel.sh).
# Idempotent: does nothing when the venv is ready. Downloads are large (the
# TensorFlow wheel is ~270 MB) and the registry connection sometimes drops, so
# pip resumes partial downloads and the whole install is retried.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${FERROFLOW_VENV:-.venv}
PKGS=("tensorflow-cpu==2.21.0" "tensorboard==2.21.0" "tf-keras==2.21.0" "numpy<3" "maturin==1.16.0")
ready() {
  "$VENV/bin/python" -c 'import tensorflow as tf, tensorboard, tf_keras; assert tf.__version__ == "2.21.0"' 2>/dev/null &&
    [ -x "$VENV/bin/maturin" ]
}
if [ -x "$VENV/bin/python" ] && ready; then
  exit 0
fi
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
retry() {
  local n
  for n in 1 2 3 4 5; do
    if "$@"; then return 0; fi
    echo "setup-python: attempt $n of: $* failed; retrying in $((n * 10)) s" >&2
    sleep $((n * 10))
  done
  return 1
}
retry "$VENV/bin/pip" install --quiet --retries 10 --timeout 60 --upgrade pip
# --resume-retries exists from pip 25.1; the upgrade above provides it.
retry "$VENV/bin/pip" install --quiet --retries 10 --timeout 60 --resume-retries 50 "${PKGS[@]}"
"$VENV/bin/python" -c 'import tensorflow as tf, tensorboard; print("tensorflow", tf.__version__, "tensorboard", tensorboard.__version__)'
