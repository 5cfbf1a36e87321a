"""TensorFlow 1.x's queue-based input pipeline on a ferroflow cluster, from TensorFlow's
client, against TensorFlow's own servers (1 ps + 1 worker):

1. The readers on the worker, each fed file names from a closed FIFOQueue and read until
   the queue runs dry: TFRecordReader (plain and GZIP), TextLineReader (a header line
   skipped, CRLF lines, a last line without a newline), FixedLengthRecordReader (header,
   footer, hop), WholeFileReader, IdentityReader; `read_up_to`, the record and work
   counters, `reset`, and the OutOfRange that ends each. Every key and value must equal.
2. The other queues: RandomShuffleQueue with seeds (dequeue, dequeue_many, dequeue_up_to
   after close: TensorFlow's Philox draws, so the same order), PaddingFIFOQueue (padded
   batches), PriorityQueue (smallest first, TensorFlow's order among ties), `is_closed`,
   and the errors of a closed queue; `count_up_to` on reference and resource variables.
3. A classic TF 1.x training program: `string_input_producer(num_epochs=2)`,
   `TFRecordReader`, `parse_single_example`, `tf.train.batch` with one thread (a
   deterministic order), a softmax model on the ps through `replica_device_setter`,
   `MonitoredTrainingSession` running the queue runners until the epochs end. Losses must
   equal TensorFlow's (relative difference <= 1e-5) and the step count too.
4. `tf.train.shuffle_batch` (two threads, `allow_smaller_final_batch`): the order is
   timing-dependent in TensorFlow too, so the multiset of example ids seen must equal
   (each id exactly `num_epochs` times) and so must the batch sizes' total."""

import gzip
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

tf.compat.v1.disable_eager_execution()
tf.get_logger().setLevel("ERROR")
WORKER = "/job:worker/task:0"
PER_FILE, FILES = 10, 3


def example(i, rng):
    f = tf.train.Features(feature={
        "id": tf.train.Feature(int64_list=tf.train.Int64List(value=[i])),
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=rng.randn(4).tolist())),
        "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 3])),
    })
    return tf.train.Example(features=f).SerializeToString()


def write_files(d):
    rng = np.random.RandomState(11)
    recs = []
    for k in range(FILES):
        p = os.path.join(d, "part-%d.tfrecord" % k)
        with tf.io.TFRecordWriter(p) as w:
            for i in range(PER_FILE):
                w.write(example(k * PER_FILE + i, rng))
        recs.append(p)
    gz = os.path.join(d, "z.tfrecord.gz")
    with tf.io.TFRecordWriter(gz, tf.io.TFRecordOptions(compression_type="GZIP")) as w:
        for i in range(3):
            w.write(b"gz-%d" % i)
    text = os.path.join(d, "t.csv")
    with open(text, "wb") as f:
        f.write(b"header,line\r\na,1\r\n\r\nb,2\nlast-no-newline")
    empty = os.path.join(d, "empty.txt")
    open(empty, "wb").close()
    fixed = os.path.join(d, "f.bin")
    with open(fixed, "wb") as f:
        f.write(bytes(range(40)))
    fixed_gz = os.path.join(d, "f.bin.gz")
    with gzip.open(fixed_gz, "wb") as f:
        f.write(bytes(range(100, 123)))
    return {"records": recs, "gz": gz, "text": text, "empty": empty, "fixed": fixed, "fixed_gz": fixed_gz}


def read_all(sess, read, extra=()):
    """Runs `read` until OutOfRange; the results and the error's class."""
    out = []
    for _ in range(100):
        try:
            out.append([v.tolist() if hasattr(v, "tolist") else v for v in sess.run([*read, *extra])])
        except tf.errors.OutOfRangeError:
            return out, "OutOfRange"
    return out, "no end"


def readers(target, f):
    g = tf.Graph()
    results = {}
    with g.as_default(), tf.compat.v1.device(WORKER):
        def files_queue(names):
            q = tf.queue.FIFOQueue(20, tf.string)
            return q, q.enqueue_many([names]), q.close()

        cases = {
            "tfrecord": (tf.compat.v1.TFRecordReader(), f["records"][:2], None),
            "tfrecord_gzip": (tf.compat.v1.TFRecordReader(options=tf.io.TFRecordOptions(compression_type="GZIP")),
                              [f["gz"]], None),
            "text": (tf.compat.v1.TextLineReader(skip_header_lines=1), [f["text"], f["empty"], f["text"]], None),
            "fixed": (tf.compat.v1.FixedLengthRecordReader(record_bytes=6, header_bytes=2, footer_bytes=3),
                      [f["fixed"]], None),
            "fixed_hop": (tf.compat.v1.FixedLengthRecordReader(record_bytes=5, header_bytes=1, hop_bytes=3,
                                                                footer_bytes=2), [f["fixed"]], None),
            "fixed_gzip": (tf.compat.v1.FixedLengthRecordReader(record_bytes=4, encoding="GZIP"), [f["fixed_gz"]], None),
            "whole": (tf.compat.v1.WholeFileReader(), [f["text"], f["fixed"]], None),
            "identity": (tf.compat.v1.IdentityReader(), ["a", "b", "c"], None),
            "up_to": (tf.compat.v1.TFRecordReader(), f["records"][:2], 4),
        }
        built = {}
        for name, (reader, names, up_to) in cases.items():
            q, enq, close = files_queue([os.path.basename(n) if name == "identity" else n for n in names])
            read = reader.read_up_to(q, up_to) if up_to else reader.read(q)
            built[name] = (enq, close, read, reader)
        with tf.compat.v1.Session(target) as s:
            for name, (enq, close, read, reader) in built.items():
                s.run(enq)
                s.run(close)
                got, end = read_all(s, list(read))
                counts = s.run([reader.num_records_produced(), reader.num_work_units_completed()])
                s.run(reader.reset())
                after = s.run([reader.num_records_produced(), reader.num_work_units_completed()])
                # Keys name the files: keep only the base names.
                for row in got:
                    row[0] = [k.decode().rsplit("/", 1)[-1] for k in row[0]] if isinstance(row[0], list) \
                        else row[0].decode().rsplit("/", 1)[-1]
                results[name] = (got, end, [int(c) for c in counts], [int(c) for c in after])
    return results


def tl(x):
    return x.tolist() if hasattr(x, "tolist") else x


def queues(target):
    g = tf.Graph()
    out = {}
    with g.as_default(), tf.compat.v1.device(WORKER):
        rsq = tf.queue.RandomShuffleQueue(30, 4, [tf.int32, tf.string], shapes=[[], [2]], seed=7)
        items = np.arange(20, dtype=np.int32)
        words = np.array([[b"w%d" % i, b"v%d" % i] for i in range(20)])
        r_ops = [rsq.enqueue_many([items, words]), rsq.dequeue(), rsq.dequeue_many(5), rsq.close(),
                 rsq.dequeue_up_to(100), rsq.is_closed(), rsq.size()]
        pad = tf.queue.PaddingFIFOQueue(10, [tf.float32, tf.string], shapes=[[None], [None, 2]])
        p_ops = [pad.enqueue([[1.0, 2.0], [[b"a", b"b"]]]), pad.enqueue([[3.0], [[b"c", b"d"], [b"e", b"f"]]]),
                 pad.enqueue([[4.0, 5.0, 6.0], np.zeros([0, 2], np.bytes_)]), pad.dequeue_many(3)]
        pq = tf.queue.PriorityQueue(20, [tf.string], shapes=[[]])
        prios = np.array([5, 1, 3, 1, 9, 3, 1, 0], dtype=np.int64)
        q_ops = [pq.enqueue_many([prios, np.array([b"p%d" % i for i in range(8)])]), pq.dequeue_many(5),
                 pq.dequeue(), pq.close(), pq.dequeue_up_to(2)]
        fifo = tf.queue.FIFOQueue(10, [tf.int64], shapes=[[]])
        f_ops = [fifo.enqueue_many([[1, 2, 3]]), fifo.close(), fifo.dequeue_many(5), fifo.dequeue_up_to(5),
                 fifo.dequeue_up_to(5)]
        ref = tf.compat.v1.Variable(3, use_resource=False, name="ref_counter")
        res = tf.compat.v1.Variable(np.int64(0), use_resource=True, name="res_counter")
        counts = [tf.compat.v1.count_up_to(ref, 5), tf.compat.v1.count_up_to(res, 2)]
        init = tf.compat.v1.global_variables_initializer()
        with tf.compat.v1.Session(target) as s:
            s.run(r_ops[0])
            one = s.run(r_ops[1])
            many = s.run(r_ops[2])
            s.run(r_ops[3])
            rest = s.run(r_ops[4])
            out["shuffle"] = [[tl(x) for x in one], [tl(x) for x in many], [tl(x) for x in rest],
                              bool(s.run(r_ops[5])), int(s.run(r_ops[6]))]
            for op in p_ops[:3]:
                s.run(op)
            out["padding"] = [tl(x) for x in s.run(p_ops[3])]
            s.run(q_ops[0])
            out["priority"] = [[tl(x) for x in s.run(q_ops[1])], [tl(x) for x in s.run(q_ops[2])]]
            s.run(q_ops[3])
            out["priority"].append([tl(x) for x in s.run(q_ops[4])])
            s.run(f_ops[0])
            s.run(f_ops[1])
            # The queue's name in messages is each server's own: compare what follows it.
            def tail(o):
                return (o[0], o[1].rsplit("' ", 1)[-1])
            out["fifo"] = [tail(ffcluster.outcome(tf, lambda: s.run(f_ops[2]).tolist())),
                           s.run(f_ops[3]).tolist(), tail(ffcluster.outcome(tf, lambda: s.run(f_ops[4]).tolist()))]
            s.run(init)
            # One counter per run: which of two failing ops a step reports first is not fixed.
            out["count_up_to"] = [ffcluster.outcome(tf, lambda: int(s.run(c))) for c in counts for _ in range(3)]
            # ferroflow's errors name the task and node before TensorFlow's words.
            out["count_up_to"] = [(c, m.rsplit("): ", 1)[-1] if isinstance(m, str) else m)
                                  for c, m in out["count_up_to"]]
    return out


def parse(value):
    p = tf.io.parse_single_example(value, {"id": tf.io.FixedLenFeature([], tf.int64),
                                           "x": tf.io.FixedLenFeature([4], tf.float32),
                                           "y": tf.io.FixedLenFeature([], tf.int64)})
    return p["id"], p["x"], p["y"]


def train(target, files):
    g = tf.Graph()
    with g.as_default():
        with tf.compat.v1.device(WORKER):
            names = tf.compat.v1.train.string_input_producer(files, num_epochs=2, shuffle=False)
            _, value = tf.compat.v1.TFRecordReader().read(names)
            ids, x, y = tf.compat.v1.train.batch(list(parse(value)), batch_size=4, num_threads=1, capacity=8)
        with tf.compat.v1.device(tf.compat.v1.train.replica_device_setter(ps_tasks=1, worker_device=WORKER)):
            w = tf.compat.v1.get_variable("w", [4, 3], initializer=tf.compat.v1.glorot_uniform_initializer(1))
            b = tf.compat.v1.get_variable("b", [3], initializer=tf.compat.v1.zeros_initializer())
            gs = tf.compat.v1.train.get_or_create_global_step()
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=x @ w + b))
            step = tf.compat.v1.train.GradientDescentOptimizer(0.3).minimize(loss, global_step=gs)
        losses, seen = [], []
        with tf.compat.v1.train.MonitoredTrainingSession(master=target, is_chief=True) as s:
            for _ in range(100):
                if s.should_stop():
                    break
                l, i, _ = s.run([loss, ids, step])
                losses.append(float(l))
                seen.extend(i.tolist())
    return losses, seen


def shuffled(target, files):
    g = tf.Graph()
    with g.as_default(), tf.compat.v1.device(WORKER):
        names = tf.compat.v1.train.string_input_producer(files, num_epochs=2, shuffle=True, seed=3)
        _, value = tf.compat.v1.TFRecordReader().read(names)
        ids, _, _ = tf.compat.v1.train.shuffle_batch(list(parse(value)), batch_size=7, capacity=20,
                                                     min_after_dequeue=5, num_threads=2, seed=4,
                                                     allow_smaller_final_batch=True)
        seen, sizes = [], []
        with tf.compat.v1.train.MonitoredTrainingSession(master=target, is_chief=True) as s:
            for _ in range(100):
                if s.should_stop():
                    break
                i = s.run(ids)
                seen.extend(i.tolist())
                sizes.append(len(i))
    return sorted(seen), sum(sizes), min(sizes)


def both(target):
    with tempfile.TemporaryDirectory() as d:
        f = write_files(d)
        return {"readers": readers(target, f), "queues": queues(target), "train": train(target, f["records"]),
                "shuffled": shuffled(target, f["records"])}


want, got = ffcluster.on_both([("ps", 1), ("worker", 1)], both)
for name, w in want["readers"].items():
    assert w == got["readers"][name], (name, w, got["readers"][name])
    print("reader %-13s %2d reads, ends %s, counts %s: equal" % (name, len(w[0]), w[1], w[2]))
for name, w in want["queues"].items():
    assert w == got["queues"][name], (name, w, got["queues"][name])
    print("queue  %-13s equal: %s" % (name, str(w)[:90]))
(wl, wids), (gl, gids) = want["train"], got["train"]
assert len(wl) == len(gl) == 2 * FILES * PER_FILE // 4, (len(wl), len(gl))
assert wids == gids, (wids, gids)
worst = max(abs(a - b) / abs(a) for a, b in zip(wl, gl))
print("string_input_producer + TFRecordReader + batch: %d steps, worst loss difference %.2e" % (len(gl), worst))
assert worst <= 1e-5, (wl, gl)
assert want["shuffled"] == got["shuffled"], (want["shuffled"], got["shuffled"])
assert got["shuffled"][0] == sorted(list(range(FILES * PER_FILE)) * 2), got["shuffled"]
print("shuffle_batch: every id seen twice, %d examples, last batch %d" % got["shuffled"][1:])
print("test_queue_pipeline: OK")
