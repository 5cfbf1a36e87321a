"""TensorFlow 2 client programs that drive a cluster through the remote eager service
(tensorflow.eager.EagerService); test_eager_service.py runs each against TensorFlow's servers
and against ferroflow's and compares what they print. Usage:

    python eager_clients.py SCENARIO '{"ps": [...], "worker": [...], "chief": [...]}'

Each scenario prints one JSON line (prefixed RESULT) with its values."""
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402


def remote_ops(spec):
    """Eager ops, a variable and a tf.function on a remote task
    (tf.config.experimental_connect_to_cluster)."""
    tf.config.experimental_connect_to_cluster(tf.train.ClusterSpec({"worker": spec["worker"]}))
    out = {}
    with tf.device("/job:worker/task:0"):
        x = tf.constant([1.0, 2.0])
        y = x * 2.0 + 1.0
        out["device"] = y.device
        out["y"] = y.numpy().tolist()
        v = tf.Variable([1.0, 2.0, 3.0])
        u = tf.Variable(10.0)
        v.assign_add([1.0, 1.0, 1.0])
        out["v"] = v.numpy().tolist()
        out["u"] = float(u.numpy())

        @tf.function
        def f(a):
            return tf.reduce_sum(a * a) + tf.reduce_sum(v) * u

        out["f"] = float(f(y).numpy())
        m = tf.linalg.matmul(tf.reshape(tf.range(6, dtype=tf.float32), [2, 3]), tf.ones([3, 2]))
        out["matmul"] = m.numpy().tolist()
        s = tf.strings.join(["a", "b"], separator="-")
        out["string"] = s.numpy().decode()
        try:
            tf.reshape(x, [3]).numpy()
            out["error"] = None
        except tf.errors.InvalidArgumentError:
            out["error"] = "InvalidArgumentError"
    return out


def packed(spec):
    """A packed handle (SendPackedHandle): the handles of two variables on two workers packed
    into one tensor (what tf.distribute's packed variables are) and given to functions that
    run on either worker. TensorFlow picks the element an op on it uses by the device of the
    op's consumer (an op's own device request is overridden), and for an op without
    consumers by the device the function runs on; `step` reads one element twice for two
    consumers on two devices."""
    from tensorflow.python.framework import ops
    tf.config.experimental_connect_to_cluster(tf.train.ClusterSpec({"worker": spec["worker"]}))
    w0, w1 = "/job:worker/task:0", "/job:worker/task:1"
    with tf.device(w0):
        v0 = tf.Variable([1.0, 2.0])
    with tf.device(w1):
        v1 = tf.Variable([10.0, 20.0])
    p = ops.pack_eager_tensors([v0.handle, v1.handle])

    @tf.function
    def reads():
        with tf.device(w0):
            r0 = tf.raw_ops.ReadVariableOp(resource=p, dtype=tf.float32)
        with tf.device(w1):
            r1 = tf.raw_ops.ReadVariableOp(resource=p, dtype=tf.float32) * 100.0
        return r0 + r1

    @tf.function
    def write(scale):
        tf.raw_ops.AssignAddVariableOp(resource=p, value=tf.ones([2]) * scale)
        return scale

    @tf.function
    def step(scale):
        with tf.device(w0):
            r0 = tf.raw_ops.ReadVariableOp(resource=p, dtype=tf.float32)
        with tf.device(w1):
            r1 = tf.raw_ops.ReadVariableOp(resource=p, dtype=tf.float32)
            tf.raw_ops.AssignAddVariableOp(resource=p, value=r0 * scale)
        return r0 + r1

    out = {"packed_device": p.device, "reads": [], "sums": []}
    for d in (w0, w1):
        with tf.device(d):
            out["reads"].append(reads().numpy().tolist())
    with tf.device(w1):
        write(tf.constant(2.0))
    with tf.device(w0):
        write(tf.constant(3.0))
        out["sums"] = [step(tf.constant(2.0)).numpy().tolist() for _ in range(3)]
    out["v0"], out["v1"] = v0.numpy().tolist(), v1.numpy().tolist()
    return out


def _strategy(spec):
    resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(
        tf.train.ClusterSpec(spec), task_type="chief", task_id=0, rpc_layer="grpc")
    return tf.distribute.experimental.ParameterServerStrategy(resolver)


def _coordinator(spec):
    """The ParameterServerStrategy of `spec` and a ClusterCoordinator scheduling on it."""
    strategy = _strategy(spec)
    return strategy, tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)


def pss_loop(spec):
    """ParameterServerStrategy + ClusterCoordinator: a custom training loop (schedule/join)
    whose variables live on the ps tasks."""
    strategy, coord = _coordinator(spec)
    rng = np.random.RandomState(0)
    xs = rng.randn(32, 4).astype("float32")
    ys = (xs @ rng.randn(4, 1) + 0.5).astype("float32")
    with strategy.scope():
        w = tf.Variable(tf.zeros([4, 1]), name="w")
        b = tf.Variable(0.0, name="b")
    x, yt = tf.constant(xs), tf.constant(ys)

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((tf.matmul(x, w) + b - yt) ** 2)
        gw, gb = tape.gradient(loss, [w, b])
        w.assign_sub(0.1 * gw)
        b.assign_sub(0.1 * gb)
        return loss

    losses = []
    for _ in range(6):
        r = coord.schedule(step)
        coord.join()
        losses.append(float(r.fetch()))
    return {"losses": losses, "b": float(b.numpy()), "w_device": w.device}


def pss_fit(spec):
    """Keras (tf_keras) model.fit on ParameterServerStrategy with steps_per_execution."""
    import tf_keras
    strategy = _strategy(spec)
    rng = np.random.RandomState(0)
    x = rng.randn(64, 10).astype("float32")
    y = (x @ rng.randn(10, 1)).astype("float32")
    with strategy.scope():
        tf_keras.utils.set_random_seed(1)
        model = tf_keras.Sequential([
            tf_keras.layers.Dense(16, activation="relu", input_shape=(10,)),
            tf_keras.layers.Dense(1),
        ])
        model.compile(optimizer=tf_keras.optimizers.SGD(0.05), loss="mse", steps_per_execution=2)

    def dataset_fn(_):
        return tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(8)

    h = model.fit(tf_keras.utils.experimental.DatasetCreator(dataset_fn), epochs=3, steps_per_epoch=8, verbose=0)
    return {"loss": h.history["loss"]}


def pss_fit_gru(spec):
    """A user's text model on ParameterServerStrategy: Embedding, GRU (a while loop over
    TensorLists inside the step function), LayerNormalization and Adam, model.fit with
    steps_per_execution (a loop around that loop)."""
    import tf_keras
    strategy = _strategy(spec)
    rng = np.random.RandomState(0)
    x = rng.randint(0, 200, size=(256, 12)).astype("int32")
    y = rng.randint(0, 4, size=(256,)).astype("int64")
    with strategy.scope():
        tf_keras.utils.set_random_seed(3)
        model = tf_keras.Sequential([
            tf_keras.layers.Embedding(200, 16, input_length=12),
            tf_keras.layers.GRU(24),
            tf_keras.layers.LayerNormalization(),
            tf_keras.layers.Dense(4),
        ])
        model.compile(optimizer=tf_keras.optimizers.Adam(0.01),
                      loss=tf_keras.losses.SparseCategoricalCrossentropy(from_logits=True), steps_per_execution=4)

    def dataset_fn(_):
        return tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(32)

    h = model.fit(tf_keras.utils.experimental.DatasetCreator(dataset_fn), epochs=3, steps_per_epoch=8, verbose=0)
    return {"loss": h.history["loss"]}


def pss_two_workers(spec):
    """Two workers train asynchronously; the result is checked for progress, not equality."""
    strategy, coord = _coordinator(spec)
    with strategy.scope():
        w = tf.Variable(5.0)

    @tf.function
    def step():
        w.assign_add(1.0)
        return w.read_value()

    for _ in range(20):
        coord.schedule(step)
    coord.join()
    return {"w": float(w.numpy())}


def pss_long(spec):
    """300 increments scheduled in rounds of 10, printing progress (the worker-failure test
    kills and restarts a worker meanwhile). ClusterCoordinator retries a closure whose
    worker failed, so an increment that reached the ps before its worker died may count
    twice (at-least-once, as on TensorFlow's servers)."""
    strategy, coord = _coordinator(spec)
    with strategy.scope():
        w = tf.Variable(0.0)

    @tf.function
    def step():
        # Some work on the worker (tens of ms), so the test's kill lands mid-training.
        x = tf.random.stateless_normal([400, 400], seed=[1, 2])
        for _ in range(4):
            x = tf.tanh(tf.matmul(x, x))
        w.assign_add(1.0 + 0.0 * tf.reduce_sum(x))
        return w.read_value()

    for r in range(30):
        for _ in range(10):
            coord.schedule(step)
        coord.join()
        print(f"PROGRESS {10 * (r + 1)}", flush=True)
    return {"w": float(w.numpy())}


def pss_ps_lost(spec):
    """pss_long's training, whose ps the test kills after a few rounds: the coordinator
    must end the job with an error (TensorFlow's PSUnavailableError), not hang."""
    try:
        return pss_long(spec)
    except Exception as e:  # noqa: BLE001 - the error class is the result
        return {"error": type(e).__name__, "message": str(e).splitlines()[0][:300]}


if __name__ == "__main__":
    result = globals()[sys.argv[1]](json.loads(sys.argv[2]))
    print("RESULT " + json.dumps(result), flush=True)
