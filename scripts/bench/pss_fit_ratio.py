"""Keras `model.fit` on ParameterServerStrategy (TensorFlow 2's ClusterCoordinator, issue
#44 item 5), on a cluster of TensorFlow 2.21 servers and on one of ferroflow servers, side
by side on this host: 1 ps + N workers, the coordinator (TensorFlow's, in both) in this
process's child. Rounds alternate TF, ff, TF, ff...; each prints the training steps per
second of the timed epochs (the first epoch warms up: tracing, registration, planning).

    .venv/bin/python scripts/bench/pss_fit_ratio.py [--workers 1] [--rounds 3] [--epochs 4]
        [--steps 50] [--steps_per_execution 10] [--hidden 512]
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "compat"))
import bench_args  # noqa: E402
import ffcluster  # noqa: E402


def client(spec, args):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np
    import tensorflow as tf
    import tf_keras
    resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(
        tf.train.ClusterSpec(spec), task_type="chief", task_id=0, rpc_layer="grpc")
    strategy = tf.distribute.experimental.ParameterServerStrategy(resolver)
    rng = np.random.RandomState(0)
    x = rng.rand(1024, 784).astype("float32")
    y = rng.randint(0, 10, size=(1024,)).astype("int64")
    with strategy.scope():
        tf_keras.utils.set_random_seed(1)
        model = tf_keras.Sequential([
            tf_keras.layers.Dense(args.hidden, activation="relu", input_shape=(784,)),
            tf_keras.layers.Dense(args.hidden, activation="relu"),
            tf_keras.layers.Dense(10),
        ])
        model.compile(optimizer=tf_keras.optimizers.SGD(0.01),
                      loss=tf_keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      steps_per_execution=args.steps_per_execution)

    def dataset_fn(_):
        return tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(64)

    times = []

    class Timer(tf_keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            self.t = time.perf_counter()

        def on_epoch_end(self, epoch, logs=None):
            times.append(time.perf_counter() - self.t)

    h = model.fit(tf_keras.utils.experimental.DatasetCreator(dataset_fn), epochs=args.epochs,
                  steps_per_epoch=args.steps, verbose=0, callbacks=[Timer()])
    timed = times[1:]
    print("RESULT " + json.dumps({"steps_per_s": args.steps * len(timed) / sum(timed), "loss": h.history["loss"]}),
          flush=True)


def run(system, args):
    jobs = [("ps", 1), ("worker", args.workers), ("chief", 1)]
    ports = iter(ffcluster.free_ports(sum(n for _, n in jobs)))
    spec = {j: [f"127.0.0.1:{next(ports)}" for _ in range(n)] for j, n in jobs}
    tasks = [(j, i) for j, n in jobs if j != "chief" for i in range(n)]
    procs, servers = [], []
    try:
        if system == "tf":
            procs = [ffcluster.tf_server(spec, j, i) for j, i in tasks]
            for (j, i), p in zip(tasks, procs):
                ffcluster.wait_port(int(spec[j][i].rsplit(":", 1)[1]), p)
        else:
            flag = ";".join(f"{j}={','.join(a)}" for j, a in spec.items())
            servers = [ffcluster.Server("--cluster", flag, "--job_name", j, "--task_index", str(i)) for j, i in tasks]
        argv = [sys.executable, __file__, "--client", json.dumps(spec), "--epochs", str(args.epochs), "--steps",
                str(args.steps), "--steps_per_execution", str(args.steps_per_execution), "--hidden", str(args.hidden)]
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900)
        line = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
        if not line:
            raise SystemExit(f"{system}: no result\n{p.stdout[-3000:]}")
        return json.loads(line[0][len("RESULT "):])
    finally:
        ffcluster.stop(procs)
        for s in servers:
            s.kill()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--client")
    bench_args.int_options(ap, workers=1, rounds=3, epochs=4, steps=50, steps_per_execution=10, hidden=512)
    args = ap.parse_args()
    if args.client:
        return client(json.loads(args.client), args)
    got = {"tf": [], "ff": []}
    for r in range(args.rounds):
        for system in ("tf", "ff"):
            res = run(system, args)
            got[system].append(res["steps_per_s"])
            print(f"round {r + 1} {system}: {res['steps_per_s']:.1f} steps/s, losses {res['loss']}", flush=True)
    med = {k: sorted(v)[len(v) // 2] for k, v in got.items()}
    print(f"median steps/s: TensorFlow {med['tf']:.1f}, ferroflow {med['ff']:.1f}, ferroflow/TF "
          f"{med['ff'] / med['tf']:.2f}x (workers {args.workers}, hidden {args.hidden}, steps_per_execution "
          f"{args.steps_per_execution})")


if __name__ == "__main__":
    main()
