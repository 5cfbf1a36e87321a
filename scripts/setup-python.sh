#!/usr/bin/env bash
# Creates .venv with tensorflow-cpu==2.21.0 for the compatibility tests and
# golden-value generation. Idempotent: does nothing when the venv is ready.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${FERROFLOW_VENV:-.venv}
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c 'import tensorflow as tf; assert tf.__version__ == "2.21.0"' 2>/dev/null; then
  exit 0
fi
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --upgrade pip
"$VENV/bin/pip" install --quiet "tensorflow-cpu==2.21.0" "numpy<3"
"$VENV/bin/python" -c 'import tensorflow as tf; print("tensorflow", tf.__version__)'
