"""`tf.compat.v1.SparseConditionalAccumulator` and `SyncReplicasOptimizer` with sparse
gradients, from TensorFlow's Python client, on a TensorFlow cluster and on a ferroflow
cluster (1 ps + 1 worker each; every accumulator lives on the ps and is fed and taken from
the worker), in TensorFlow 1.x behaviour (`disable_v2_behavior`) and in TensorFlow 2 graph
mode (`disable_eager_execution` only), each mode in its own process. Both clusters must
give the same values and the same error classes (with TensorFlow's reason in ferroflow's
message where the accumulator itself reports it):

- apply/take of float16/32/64 indexed slices: the per-index MEAN (each index divided by the
  number of gradients that had it), SUM, TensorFlow's one-pass merge of unsorted and
  repeated indices, unknown and rank-0 shapes (`-1` first in the dense shape);
- stale gradients dropped (even malformed ones) after `set_global_step`, `num_accumulated`;
- a take that waits: served by applies from other runs while it blocks, or ended by the
  step's deadline (DeadlineExceeded) and then served by a later take;
- TensorFlow's shape and argument errors, and the int32 accumulator TensorFlow has no
  kernel for;
- training: two replicas (two graphs, two sessions, lockstep) with
  `SyncReplicasOptimizer(GradientDescentOptimizer, replicas_to_aggregate=2)` on an
  `embedding_lookup` of a ref variable held by the ps (sparse gradients through a
  `SparseConditionalAccumulator`) plus a dense weight; losses, final variables and global
  step equal TensorFlow's to 1e-4."""

import contextlib
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

PS, WORKER = "/job:ps/task:0", "/job:worker/task:0"
TIMEOUT_MS = 60000


def values_cases():
    """name -> (dtype name, accumulator shape, reduction, [(step, indices, values, shape or
    None)], num_required, global step to set first or None)."""
    import numpy as np

    return {
        "mean_float32_overlapping": ("float32", [6, 3], "MEAN", [
            (0, [0, 2, 5], [[0.75, 1.078125, -1.59375], [1.859375, -0.9375, 1.3125], [0.375, -0.375, -0.546875]], [6, 3]),
            (0, [2, 3], [[0.90625, 0.234375, -1.625], [-0.859375, -0.59375, -0.265625]], None),
            (0, [0, 3, 5], [[-1.328125, 1.421875, 0.140625], [0.625, 1.609375, -0.921875], [0.765625, 0.0, 0.125]],
             [6, 3])], 3, None),
        "sum_float64": ("float64", [6, 3], "SUM", [
            (0, [1, 4], [[0.1, -0.2, 0.3], [1.0 / 3, 2.0 / 3, -1.0 / 7]], None),
            (0, [0, 1, 4], [[0.5, 0.25, 0.125], [1e-3, 2e-3, 3e-3], [-0.1, -0.2, -0.3]], None)], 2, None),
        "mean_float16": ("float16", [4, 2], "MEAN", [
            (0, [1], [[1.0, 2.0]], None), (0, [1, 2], [[1.0, 3.0], [0.1, 0.2]], None), (0, [1], [[1.0, 3.0]], None)],
            3, None),
        "unsorted_repeated": ("float32", [4, 2], "MEAN", [
            (0, [3, 1, 3], [[1, 1], [2, 2], [3, 3]], None), (0, [3, 3], [[10, 10], [20, 20]], None),
            (0, [0, 3], [[5, 5], [7, 7]], None)], 3, None),
        "unknown_rank3": ("float64", None, "MEAN", [
            (0, [2, 0], [[[0, 1], [2, 3]], [[4, 5], [6, 7]]], None), (0, [0, 2], [[[1, 1], [1, 1]]] * 2, None)],
            2, None),
        "rank0_like_sync_replicas": ("float32", [], "MEAN", [
            (0, [4], [[0.5, 0.25]], [9, 2]), (0, [1, 4], [[1.0, 1.0], [0.5, 0.75]], [9, 2])], 2, None),
        "unknown_first_dim": ("float32", [None, 2], "SUM", [(0, [100], [[1.0, 2.0]], [7, 2])], 1, None),
        "stale_dropped": ("float32", [4, 2], "MEAN", [
            (3, [0], [[100.0, 100.0]], None), (3, [9, 9], [[1.0]], None), (4, [2], [[1.5, 2.5]], None),
            (9, [2], [[0.5, 0.5]], None)], 2, 4),
        "empty_gradient": ("float32", [4, 2], "MEAN", [(0, [], np.zeros((0, 2)), None), (0, [3], [[2.0, 4.0]], None)],
                           2, None),
    }


def error_cases():
    """name -> (accumulator shape, [gradients as in values_cases], compare the message?)."""
    return {
        "index_out_of_range": ([4, 2], [(0, [0, 5], [[1, 2], [3, 4]], None)], True),
        "shape_dim_mismatch": ([4, 2], [(0, [0], [[1, 2]], [3, 2])], True),
        "shape_rank_too_small": ([4, 2], [(0, [0], [[1, 2]], [4])], True),
        "values_dim_mismatch": ([4, 2], [(0, [0], [[1, 2, 3]], None)], True),
        "values_rank_too_small": ([4, 2], [(0, [0], [1.0], None)], True),
        "nnz_mismatch": ([4, 2], [(0, [0, 1], [[1, 2]], None)], True),
        "indices_not_vector": ([4, 2], [(0, [[0]], [[1, 2]], None)], True),
        "values_0_dim": ([4, 2], [(0, [], 1.0, None)], True),
        "values_rank_vs_sum": (None, [(0, [0], [[1, 2]], None), (0, [1], [[[1, 2]]], None)], True),
        "row_vs_sum": (None, [(0, [0], [[1, 2]], None), (0, [1], [[1, 2, 3]], None)], True),
    }


def np_dtype(name):
    import numpy as np
    return getattr(np, name)


def build_acc(tf, name, dtype, shape, reduction="MEAN"):
    with tf.device(PS):
        return tf.compat.v1.SparseConditionalAccumulator(
            getattr(tf, dtype), shape=None if shape is None else tf.TensorShape(shape),
            shared_name=f"{name}_acc", name=f"{name}_acc", reduction_type=reduction)


def apply_op(tf, acc, dtype, step, idx, vals, shape):
    import numpy as np
    dyn = tf.compat.v1.placeholder_with_default  # hides static shapes: the kernel checks them
    with tf.device(WORKER):
        i = dyn(np.array(idx, np.int64), None)
        v = dyn(np.array(vals, np_dtype(dtype)), None)
        s = None if shape is None else dyn(np.array(shape, np.int64), None)
        return acc.apply_grad(i, v, s, local_step=step)


def take_op(tf, acc, n):
    with tf.device(WORKER):
        return acc.take_grad(n)


def out(r):
    idx, vals, shape = r
    return [idx.tolist(), [float(x) for x in vals.reshape(-1)], list(vals.shape), shape.tolist()]


def scenarios(target):
    import tensorflow as tf

    res = {}
    opts = tf.compat.v1.RunOptions(timeout_in_ms=TIMEOUT_MS)

    def session(g):
        return tf.compat.v1.Session(target, graph=g)

    @contextlib.contextmanager
    def accumulator(name, dtype, shape, grads, reduction="MEAN"):
        """A new graph, the default one inside, with the accumulator `name` and an apply op
        for each of `grads`: yields (graph, accumulator, apply ops)."""
        g = tf.Graph()
        with g.as_default():
            acc = build_acc(tf, name, dtype, shape, reduction)
            yield g, acc, [apply_op(tf, acc, dtype, *a) for a in grads]

    for name, (dtype, shape, red, grads, n, gstep) in values_cases().items():
        with accumulator(name, dtype, shape, grads, red) as (g, acc, applies):
            take, num = take_op(tf, acc, n), acc.num_accumulated()
            with session(g) as s:
                if gstep is not None:
                    s.run(acc.set_global_step(gstep), options=opts)
                for a in applies:
                    s.run(a, options=opts)
                before = int(s.run(num, options=opts))
                res[name] = [before, out(s.run(take, options=opts)), int(s.run(num, options=opts))]

    # Stale after a take: the take advanced the accumulator's step from 4 to 5.
    grads = [(4, [1], [[1.0, 1.0]], None), (5, [3], [[2.0, 2.0]], None)]
    with accumulator("after_take", "float32", [4, 2], grads) as (g, acc, (a4, a5)):
        take, num = take_op(tf, acc, 1), acc.num_accumulated()
        with session(g) as s:
            s.run(acc.set_global_step(4), options=opts)
            s.run(a4, options=opts)
            first = out(s.run(take, options=opts))
            s.run(a4, options=opts)
            dropped = int(s.run(num, options=opts))
            s.run(a5, options=opts)
            res["stale_after_take"] = [first, dropped, out(s.run(take, options=opts))]

    # A take blocked in one run, served by applies from other runs.
    grads = [(0, [1, 4], [[1.0, 2.0], [3.0, 4.0]], None), (0, [0, 4], [[5.0, 6.0], [7.0, 8.0]], None)]
    with accumulator("blocking", "float32", [5, 2], grads) as (g, acc, (a1, a2)):
        take = take_op(tf, acc, 2)
        with session(g) as s:
            got = {}

            def taker():
                try:
                    got["v"] = out(s.run(take, options=opts))
                except tf.errors.OpError as e:
                    got["v"] = ffcluster.error_result(e)

            t = threading.Thread(target=taker)
            t.start()
            time.sleep(0.5)
            s.run(a1, options=opts)
            time.sleep(0.2)
            waiting = t.is_alive()
            s.run(a2, options=opts)
            t.join(timeout=60)
            res["take_served_while_blocked"] = [waiting, got.get("v", "hung")]

    # A take that times out (the step's deadline), then one that is served.
    grads = [(0, [2], [[1.0, 2.0]], None), (0, [2], [[3.0, 4.0]], None)]
    with accumulator("deadline", "float32", [4, 2], grads) as (g, acc, (a1, a2)):
        take, num = take_op(tf, acc, 2), acc.num_accumulated()
        with session(g) as s:
            s.run(a1, options=opts)
            try:
                r = out(s.run(take, options=tf.compat.v1.RunOptions(timeout_in_ms=500)))
            except tf.errors.OpError as e:
                r = ffcluster.error_result(e, message=False)
            left = int(s.run(num, options=opts))
            s.run(a2, options=opts)
            res["take_deadline_then_served"] = [r, left, out(s.run(take, options=opts))]

    for name, (shape, grads, msg) in error_cases().items():
        with accumulator(name, "float32", shape, grads) as (g, acc, applies):
            num = acc.num_accumulated()
            with session(g) as s:
                try:
                    for a in applies:
                        s.run(a, options=opts)
                    res[name] = "no error"
                except tf.errors.OpError as e:
                    res[name] = [ffcluster.error_result(e, msg), int(s.run(num, options=opts))]

    with accumulator("num_required_0", "float32", [4, 2], [(0, [1], [[1.0, 1.0]], None)]) as (g, acc, (a,)):
        with session(g) as s:
            s.run(a, options=opts)
            try:
                res["num_required_0"] = out(s.run(take_op(tf, acc, 0), options=opts))
            except tf.errors.OpError as e:
                res["num_required_0"] = ffcluster.error_result(e)

    with accumulator("int32_dtype", "int32", [4, 2], [(0, [1], [[1, 1]], None)]) as (g, acc, (a,)):
        with session(g) as s:
            try:
                s.run(a, options=opts)
                res["int32_dtype"] = "no error"
            except tf.errors.OpError as e:
                # TensorFlow names its kernel registry; compare the class only.
                res["int32_dtype"] = ffcluster.error_result(e, message=False)
    return res


# ---- training: SyncReplicasOptimizer with sparse gradients ----

STEPS = 6
JOBS = [("ps", 1), ("worker", 1)]
LR = 0.2
V, D = 8, 3


def batch(r, t):
    import numpy as np
    # Sorted, distinct ids (so each gradient's indices are too) that overlap between the
    # replicas: the update is the per-index mean of both replicas' rows. Each id has one
    # target, so the model can fit them and the loss falls.
    ids = sorted({(2 * (t % 2) + r) % V, (3 * (t % 2) + 1) % V, (4 * r + 2) % V})
    y = np.array([0.3 * i - 1.0 for i in ids], np.float32)
    return np.array(ids, np.int64), y


def build_replica(tf, r):
    import numpy as np
    g = tf.Graph()
    with g.as_default():
        with tf.device(PS):
            step = tf.compat.v1.train.get_or_create_global_step()
            emb = tf.compat.v1.Variable(
                (np.arange(V * D, dtype=np.float32).reshape(V, D) % 7 - 3.0) / 4.0, name="emb", use_resource=False)
            w = tf.compat.v1.Variable(np.array([0.5, -0.25, 0.75], np.float32), name="w")
        with tf.compat.v1.name_scope(f"replica_{r}"):
            with tf.device(WORKER):
                ids = tf.compat.v1.placeholder(tf.int64, [None], name="ids")
                y = tf.compat.v1.placeholder(tf.float32, [None], name="y")
                pred = tf.reduce_sum(tf.nn.embedding_lookup(emb, ids) * w, axis=1)
                loss = tf.reduce_mean(tf.square(pred - y))
                opt = tf.compat.v1.train.SyncReplicasOptimizer(
                    tf.compat.v1.train.GradientDescentOptimizer(LR), replicas_to_aggregate=2, total_num_replicas=2)
                gv = opt.compute_gradients(loss)
            # The accumulators, the local step and the update on the ps (TensorFlow 2 graph
            # mode makes the local step a resource variable; see test_sync_graph.py).
            with tf.device(PS):
                train = opt.apply_gradients(gv, global_step=step)
            opt.ready_for_local_init_op.mark_used()  # not run here; TensorFlow logs it otherwise
        sparse = [type(gr).__name__ for gr, v in gv if v is emb]
        m = dict(graph=g, ids=ids, y=y, loss=loss, train=train, opt=opt, emb=emb, w=w, step=step, sparse=sparse)
        ffcluster.sync_replicas_ops(tf, m)
        m["accs"] = sorted({n.type for n in g.get_operations() if n.type.endswith("ConditionalAccumulator")})
    return m


def train(target):
    import tensorflow as tf

    models = [build_replica(tf, 0), build_replica(tf, 1)]
    sessions = [tf.compat.v1.Session(target, graph=m["graph"]) for m in models]
    opts = tf.compat.v1.RunOptions(timeout_in_ms=TIMEOUT_MS)
    chief = models[0]
    try:
        chief_queue_runner = ffcluster.start_sync_replicas(sessions, models, STEPS, opts)
        losses = [[], []]
        barrier = threading.Barrier(2, timeout=120)

        def replica(i):
            m = models[i]
            for t in range(STEPS):
                ids, y = batch(i, t)
                feed = {m["ids"]: ids, m["y"]: y}
                # Both replicas read the parameters of update t before either applies.
                losses[i].append(float(sessions[i].run(m["loss"], feed_dict=feed, options=opts)))
                barrier.wait()
                sessions[i].run(m["train"], feed_dict=feed, options=opts)
                barrier.wait()

        fns = [chief_queue_runner] + [lambda i=i: replica(i) for i in range(2)]
        errors = ffcluster.run_threads(fns, 180, "a replica or the chief queue runner", barrier)
        if errors:
            return ("training failed", [f"{type(e).__name__}: {e}"[:600] for e in errors])
        emb, w, step = sessions[0].run([chief["emb"], chief["w"], chief["step"]], options=opts)
        return {"losses": losses, "emb": [float(x) for x in emb.reshape(-1)], "w": [float(x) for x in w],
                "global_step": int(step), "emb_gradient": chief["sparse"], "accumulators": chief["accs"]}
    finally:
        for s in sessions:
            s.close()


def child(mode):
    ffcluster.tf_in_mode(mode)
    want, got = ffcluster.on_both(JOBS, scenarios)
    n = ffcluster.compare(want, got, mode)
    # Spot checks on TensorFlow's own answers (the semantics the comparison relies on).
    assert want["mean_float32_overlapping"][1][0] == [0, 2, 3, 5], want["mean_float32_overlapping"]
    assert want["unsorted_repeated"][1][0] == [0, 3, 1, 3], want["unsorted_repeated"]
    assert want["rank0_like_sync_replicas"][1][3] == [-1, 2], want["rank0_like_sync_replicas"]
    assert want["take_served_while_blocked"][0] is True, want["take_served_while_blocked"]
    assert want["take_deadline_then_served"][0] == ("DeadlineExceededError", None), want["take_deadline_then_served"]
    assert all(isinstance(want[k], list) for k in error_cases()), {k: want[k] for k in error_cases()}
    want_t, got_t = ffcluster.on_both(JOBS, train)
    assert isinstance(want_t, dict), want_t
    assert want_t["emb_gradient"] == ["IndexedSlices"], want_t["emb_gradient"]
    assert "SparseConditionalAccumulator" in want_t["accumulators"], want_t["accumulators"]
    assert want_t["global_step"] == STEPS, want_t
    assert want_t["losses"][0][-1] < want_t["losses"][0][0], want_t["losses"]
    ffcluster.compare({"training": want_t}, {"training": got_t}, mode)
    print(f"  {mode}: {n} accumulator scenarios and {STEPS} synchronous training steps equal TensorFlow's "
          f"(losses replica 0: {[round(x, 4) for x in want_t['losses'][0]]})")


if __name__ == "__main__":
    ffcluster.main(__file__, child)
