"""The sweep's harness: builds one case's graph with TensorFlow's client (graph mode), collects
the op types it emits (forward, gradient and update ops, function bodies included), and runs
it on a local TensorFlow session and on a ferroflow ps + worker cluster, comparing every
output and every gradient.

A case is `Case(name, build)`; `build()` runs inside a fresh graph with
`tf.compat.v1.set_random_seed(1)` and returns `(feeds, outputs)`: `feeds` maps placeholders
to numpy values, `outputs` is a list of tensors. The harness adds the loss
`sum(0.5 * o * o + o)` over the float outputs and asks `tf.gradients` for the gradient of the
loss with respect to the float placeholders and the trainable variables, so every case checks
its gradient ops too. Variables get TensorFlow's initial values on ferroflow (assigned from
the local run), so random initializers need not match.
"""

import numpy as np

TIMEOUT_MS = 120_000


class Case:
    def __init__(self, name, build, grads=True, random=False, train=None, soft=False):
        self.name = name
        self.build = build
        self.grads = grads  # compare gradients too
        self.random = random  # outputs depend on unseeded randomness: compare shapes only
        self.train = train  # optional: builds a train op on the loss (an optimizer)
        # Run with allow_soft_placement, as TensorFlow itself needs for this case under
        # replica_device_setter (tf_keras RNNs colocate worker gradient ops with ps variables).
        self.soft = soft


def graph_ops(graph_def):
    """Op types of a GraphDef, its function library included."""
    ops = {n.op for n in graph_def.node}
    for f in graph_def.library.function:
        ops.update(n.op for n in f.node_def)
    fnames = {f.signature.name for f in graph_def.library.function}
    return sorted(ops - fnames)


def _float(t):
    return t.dtype.is_floating


def build_graph(tf, case, device_fn=None, target=None):
    """Returns (graph, parts) for `case`, with variables placed by `device_fn` if given.
    With `target`, tf_keras's own session (which it runs while building some functional
    models, e.g. MobileNetV3's hard-sigmoid, initializing the variables made so far) is a
    session on that cluster, as a user of a cluster sets it with `set_session`: a local one
    cannot place the ps variables."""
    g = tf.Graph()
    with g.as_default():
        tf.compat.v1.set_random_seed(1)
        if target is not None:
            # tf.compat.v1.keras is tf_keras here (TF_USE_LEGACY_KERAS=1).
            tf.compat.v1.keras.backend.set_session(tf.compat.v1.Session(target, graph=g))
        ctx = tf.compat.v1.device(device_fn) if device_fn else _null()
        with ctx:
            feeds, outs = case.build()
            outs = [o for o in outs if o is not None]
            floats = [o for o in outs if _float(o)]
            loss = None
            grads, wrt = [], []
            if floats:
                loss = tf.add_n([tf.reduce_sum(0.5 * tf.cast(o, tf.float32) ** 2 + tf.cast(o, tf.float32)) for o in floats])
                if case.grads:
                    cands = [p for p in feeds if _float(p)] + tf.compat.v1.trainable_variables()
                    try:
                        gs = tf.gradients(loss, cands)
                    except (LookupError, TypeError):  # TensorFlow has no gradient for an op
                        gs = []
                    for c, gr in zip(cands, gs):
                        if gr is None:
                            continue
                        if isinstance(gr, tf.IndexedSlices):
                            gr = tf.convert_to_tensor(gr)
                        grads.append(gr)
                        wrt.append(c)
            train_op = case.train(loss) if (case.train and loss is not None) else None
            variables = tf.compat.v1.global_variables() + tf.compat.v1.local_variables()
            assigns = []
            for v in variables:
                p = tf.compat.v1.placeholder(v.dtype.base_dtype, v.shape)
                assigns.append((p, v.assign(p) if hasattr(v, "assign") else tf.compat.v1.assign(v, p)))
            init = tf.group(tf.compat.v1.global_variables_initializer(), tf.compat.v1.local_variables_initializer(),
                            tf.compat.v1.tables_initializer())
    parts = dict(feeds=feeds, outs=outs, grads=grads, wrt=wrt, loss=loss, train=train_op, variables=variables,
                 assigns=assigns, init=init)
    return g, parts


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def run_parts(tf, sess, parts, var_values=None, steps=1):
    """Initializes, optionally assigns `var_values`, runs outputs + gradients (and `steps` train
    steps when the case has a train op, returning the losses)."""
    opts = tf.compat.v1.RunOptions(timeout_in_ms=TIMEOUT_MS)
    sess.run(parts["init"], options=opts)
    if var_values is not None:
        fd = {p: v for (p, _), v in zip(parts["assigns"], var_values)}
        if fd:
            sess.run([a for _, a in parts["assigns"]], feed_dict=fd, options=opts)
    values = sess.run(parts["variables"], options=opts) if parts["variables"] else []
    feed = {p: v for p, v in parts["feeds"].items()}
    got = sess.run(parts["outs"] + parts["grads"], feed_dict=feed, options=opts)
    losses = []
    if parts["train"] is not None:
        for _ in range(steps):
            losses.append(sess.run([parts["loss"], parts["train"]], feed_dict=feed, options=opts)[0])
    return values, got, losses


def compare(a, b, rtol=1e-4):
    """Worst relative error of `a` (ferroflow) against `b` (TensorFlow), scaled by b's largest
    magnitude; exact equality for non-float values."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return float("inf"), f"shape {a.shape} != {b.shape}"
    if b.dtype.kind not in "fc":
        if b.dtype.kind in "OSU":
            return (0.0, "") if (a == b).all() else (float("inf"), "values differ")
        return (0.0, "") if np.array_equal(a, b) else (float("inf"), "values differ")
    if a.size == 0:
        return 0.0, ""
    fa, fb = a.astype(np.float64), b.astype(np.float64)
    nan_a, nan_b = np.isnan(fa), np.isnan(fb)
    if (nan_a != nan_b).any():
        return float("inf"), "nan positions differ"
    fa, fb = np.where(nan_a, 0, fa), np.where(nan_b, 0, fb)
    inf = np.isinf(fb) | np.isinf(fa)
    if (fa[inf] != fb[inf]).any():
        return float("inf"), "inf positions differ"
    fa, fb = np.where(inf, 0, fa), np.where(inf, 0, fb)
    scale = max(np.abs(fb).max(), 1e-6)
    err = float(np.abs(fa - fb).max() / scale)
    return err, ""
