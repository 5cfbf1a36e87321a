"""Training throughput of the models people train, ferroflow vs TensorFlow 2.21, side by side
on this machine (issue #41): tf_keras ResNet50 and MobileNetV2, an LSTM classifier and a
Transformer encoder block, built in graph mode by TensorFlow's own client with the
variables on a ps through `replica_device_setter`, trained with momentum SGD through
`tf.compat.v1.Session(worker_target)` and feed_dict, as a TF 1.x trainer does. Each model
runs on a fresh 1 ps + 1 worker cluster of each system (separate OS processes on loopback),
the two clusters alive at once and timed alternately (A B A B), after warm-up steps.

`--layout single` runs everything in one process instead: TensorFlow's in-process
`Session()` against one ferroflow server task holding the variables and the compute (the
client still feeds it over gRPC on loopback).

`--ff name=path,...` times several ferroflow binaries in the same rounds (a before/after
A/B with TensorFlow alongside); each gets its own cluster, all alive at once.

Printed per model: steps/s of each system (median over rounds), their ratio
(ferroflow / TensorFlow; above 1 is faster), the loss after the timed steps and the peak
resident memory of each worker process (VmHWM).

Usage: .venv/bin/python scripts/bench/model_ratio.py [--models resnet50,mobilenetv2,lstm,transformer]
           [--steps 5] [--rounds 3] [--layout cluster|single] [--ff a=BIN,b=BIN]
           (FERROFLOW_BIN overrides the default binary)
"""

import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "compat"))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
import numpy as np  # noqa: E402

import ffcluster  # noqa: E402


def resnet50(keras, tf):
    x = tf.compat.v1.placeholder(tf.float32, (8, 128, 128, 3))
    y = tf.compat.v1.placeholder(tf.int32, (8,))
    m = keras.applications.ResNet50(weights=None, input_shape=(128, 128, 3), classes=10)
    return x, y, m(x, training=True), m, "ResNet50, 128x128, batch 8"


def mobilenetv2(keras, tf):
    x = tf.compat.v1.placeholder(tf.float32, (16, 160, 160, 3))
    y = tf.compat.v1.placeholder(tf.int32, (16,))
    m = keras.applications.MobileNetV2(weights=None, input_shape=(160, 160, 3), classes=10)
    return x, y, m(x, training=True), m, "MobileNetV2, 160x160, batch 16"


def lstm(keras, tf):
    x = tf.compat.v1.placeholder(tf.float32, (32, 50, 64))
    y = tf.compat.v1.placeholder(tf.int32, (32,))
    m = keras.Sequential([keras.layers.LSTM(256, input_shape=(50, 64)), keras.layers.Dense(10)])
    return x, y, m(x, training=True), m, "LSTM(256), 50 steps of 64 features, batch 32"


def transformer(keras, tf):
    x = tf.compat.v1.placeholder(tf.int32, (16, 64))
    y = tf.compat.v1.placeholder(tf.int32, (16,))
    inp = keras.Input((64,), dtype="int32")
    h = keras.layers.Embedding(2000, 128)(inp)
    a = keras.layers.MultiHeadAttention(num_heads=4, key_dim=32)(h, h)
    h = keras.layers.LayerNormalization()(h + a)
    f = keras.layers.Dense(512, activation="relu")(h)
    h = keras.layers.LayerNormalization()(h + keras.layers.Dense(128)(f))
    out = keras.layers.Dense(10)(keras.layers.GlobalAveragePooling1D()(h))
    m = keras.Model(inp, out)
    return x, y, m(x, training=True), m, "Transformer encoder block (4 heads, d 128, ffn 512), seq 64, batch 16"


MODELS = {"resnet50": resnet50, "mobilenetv2": mobilenetv2, "lstm": lstm, "transformer": transformer}


def feeds(x, y, rng):
    if x.dtype.name == "int32":
        xv = rng.integers(0, 2000, x.shape.as_list()).astype(np.int32)
    else:
        xv = rng.uniform(-1, 1, x.shape.as_list()).astype(np.float32)
    return {x: xv, y: rng.integers(0, 10, y.shape.as_list()).astype(np.int32)}


class Trainer:
    """One model's graph and session on one cluster."""

    def __init__(self, tf, keras, build, target, single=False):
        self.graph = tf.Graph()
        with self.graph.as_default():
            keras.utils.set_random_seed(1)
            setter = None if single else tf.compat.v1.train.replica_device_setter(
                ps_tasks=1, worker_device="/job:worker/task:0")
            with tf.compat.v1.device(setter):
                x, y, logits, model, self.label = build(keras, tf)
                loss = tf.reduce_mean(tf.compat.v1.losses.sparse_softmax_cross_entropy(y, logits))
                updates = model.get_updates_for(x) + model.get_updates_for(None)
                with tf.control_dependencies(updates):
                    self.train = tf.compat.v1.train.MomentumOptimizer(0.01, 0.9).minimize(loss)
                self.loss = loss
                init = tf.compat.v1.global_variables_initializer()
            self.feed = feeds(x, y, np.random.default_rng(3))
        # tf_keras RNNs need soft placement under replica_device_setter (TensorFlow too).
        config = tf.compat.v1.ConfigProto(allow_soft_placement=True)
        self.sess = tf.compat.v1.Session(target, graph=self.graph, config=config)
        self.opts = tf.compat.v1.RunOptions(timeout_in_ms=600_000)
        self.sess.run(init, options=self.opts)

    def steps(self, n):
        t0 = time.perf_counter()
        for _ in range(n):
            loss, _ = self.sess.run([self.loss, self.train], feed_dict=self.feed, options=self.opts)
        return n / (time.perf_counter() - t0), float(loss)


def tf_cluster(single):
    if single:
        return [], None, ""
    ports = ffcluster.free_ports(2)
    spec = {"ps": [f"127.0.0.1:{ports[0]}"], "worker": [f"127.0.0.1:{ports[1]}"]}
    ps = ffcluster.tf_server(spec, "ps", 0)
    worker = ffcluster.tf_server(spec, "worker", 0)
    ffcluster.wait_port(ports[0], ps)
    ffcluster.wait_port(ports[1], worker)
    return [ps, worker], worker, "grpc://" + spec["worker"][0]


def ff_cluster(single, binary):
    os.environ["FERROFLOW_BIN"] = binary
    servers, _ = ffcluster.cluster({"worker": 1} if single else {"ps": 1, "worker": 1})
    w = servers["worker"][0]
    return [s.proc for j in servers.values() for s in j], w.proc, w.target


def cpu_line():
    model = "unknown"
    flags = set()
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name") and model == "unknown":
                model = line.split(":", 1)[1].strip()
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
    isa = "avx512" if "avx512f" in flags else "avx2" if "avx2" in flags else "baseline"
    return f"{model}, {os.cpu_count()} cores, ISA path {isa}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--steps", type=int, default=5, help="timed steps per round")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--layout", choices=("cluster", "single"), default="cluster")
    ap.add_argument("--ff", default="", help="name=binary,... (default: ferroflow=the built binary)")
    args = ap.parse_args()
    bins = dict(kv.split("=", 1) for kv in args.ff.split(",")) if args.ff else {"ferroflow": ffcluster.binary()}
    single = args.layout == "single"
    import tensorflow as tf
    import tf_keras as keras
    tf.compat.v1.disable_eager_execution()
    print(f"# {cpu_line()}; TensorFlow {tf.__version__}; ferroflow {bins}; layout {args.layout}")
    rows = []
    for name in args.models.split(","):
        build = MODELS[name]
        procs, tf_procs, tf_worker, tf_target = [], *tf_cluster(single)
        procs += tf_procs
        try:
            systems, workers = {}, {}
            for b, path in bins.items():
                ff_procs, workers[b], ff_target = ff_cluster(single, path)
                procs += ff_procs
                systems[b] = Trainer(tf, keras, build, ff_target, single)
            systems["tensorflow"] = Trainer(tf, keras, build, tf_target, single)
            workers["tensorflow"] = tf_worker
            for t in systems.values():
                t.steps(args.warmup)
            rates = {k: [] for k in systems}
            losses = {}
            for _ in range(args.rounds):
                for k, t in systems.items():
                    r, losses[k] = t.steps(args.steps)
                    rates[k].append(r)
            med = {k: statistics.median(v) for k, v in rates.items()}
            mib = {k: ffcluster.proc_status_mib(w.pid if w else os.getpid(), "VmHWM") for k, w in workers.items()}
            label = next(iter(systems.values())).label
            for b in bins:
                row = dict(model=label, binary=b, layout=args.layout, ff=med[b], tf=med["tensorflow"],
                           ratio=med[b] / med["tensorflow"], ff_loss=losses[b], tf_loss=losses["tensorflow"],
                           ff_mib=mib[b], tf_mib=mib["tensorflow"], ff_rounds=rates[b], tf_rounds=rates["tensorflow"])
                rows.append(row)
                print(json.dumps(row), flush=True)
            for t in systems.values():
                t.sess.close()
        finally:
            ffcluster.stop(procs)
    print()
    print("| model | binary | ferroflow steps/s | TensorFlow steps/s | ratio | loss ff / tf | worker peak MiB ff / tf |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['binary']} | {r['ff']:.2f} | {r['tf']:.2f} | **{r['ratio']:.2f}x** | "
              f"{r['ff_loss']:.3f} / {r['tf_loss']:.3f} | {r['ff_mib']:.0f} / {r['tf_mib']:.0f} |")
    if single:
        print("(single layout: TensorFlow's peak is the client process's, which holds the model)")


if __name__ == "__main__":
    main()
