"""Times TensorFlow's training throughput on this machine for the two reference workloads,
the baseline ferroflow's own training benchmarks are compared with.

Run from the repo root with the project venv (see scripts/setup-python.sh):

    ${FERROFLOW_VENV:-.venv}/bin/python scripts/bench/tf_train.py [--workload mlp|cnn|all]
        [--steps N] [--warmup 20] [--pool 10] [--seed 0]

Style: classic tf.compat.v1 graph mode with a (local, in-process) Session and feed_dict,
as in TensorFlow's 1.x MNIST / distributed-training demos. One `sess.run(train_op, feeds)`
is one step.

  mlp  784-256-10 MLP (relu), batch 100, AdagradOptimizer(0.01), mean softmax
       cross-entropy (tf.nn.softmax_cross_entropy_with_logits on one-hot labels).
  cnn  "Deep MNIST": conv 5x5x32 SAME relu -> maxpool 2x2 -> conv 5x5x64 SAME relu ->
       maxpool 2x2 -> fc 1024 relu -> dropout (keep_prob placeholder fed 0.5) -> fc 10,
       batch 50, AdamOptimizer(1e-4), mean softmax cross-entropy on one-hot labels.

Data: a pool of --pool seeded random float32 batches (images uniform [0,1), one-hot random
labels) is generated before timing and cycled through, so data generation is not timed (the
feed copy is, as in any feed_dict training loop). Weights: truncated normal stddev 0.1,
biases 0.1 (the tutorials' init), seeded with tf.compat.v1.set_random_seed.

Threads: TensorFlow's defaults, i.e. a default ConfigProto (intra_op_parallelism_threads = 0
and inter_op_parallelism_threads = 0, which TensorFlow resolves to the number of CPU cores it
sees). Nothing is pinned and no environment variables are set other than quieting the log.

Output: after --warmup untimed steps, --steps steps are timed (defaults: 300 for mlp, 100 for
cnn); one JSON line per workload on stdout:
    {"workload": "mlp", "steps_per_sec": 1234.5, "batch": 100, "steps": 300, "seconds": 0.243}
"""
import argparse
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

tf.compat.v1.disable_eager_execution()

DEFAULT_STEPS = {"mlp": 300, "cnn": 100}
BATCH = {"mlp": 100, "cnn": 50}


def weight(shape):
    return tf.Variable(tf.random.truncated_normal(shape, stddev=0.1))


def bias(shape):
    return tf.Variable(tf.constant(0.1, shape=shape))


def build_mlp():
    x = tf.compat.v1.placeholder(tf.float32, [None, 784], name="x")
    y_ = tf.compat.v1.placeholder(tf.float32, [None, 10], name="y_")
    hidden = tf.nn.relu(tf.matmul(x, weight([784, 256])) + bias([256]))
    logits = tf.matmul(hidden, weight([256, 10])) + bias([10])
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y_, logits=logits))
    train = tf.compat.v1.train.AdagradOptimizer(0.01).minimize(loss)
    return x, y_, {}, train


def conv_relu_pool(inp, shape):
    conv = tf.nn.conv2d(inp, weight(shape), strides=[1, 1, 1, 1], padding="SAME")
    act = tf.nn.relu(conv + bias([shape[-1]]))
    return tf.nn.max_pool2d(act, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")


def build_cnn():
    x = tf.compat.v1.placeholder(tf.float32, [None, 784], name="x")
    y_ = tf.compat.v1.placeholder(tf.float32, [None, 10], name="y_")
    keep_prob = tf.compat.v1.placeholder(tf.float32, name="keep_prob")
    image = tf.reshape(x, [-1, 28, 28, 1])
    pool1 = conv_relu_pool(image, [5, 5, 1, 32])
    pool2 = conv_relu_pool(pool1, [5, 5, 32, 64])
    flat = tf.reshape(pool2, [-1, 7 * 7 * 64])
    fc1 = tf.nn.relu(tf.matmul(flat, weight([7 * 7 * 64, 1024])) + bias([1024]))
    drop = tf.nn.dropout(fc1, rate=1.0 - keep_prob)
    logits = tf.matmul(drop, weight([1024, 10])) + bias([10])
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y_, logits=logits))
    train = tf.compat.v1.train.AdamOptimizer(1e-4).minimize(loss)
    return x, y_, {keep_prob: 0.5}, train


def batches(batch, pool, seed):
    rs = np.random.RandomState(seed)
    out = []
    for _ in range(pool):
        images = rs.uniform(0.0, 1.0, size=(batch, 784)).astype(np.float32)
        labels = np.zeros((batch, 10), dtype=np.float32)
        labels[np.arange(batch), rs.randint(0, 10, size=batch)] = 1.0
        out.append((images, labels))
    return out


def bench(workload, steps, warmup, pool, seed):
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.set_random_seed(seed)
        x, y_, extra_feeds, train = {"mlp": build_mlp, "cnn": build_cnn}[workload]()
        init = tf.compat.v1.global_variables_initializer()
        graph.finalize()
    data = batches(BATCH[workload], pool, seed)
    feeds = []
    for images, labels in data:
        feed = {x: images, y_: labels}
        feed.update(extra_feeds)
        feeds.append(feed)
    with tf.compat.v1.Session(graph=graph, config=tf.compat.v1.ConfigProto()) as sess:
        sess.run(init)
        for i in range(warmup):
            sess.run(train, feeds[i % len(feeds)])
        start = time.perf_counter()
        for i in range(steps):
            sess.run(train, feeds[i % len(feeds)])
        seconds = time.perf_counter() - start
    return {"workload": workload, "steps_per_sec": round(steps / seconds, 2), "batch": BATCH[workload],
            "steps": steps, "seconds": round(seconds, 4)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workload", choices=["mlp", "cnn", "all"], default="all")
    parser.add_argument("--steps", type=int, default=None,
                        help="timed steps per workload (default: 300 for mlp, 100 for cnn)")
    parser.add_argument("--warmup", type=int, default=20, help="untimed steps first (default 20)")
    parser.add_argument("--pool", type=int, default=10, help="pre-generated batches cycled through")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if (args.steps is not None and args.steps <= 0) or args.warmup < 0 or args.pool <= 0:
        parser.error("--steps and --pool must be positive, --warmup non-negative")
    print("tensorflow %s, %d CPUs visible, default ConfigProto threads" % (tf.__version__, os.cpu_count()),
          file=sys.stderr)
    for workload in (["mlp", "cnn"] if args.workload == "all" else [args.workload]):
        steps = args.steps if args.steps is not None else DEFAULT_STEPS[workload]
        print(json.dumps(bench(workload, steps, args.warmup, args.pool, args.seed)), flush=True)


if __name__ == "__main__":
    main()
