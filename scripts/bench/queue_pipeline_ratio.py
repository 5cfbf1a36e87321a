"""TensorFlow 1.x's queue-based input pipeline on a 1 ps + 1 worker cluster, TensorFlow's servers
and ferroflow's side by side on this host (TensorFlow 2.21's client drives both):
`string_input_producer` over `--files` TFRecord files of MNIST-sized `tf.train.Example`s
(784 floats and a label), `TFRecordReader.read_up_to`, `parse_example`, `tf.train.shuffle_batch`
of `--batch` with `--threads` enqueue threads, the queue runners started by
`MonitoredTrainingSession`; the client fetches the batches' label sums until the epochs end.
Rounds alternate TF, ff, TF, ff...; each prints examples per second, and the ratio of the
medians at the end.

    .venv/bin/python scripts/bench/queue_pipeline_ratio.py [--files 4] [--per_file 5000]
        [--epochs 2] [--batch 128] [--threads 2] [--rounds 3]
"""
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "compat"))
import bench_args  # noqa: E402
import ffcluster  # noqa: E402


def write(tf, d, args):
    import numpy as np
    rng = np.random.RandomState(1)
    files = []
    for k in range(args.files):
        p = os.path.join(d, "part-%d.tfrecord" % k)
        with tf.io.TFRecordWriter(p) as w:
            for i in range(args.per_file):
                ex = tf.train.Example(features=tf.train.Features(feature={
                    "image": tf.train.Feature(float_list=tf.train.FloatList(value=rng.rand(784).astype(np.float32))),
                    "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 10])),
                }))
                w.write(ex.SerializeToString())
        files.append(p)
    return files


def measure(tf, target, files, args):
    g = tf.Graph()
    with g.as_default(), tf.compat.v1.device("/job:worker/task:0"):
        names = tf.compat.v1.train.string_input_producer(files, num_epochs=args.epochs, shuffle=True, seed=1)
        _, values = tf.compat.v1.TFRecordReader().read_up_to(names, 64)
        p = tf.io.parse_example(values, {"image": tf.io.FixedLenFeature([784], tf.float32),
                                         "label": tf.io.FixedLenFeature([], tf.int64)})
        image, label = tf.compat.v1.train.shuffle_batch(
            [p["image"], p["label"]], batch_size=args.batch, capacity=8 * args.batch,
            min_after_dequeue=2 * args.batch, num_threads=args.threads, seed=2, enqueue_many=True,
            allow_smaller_final_batch=True)
        fetch = [tf.reduce_sum(image[:, 0]), tf.shape(label)[0]]
        seen = 0
        with tf.compat.v1.train.MonitoredTrainingSession(master=target, is_chief=True) as s:
            start = time.perf_counter()
            for _ in range(10 ** 6):
                if s.should_stop():
                    break
                seen += int(s.run(fetch)[1])
        # The end of the epochs (OutOfRange) leaves the `with` through MonitoredTrainingSession.
        rate = seen / (time.perf_counter() - start)
    want = args.files * args.per_file * args.epochs
    assert seen == want, (seen, want)
    return rate


def main():
    args = bench_args.int_options(files=4, per_file=5000, epochs=2, batch=128, threads=2, rounds=3).parse_args()
    tf = ffcluster.tf_in_mode("v1")
    rates = {"tf": [], "ff": []}
    with tempfile.TemporaryDirectory() as d:
        files = write(tf, d, args)
        for r in range(args.rounds):
            want, got = ffcluster.on_both([("ps", 1), ("worker", 1)], lambda t: measure(tf, t, files, args))
            rates["tf"].append(want)
            rates["ff"].append(got)
            print(f"round {r}: TensorFlow {want:.0f} examples/s, ferroflow {got:.0f} examples/s", flush=True)
    tf_m, ff_m = statistics.median(rates["tf"]), statistics.median(rates["ff"])
    print(f"queue pipeline ({args.files} files x {args.per_file} examples x {args.epochs} epochs, batch {args.batch}, "
          f"{args.threads} threads): TensorFlow {tf_m:.0f} examples/s, ferroflow {ff_m:.0f} examples/s, "
          f"ferroflow / TensorFlow = {ff_m / tf_m:.2f}x")


if __name__ == "__main__":
    main()
