"""Partial runs (`Session.partial_run_setup` / `Session.partial_run`) from TensorFlow's client:
the same scenarios run on a TensorFlow cluster and on a ferroflow cluster (1 ps + 1 worker,
the graph split over both), and must give the same values and the same errors:

- feeds and fetches handed in over several calls, across tasks;
- two partial runs of one graph interleaved, and a partial run left unfinished;
- a stateful graph (a variable updated between the calls);
- TensorFlow's errors: a feed or fetch not in the setup, fed or fetched twice, a fetch
  that needs a feed not given yet."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

tf.compat.v1.disable_eager_execution()


def outcome(f):
    return ffcluster.outcome(tf, lambda: np.asarray(f()).tolist())


def scenarios(target):
    out = []
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:worker/task:0"):
            a = tf.compat.v1.placeholder(tf.float32, [], name="a")
            b = tf.compat.v1.placeholder(tf.float32, [], name="b")
            c = tf.compat.v1.placeholder(tf.float32, [], name="c")
            r1 = tf.add(a, b, name="r1")
        with tf.device("/job:ps/task:0"):
            r2 = tf.multiply(r1, c, name="r2")
            v = tf.compat.v1.get_variable("v", initializer=10.0, use_resource=False)
            bump = v.assign_add(r1)
        with tf.device("/job:worker/task:0"):
            r3 = tf.identity(bump * 2.0, name="r3")
        with tf.compat.v1.Session(target) as sess:
            sess.run(v.initializer)
            # Feeds and fetches over several calls, across tasks.
            h = sess.partial_run_setup([r1, r2], [a, b, c])
            out.append(outcome(lambda: sess.partial_run(h, r1, feed_dict={a: 1.0, b: 2.0})))
            out.append(outcome(lambda: sess.partial_run(h, r2, feed_dict={c: 3.0})))
            # Two partial runs interleaved.
            h1 = sess.partial_run_setup([r1, r2], [a, b, c])
            h2 = sess.partial_run_setup([r1, r2], [a, b, c])
            out.append(outcome(lambda: sess.partial_run(h1, r1, feed_dict={a: 1.0, b: 1.0})))
            out.append(outcome(lambda: sess.partial_run(h2, r1, feed_dict={a: 5.0, b: 5.0})))
            out.append(outcome(lambda: sess.partial_run(h2, r2, feed_dict={c: 2.0})))
            out.append(outcome(lambda: sess.partial_run(h1, r2, feed_dict={c: 10.0})))
            # Left unfinished: a later run is unaffected.
            h3 = sess.partial_run_setup([r1, r2], [a, b, c])
            out.append(outcome(lambda: sess.partial_run(h3, r1, feed_dict={a: 7.0, b: 7.0})))
            out.append(outcome(lambda: sess.run(r2, feed_dict={a: 1.0, b: 1.0, c: 1.0})))
            # Stateful: the variable is updated once, in the run, between the calls.
            h = sess.partial_run_setup([r1, r3], [a, b])
            out.append(outcome(lambda: sess.partial_run(h, r1, feed_dict={a: 2.0, b: 3.0})))
            out.append(outcome(lambda: sess.partial_run(h, r3)))
            out.append(outcome(lambda: sess.run(v)))
            # Errors.
            h = sess.partial_run_setup([r1, r2], [a, b])
            out.append(outcome(lambda: sess.partial_run(h, r1, feed_dict={a: 1.0, b: 2.0, c: 3.0})))
            h = sess.partial_run_setup([r1], [a, b, c])
            out.append(outcome(lambda: sess.partial_run(h, r2, feed_dict={a: 1.0, b: 2.0, c: 3.0})))
            h = sess.partial_run_setup([r1, r2], [a, b, c])
            out.append(outcome(lambda: sess.partial_run(h, r1, feed_dict={a: 1.0, b: 2.0})))
            out.append(outcome(lambda: sess.partial_run(h, r2, feed_dict={a: 1.0, c: 2.0})))
            h = sess.partial_run_setup([r1, r2], [a, b, c])
            out.append(outcome(lambda: sess.partial_run(h, r1, feed_dict={a: 1.0, b: 2.0})))
            out.append(outcome(lambda: sess.partial_run(h, r1, feed_dict={c: 2.0})))
            h = sess.partial_run_setup([r1, r2], [a, b, c])
            out.append(outcome(lambda: sess.partial_run(h, r2, feed_dict={a: 1.0, b: 2.0})))
    return out


want, got = ffcluster.on_both([("ps", 1), ("worker", 1)], scenarios)
for i, (w, g) in enumerate(zip(want, got)):
    print(f"{i:2d} TensorFlow {w}\n   ferroflow  {g}")
assert len(want) == len(got)
for i, (w, g) in enumerate(zip(want, got)):
    assert w[0] == g[0], f"scenario {i}: TensorFlow {w}, ferroflow {g}"
    if w[0] == "ok":
        assert np.allclose(w[1], g[1]), f"scenario {i}: TensorFlow {w}, ferroflow {g}"
    else:
        assert w[1] == g[1], f"scenario {i}: messages differ:\n  TensorFlow {w[1]}\n  ferroflow  {g[1]}"
print("test_partial_run: OK")
