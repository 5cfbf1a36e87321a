"""Partitioned variables on ferroflow parameter servers, driven by TensorFlow's client.

A tf.compat.v1 model whose variables are split over 2 ferroflow ps tasks by
replica_device_setter and fixed_size_partitioner: an embedding table read with
embedding_lookup (sparse gradients, sparse Adagrad updates) and a dense weight used whole
(the concatenation of its parts). It trains through a ferroflow worker, with resource and
with reference variables, and its losses equal the same graph run by TensorFlow in-process.
Then, on the same ferroflow cluster:
(a) a tf.compat.v1 Saver saves (SaveV2 of slices, run by ferroflow) and
    tf.train.load_checkpoint reads every full variable equal to what the session held;
(b) after re-initialising, Saver.restore (RestoreV2 of slices) brings the values back, and
    so does a sharded Saver (one SaveV2 per ps task, MergeV2Checkpoints joining the
    slices of each variable), as MonitoredTrainingSession saves;
(c) the same model partitioned 3 ways restores that checkpoint (each part reads the
    overlapping pieces of the saved slices) and holds the same full values;
(d) TensorFlow in-process restores the checkpoint ferroflow wrote, and ferroflow restores a
    checkpoint TensorFlow wrote.
Finally the same model trains with every other tf.compat.v1 optimizer that has sparse
updates (Momentum, Nesterov momentum, RMSProp, centered RMSProp, Adadelta, FTRL with and
without L2 shrinkage; the embedding's parts take the sparse form, the dense weight the
dense one), with resource and reference variables, and its losses equal TensorFlow's.
"""

import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

tf.compat.v1.disable_eager_execution()

VOCAB, DIM, FEAT, CLASSES, BATCH, STEPS = 20, 4, 5, 3, 8, 30
rng = np.random.RandomState(3)
DATA = [(rng.randint(0, VOCAB, size=BATCH).astype(np.int64), rng.standard_normal((BATCH, FEAT)).astype(np.float32),
         rng.randint(0, CLASSES, size=BATCH).astype(np.int64)) for _ in range(STEPS)]
FULL_NAMES = ["emb", "dense/w", "dense/b"]


def adagrad():
    return tf.compat.v1.train.AdagradOptimizer(0.1)


OPTIMIZERS = {
    "Momentum": lambda: tf.compat.v1.train.MomentumOptimizer(0.1, 0.9),
    "Nesterov": lambda: tf.compat.v1.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
    "RMSProp": lambda: tf.compat.v1.train.RMSPropOptimizer(0.01, momentum=0.5),
    "centered RMSProp": lambda: tf.compat.v1.train.RMSPropOptimizer(0.01, momentum=0.5, centered=True),
    "Adadelta": lambda: tf.compat.v1.train.AdadeltaOptimizer(1.0),
    "FTRL": lambda: tf.compat.v1.train.FtrlOptimizer(0.1, l1_regularization_strength=0.001,
                                                     l2_regularization_strength=0.01),
    "FTRL with shrinkage": lambda: tf.compat.v1.train.FtrlOptimizer(
        0.1, learning_rate_power=-0.3, l2_shrinkage_regularization_strength=0.01),
    "ProximalGradientDescent": lambda: tf.compat.v1.train.ProximalGradientDescentOptimizer(
        0.5, l1_regularization_strength=0.001, l2_regularization_strength=0.01),
    "ProximalAdagrad": lambda: tf.compat.v1.train.ProximalAdagradOptimizer(
        0.1, l1_regularization_strength=0.001, l2_regularization_strength=0.01),
    "AdagradDA": lambda: tf.compat.v1.train.AdagradDAOptimizer(
        0.1, tf.compat.v1.train.get_global_step(), l1_regularization_strength=0.001, l2_regularization_strength=0.01),
}


def build(parts, use_resource, on_cluster, optimizer=adagrad):
    g = tf.Graph()
    with g.as_default():
        dev = (tf.compat.v1.train.replica_device_setter(ps_tasks=2, worker_device="/job:worker/task:0")
               if on_cluster else None)
        with tf.compat.v1.device(dev), tf.compat.v1.variable_scope("", use_resource=use_resource):
            ids = tf.compat.v1.placeholder(tf.int64, [None], name="ids")
            x = tf.compat.v1.placeholder(tf.float32, [None, FEAT], name="x")
            y = tf.compat.v1.placeholder(tf.int64, [None], name="y")
            init = tf.compat.v1.random_normal_initializer(stddev=0.5, seed=11)
            emb = tf.compat.v1.get_variable("emb", [VOCAB, DIM], initializer=init,
                                            partitioner=tf.compat.v1.fixed_size_partitioner(parts))
            with tf.compat.v1.variable_scope("dense"):
                w = tf.compat.v1.get_variable("w", [DIM + FEAT, CLASSES], initializer=init,
                                              partitioner=tf.compat.v1.fixed_size_partitioner(parts))
                b = tf.compat.v1.get_variable("b", [CLASSES], initializer=tf.compat.v1.zeros_initializer())
            h = tf.concat([tf.nn.embedding_lookup(emb, ids), x], axis=1)
            logits = tf.matmul(h, tf.convert_to_tensor(w)) + b
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
            step = tf.compat.v1.train.get_or_create_global_step()
            train = optimizer().minimize(loss, global_step=step)
            full = {"emb": tf.convert_to_tensor(emb), "dense/w": tf.convert_to_tensor(w), "dense/b": tf.identity(b)}
            init_op = tf.compat.v1.global_variables_initializer()
            saver = tf.compat.v1.train.Saver()
            # As MonitoredTrainingSession's default: each ps task saves its own parts, then
            # MergeV2Checkpoints joins the shards (and the slices of each variable).
            sharded = tf.compat.v1.train.Saver(sharded=True)
    return g, dict(ids=ids, x=x, y=y, loss=loss, train=train, full=full, init=init_op, saver=saver, step=step,
                   sharded=sharded)


def train(sess, m):
    losses = []
    for ids, x, y in DATA:
        loss, _ = sess.run([m["loss"], m["train"]], {m["ids"]: ids, m["x"]: x, m["y"]: y})
        losses.append(loss)
    return losses


def check_close(got, want, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    assert np.allclose(got, want, rtol=1e-5, atol=1e-6), (what, np.max(np.abs(got - want)))


def run(target, use_resource, tmp):
    kind = "resource" if use_resource else "ref"
    for sub in ("tf", "ff"):
        os.makedirs(os.path.join(tmp, kind, sub))
    # TensorFlow in-process: the reference losses and a checkpoint for (d).
    g, m = build(2, use_resource, on_cluster=False)
    with tf.compat.v1.Session(graph=g) as sess:
        sess.run(m["init"])
        want_losses = train(sess, m)
        want_full = sess.run(m["full"])
        tf_prefix = m["saver"].save(sess, os.path.join(tmp, kind, "tf", "model"), global_step=STEPS)

    # Variables outlive sessions on a server (TensorFlow's default): start each graph
    # from empty containers, as a TensorFlow user would with Session.reset.
    tf.compat.v1.Session.reset(target)
    g, m = build(2, use_resource, on_cluster=True)
    with tf.compat.v1.Session(target, graph=g) as sess:
        sess.run(m["init"])
        losses = train(sess, m)
        check_close(losses, want_losses, f"{kind}: losses")
        assert losses[-1] < losses[0], losses
        full = sess.run(m["full"])
        for n in FULL_NAMES:
            check_close(full[n], want_full[n], f"{kind}: trained {n}")
        # RunOptions.output_partition_graphs: one graph per task the step ran on, joined
        # by _Send/_Recv pairs.
        meta = tf.compat.v1.RunMetadata()
        sess.run(m["loss"], {m["ids"]: DATA[0][0], m["x"]: DATA[0][1], m["y"]: DATA[0][2]},
                 options=tf.compat.v1.RunOptions(output_partition_graphs=True), run_metadata=meta)
        parts = meta.partition_graphs
        tasks = sorted({n.device.split("/device:")[0] for p in parts for n in p.node})
        assert len(parts) == 3 and tasks == ["/job:ps/replica:0/task:0", "/job:ps/replica:0/task:1",
                                            "/job:worker/replica:0/task:0"], (len(parts), tasks)
        assert all(any(n.op in ("_Send", "_Recv") for n in p.node) for p in parts)
        meta = tf.compat.v1.RunMetadata()
        sess.run(m["full"], run_metadata=meta)
        assert len(meta.partition_graphs) == 0, "partition graphs only when asked for"
        devices = sorted({v.device for v in tf.compat.v1.global_variables() if v.op.name.startswith("emb")})
        assert devices == ["/job:ps/task:0", "/job:ps/task:1"], devices
        # (a) ferroflow saves the slices; TensorFlow reads the full variables.
        prefix = m["saver"].save(sess, os.path.join(tmp, kind, "ff", "model"), global_step=STEPS)
        reader = tf.train.load_checkpoint(prefix)
        shapes = reader.get_variable_to_shape_map()
        assert set(FULL_NAMES) <= set(shapes), shapes
        assert shapes["emb"] == [VOCAB, DIM], shapes
        for n in FULL_NAMES:
            check_close(reader.get_tensor(n), full[n], f"{kind}: saved {n}")
        listing = subprocess.run([ffcluster.binary(), "checkpoint", "inspect", prefix], capture_output=True,
                                 text=True, timeout=60, check=True).stdout
        assert "emb\tfloat32\t[20,4]\tstored as 2 slices: 0,10:0,4 10,10:0,4" in listing, listing
        # (b) restore after re-initialising.
        sess.run(m["init"])
        assert not np.allclose(sess.run(m["full"])["emb"], full["emb"])
        m["saver"].restore(sess, prefix)
        again = sess.run(m["full"])
        for n in FULL_NAMES:
            assert np.array_equal(again[n], full[n]), f"{kind}: restored {n}"
        assert sess.run(m["step"]) == STEPS
        # A sharded save: one SaveV2 per ps task, merged; read by TensorFlow, restored.
        sharded = m["sharded"].save(sess, os.path.join(tmp, kind, "ff", "sharded"), global_step=STEPS)
        reader = tf.train.load_checkpoint(sharded)
        for n in FULL_NAMES:
            assert np.array_equal(reader.get_tensor(n), full[n]), f"{kind}: sharded save of {n}"
        sess.run(m["init"])
        m["sharded"].restore(sess, sharded)
        again = sess.run(m["full"])
        for n in FULL_NAMES:
            assert np.array_equal(again[n], full[n]), f"{kind}: sharded restore of {n}"

    # (c) three parts restore a two-part checkpoint, on ferroflow; (d) both directions.
    tf.compat.v1.Session.reset(target)
    g, m = build(3, use_resource, on_cluster=True)
    with tf.compat.v1.Session(target, graph=g) as sess:
        for p, values in ((prefix, full), (tf_prefix, want_full)):
            sess.run(m["init"])
            m["saver"].restore(sess, p)
            got = sess.run(m["full"])
            for n in FULL_NAMES:
                check_close(got[n], values[n], f"{kind}: 3 parts from {p}: {n}")
    g, m = build(3, use_resource, on_cluster=False)
    with tf.compat.v1.Session(graph=g) as sess:
        m["saver"].restore(sess, prefix)
        got = sess.run(m["full"])
        for n in FULL_NAMES:
            assert np.array_equal(got[n], full[n]), f"{kind}: TensorFlow restoring ferroflow's {n}"
    print(f"{kind} variables: losses {losses[0]:.4f} -> {losses[-1]:.4f} equal TensorFlow's; "
          "slices saved, restored 2- and 3-way, read by TensorFlow")


def other_optimizers(target):
    for name, make in OPTIMIZERS.items():
        for use_resource in (True, False):
            g, m = build(2, use_resource, on_cluster=False, optimizer=make)
            with tf.compat.v1.Session(graph=g) as sess:
                sess.run(m["init"])
                want = train(sess, m)
            tf.compat.v1.Session.reset(target)
            g, m = build(2, use_resource, on_cluster=True, optimizer=make)
            ops = {op.type for op in g.get_operations()}
            assert any("SparseApply" in t for t in ops), (name, sorted(ops))
            with tf.compat.v1.Session(target, graph=g) as sess:
                sess.run(m["init"])
                losses = train(sess, m)
            kind = "resource" if use_resource else "ref"
            check_close(losses, want, f"{name} ({kind}): losses")
            # The batches are random, so the loss need not fall for every optimizer in 30
            # steps; equality with TensorFlow is the check. The variables did move:
            assert np.ptp(losses) > 1e-3, (name, losses)
        print(f"{name}: losses {losses[0]:.4f} -> {losses[-1]:.4f} equal TensorFlow's "
              f"({', '.join(sorted(t for t in ops if 'Apply' in t))})")


servers, flag = ffcluster.cluster({"ps": 2, "worker": 1})
tmp = tempfile.mkdtemp(prefix="ff-partitioned-")
try:
    for use_resource in (True, False):
        run(servers["worker"][0].target, use_resource, tmp)
    other_optimizers(servers["worker"][0].target)
    print("test_partitioned: OK")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
    for ss in servers.values():
        for s in ss:
            s.kill()
