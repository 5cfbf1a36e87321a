"""Runs every scripts/compat/test_*.py (the TensorFlow compatibility tests), FERROFLOW_COMPAT_JOBS
at a time (default 2: most of a script's time is TensorFlow's import and waiting on servers),
longest first by the times of the last run. Each script's output is printed whole when it
ends, with its wall time; the exit status is 1 if any script failed, and the failures are
listed at the end. Every script picks its own free ports and temporary directories, so they
can share the machine."""
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
# Seconds per script on a 2-core host (the order they start in; unknown ones start first).
LAST = {
    "test_sweep": 170, "test_cnn_losses": 62, "test_eager_service": 96, "test_sparse_accumulator": 46, "test_loops_across_tasks": 45,
    "test_python_package": 42, "test_callables": 40, "test_dtypes": 37, "test_sync_replicas_mts": 37, "test_datasets": 31,
    "test_step_stats": 31, "test_device_count": 29, "test_partitioned": 26, "test_remote_call": 26,
    "test_between_graph": 23, "test_tensorboard": 22, "test_vae_svd": 20, "test_collectives": 50, "test_signal": 25,
    "test_ctc": 20, "test_fake_quant": 12, "test_sampled_losses": 15, "test_sequence_example": 15,
    "test_summary_v2": 16,
}


def run(path):
    start = time.monotonic()
    try:
        p = subprocess.run([sys.executable, path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           errors="replace", timeout=1800)
        code, out = p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        code, out = "timeout", out + "\n(killed after 1800 s)"
    return path, code, out, time.monotonic() - start


def main():
    scripts = sorted(f for f in os.listdir(HERE) if f.startswith("test_") and f.endswith(".py"))
    scripts.sort(key=lambda f: -LAST.get(f[:-3], 1000))
    jobs = int(os.environ.get("FERROFLOW_COMPAT_JOBS", "2"))
    failed, times = [], []
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for path, code, out, secs in pool.map(run, [os.path.join(HERE, f) for f in scripts]):
            name = os.path.basename(path)[:-3]
            print(f"== {name} ({secs:.0f} s, exit {code})\n{out}", flush=True)
            times.append(f"{name}={secs:.0f}s")
            if code != 0:
                failed.append(name)
    print("compat times: " + " ".join(times))
    if failed:
        print("FAILED compat scripts: " + " ".join(failed))
        sys.exit(1)
    print(f"all {len(scripts)} compat scripts passed")


if __name__ == "__main__":
    main()
