"""A user's sequence model fed from `tf.train.SequenceExample` records, on a ferroflow cluster
from TensorFlow's client, against TensorFlow's own servers: TFRecord files of
SequenceExamples (a context label and length, token and feature lists of varying length)
read by `tf.data` on the worker, each record parsed by `tf.io.parse_single_sequence_example`
in the map function, padded batches, an embedding and a GRU with `sequence_length`
(`dynamic_rnn`) and a dense head, the variables on the ps through `replica_device_setter`,
trained eight steps with Adam. Then `tf.io.parse_sequence_example` on a batch of records
(dense, sparse and ragged feature lists) fetched whole. Losses and values must equal
TensorFlow's (relative difference <= 1e-4; the parse results exactly)."""

import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# tf.compat.v1.nn.rnn_cell and tf.compat.v1.layers need Keras 2 (tf_keras).
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
import tensorflow as tf  # noqa: E402

tf.compat.v1.disable_eager_execution()
VOCAB, DIM, UNITS, BATCH = 50, 8, 12, 4


def records(path):
    rng = np.random.RandomState(3)
    with tf.io.TFRecordWriter(path) as w:
        for _ in range(40):
            n = rng.randint(2, 9)
            s = tf.train.SequenceExample()
            s.context.feature["label"].int64_list.value.append(rng.randint(0, 3))
            s.context.feature["length"].int64_list.value.append(n)
            for t in range(n):
                s.feature_lists.feature_list["tokens"].feature.add().int64_list.value.append(rng.randint(1, VOCAB))
                s.feature_lists.feature_list["signal"].feature.add().float_list.value.extend(rng.randn(2))
                s.feature_lists.feature_list["marks"].feature.add().bytes_list.value.extend(
                    [b"m%d" % k for k in range(rng.randint(0, 3))])
                s.feature_lists.feature_list["scores"].feature.add().float_list.value.extend(
                    rng.rand(rng.randint(0, 4)))
            w.write(s.SerializeToString())


CONTEXT = {"label": tf.io.FixedLenFeature([], tf.int64), "length": tf.io.FixedLenFeature([], tf.int64)}
LISTS = {"tokens": tf.io.FixedLenSequenceFeature([], tf.int64),
         "signal": tf.io.FixedLenSequenceFeature([2], tf.float32)}


def parse(record):
    c, f = tf.io.parse_single_sequence_example(record, CONTEXT, LISTS)
    return f["tokens"], f["signal"], c["length"], c["label"]


def train(target, path):
    g = tf.Graph()
    with g.as_default():
        tf.compat.v1.set_random_seed(5)
        with tf.compat.v1.device("/job:worker/task:0"):
            ds = tf.data.TFRecordDataset(path).map(parse).padded_batch(BATCH, ([None], [None, 2], [], []))
            tokens, signal, length, label = tf.compat.v1.data.make_one_shot_iterator(ds).get_next()
        with tf.compat.v1.device(tf.compat.v1.train.replica_device_setter(ps_tasks=1, worker_device="/job:worker/task:0")):
            emb = tf.compat.v1.get_variable("emb", [VOCAB, DIM], initializer=tf.compat.v1.glorot_uniform_initializer(1))
            x = tf.concat([tf.nn.embedding_lookup(emb, tokens), signal], axis=2)
            cell = tf.compat.v1.nn.rnn_cell.GRUCell(UNITS, kernel_initializer=tf.compat.v1.glorot_uniform_initializer(2))
            _, state = tf.compat.v1.nn.dynamic_rnn(cell, x, sequence_length=length, dtype=tf.float32)
            logits = tf.compat.v1.layers.dense(state, 3, kernel_initializer=tf.compat.v1.glorot_uniform_initializer(3))
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=label, logits=logits))
            step = tf.compat.v1.train.AdamOptimizer(0.05).minimize(loss)
            init = tf.compat.v1.global_variables_initializer()
        with tf.compat.v1.Session(target) as s:
            s.run(init)
            return [float(s.run([loss, step])[0]) for _ in range(8)]


def parse_batch(target, path):
    raw = [r.numpy() if hasattr(r, "numpy") else r for r in tf.compat.v1.io.tf_record_iterator(path)][:5]
    g = tf.Graph()
    with g.as_default(), tf.compat.v1.device("/job:worker/task:0"):
        serialized = tf.compat.v1.placeholder(tf.string, [None])
        lists = dict(LISTS, marks=tf.io.VarLenFeature(tf.string),
                     scores=tf.io.RaggedFeature(tf.float32, row_splits_dtype=tf.int32))
        c, f, n = tf.io.parse_sequence_example(serialized, CONTEXT, lists)
        fetch = [c["label"], f["tokens"], f["signal"], n["tokens"], f["marks"].indices, f["marks"].values,
                 f["marks"].dense_shape, f["scores"].flat_values, f["scores"].row_splits, f["scores"].values.row_splits]
        with tf.compat.v1.Session(target) as s:
            return [v.tolist() for v in s.run(fetch, {serialized: raw})]


def both(target):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "seq.tfrecord")
        records(path)
        return {"losses": train(target, path), "parsed": parse_batch(target, path)}


want, got = ffcluster.on_both([("ps", 1), ("worker", 1)], both)
worst = 0.0
for i, (a, b) in enumerate(zip(want["losses"], got["losses"])):
    print("step %d loss  tensorflow %.6f ferroflow %.6f" % (i, a, b))
    worst = max(worst, abs(a - b) / abs(a))
print("sequence model from SequenceExample records: worst relative difference %.2e" % worst)
assert worst <= 1e-4, (want["losses"], got["losses"])
assert want["parsed"] == got["parsed"], (want["parsed"], got["parsed"])
print("parse_sequence_example of 5 records: every output equal (dense, lengths, sparse, ragged)")
print("test_sequence_example: OK")
