"""The commands in README.md and docs/*.md are not stale: runs scripts/check_docs.py against
the ferroflow binary the other compatibility tests use (ffcluster.binary(): $FERROFLOW_BIN,
else target/release/ferroflow or $CARGO_TARGET_DIR/release/ferroflow). It checks every
documented command's subcommand and flags against that binary's --help, and the scripts,
crates, examples, paths and links the documents name; nothing long is run."""

import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

env = dict(os.environ, FERROFLOW_BIN=ffcluster.binary())
r = subprocess.run([sys.executable, os.path.join(ffcluster.ROOT, "scripts", "check_docs.py")], env=env)
if r.returncode != 0:
    sys.exit(f"test_docs: scripts/check_docs.py failed ({r.returncode}): fix the stale commands above")
print("test_docs: ok")
