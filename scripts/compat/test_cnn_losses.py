"""The demo's Deep MNIST CNN trained from TensorFlow's own client on a ferroflow ps + worker
cluster gives TensorFlow's results, on every kernel path this CPU has (the servers started
with FERROFLOW_ISA=avx512, avx2 and portable).

The model is the demo's without dropout (its random masks would differ): conv 5x5x32 + bias
+ relu, max pool 2x2, conv 5x5x64 + bias + relu, max pool, dense 3136-1024 + relu, dense
1024-10, sparse softmax cross-entropy, Adam(1e-3), batch 50 of the bundled MNIST training
images, 100 steps. Initial weights are constants from a seeded numpy generator (truncated
normal scaled by 1/sqrt(fan-in), zero biases). TensorFlow's runs are local; ferroflow's put
the variables on /job:ps/task:0 and the computation on /job:worker/task:0, with its
Conv2D/MatMul + BiasAdd + Relu fusions on as by default.

What is checked, and why not "the 100 losses to 1e-4 relative":
- Along TensorFlow's own 100-step trajectory, every 10 steps: ferroflow, given TensorFlow's
  weights of that step, computes the loss to 1e-5 relative (measured: under 1e-6) and, at 7
  of the 10 points at least, every variable's gradient to 1e-5 in norm (the norm of the
  difference over the gradient's; measured: about 1e-6, as close as TensorFlow's Eigen
  kernels come to its oneDNN ones); at every point each gradient's worst element within
  2e-2 of its largest. The exception is a max pool window whose two largest values differ
  in the last bits (at step 50 here, 0.9726165 against 0.9726174): a rounding difference
  in the convolution before it sends that window's gradient to the other element, which
  moves the filter gradients by up to about 1e-2 of their largest element.
- ferroflow's own 100-step loss curve: within 1e-4 of TensorFlow's over the first 20 steps,
  and the mean of the last 10 losses within 5 % of TensorFlow's. Past about step 30 no two
  implementations stay within 1e-4: Adam turns last-bit differences of near-zero gradient
  elements into whole learning-rate steps, and the curves drift apart exponentially.
  TensorFlow against itself (a second process with TF_ENABLE_ONEDNN_OPTS=0, its Eigen
  kernels) drifts by about 2e-5 by step 40 and 1e-2 by step 100; both drifts are printed."""

import gzip
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

tf.compat.v1.disable_eager_execution()

STEPS, BATCH, STRICT, EVERY = 100, 50, 20, 10
with gzip.open(os.path.join(ffcluster.ROOT, "data/mnist/train-images-idx3-ubyte.gz")) as f:
    IMAGES = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 784)[: STEPS * BATCH].astype(np.float32) / 255.0
with gzip.open(os.path.join(ffcluster.ROOT, "data/mnist/train-labels-idx1-ubyte.gz")) as f:
    LABELS = np.frombuffer(f.read(), np.uint8, offset=8)[: STEPS * BATCH].astype(np.int64)

rng = np.random.RandomState(20)


def truncated(shape):
    v = rng.randn(*shape)
    while np.any(np.abs(v) > 2):
        bad = np.abs(v) > 2
        v[bad] = rng.randn(int(bad.sum()))
    return (v / np.sqrt(np.prod(shape[:-1]))).astype(np.float32)


INIT = {
    "conv1/w": truncated([5, 5, 1, 32]), "conv1/b": np.zeros(32, np.float32),
    "conv2/w": truncated([5, 5, 32, 64]), "conv2/b": np.zeros(64, np.float32),
    "fc1/w": truncated([3136, 1024]), "fc1/b": np.zeros(1024, np.float32),
    "fc2/w": truncated([1024, 10]), "fc2/b": np.zeros(10, np.float32),
}


class Model:
    """The CNN, its Adam step, its gradients and an assign op per variable (to load weights)."""

    def __init__(self, ps_device, worker_device):
        self.graph = tf.Graph()
        with self.graph.as_default():
            with tf.device(ps_device):
                v = {k: tf.compat.v1.get_variable(k, initializer=tf.constant(a)) for k, a in INIT.items()}
            with tf.device(worker_device):
                self.x = tf.compat.v1.placeholder(tf.float32, [None, 784])
                self.y = tf.compat.v1.placeholder(tf.int64, [None])

                def conv(h, name):
                    h = tf.nn.conv2d(h, v[name + "/w"], [1, 1, 1, 1], "SAME")
                    h = tf.nn.relu(tf.nn.bias_add(h, v[name + "/b"]))
                    return tf.nn.max_pool2d(h, 2, 2, "SAME")

                h = conv(conv(tf.reshape(self.x, [-1, 28, 28, 1]), "conv1"), "conv2")
                h = tf.nn.relu(tf.matmul(tf.reshape(h, [-1, 3136]), v["fc1/w"]) + v["fc1/b"])
                logits = tf.matmul(h, v["fc2/w"]) + v["fc2/b"]
                self.loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=self.y, logits=logits))
                self.grads = tf.gradients(self.loss, [v[k] for k in INIT])
                self.step = tf.compat.v1.train.AdamOptimizer(1e-3).minimize(self.loss)
                self.feeds = {k: tf.compat.v1.placeholder(tf.float32, a.shape) for k, a in INIT.items()}
                self.load = [v[k].assign(self.feeds[k]) for k in INIT]
            self.vars = [v[k] for k in INIT]
            self.init = tf.compat.v1.global_variables_initializer()

    def batch(self, i):
        b = slice(i * BATCH, (i + 1) * BATCH)
        return {self.x: IMAGES[b], self.y: LABELS[b]}

    def train(self, sess, points=None):
        """Runs the 100 steps; returns the losses and, every EVERY steps, (step, weights, loss
        and gradients at those weights) when `points` is asked for."""
        sess.run(self.init)
        losses, at = [], []
        for i in range(STEPS):
            if points and i % EVERY == 0:
                at.append((i, sess.run(self.vars), sess.run([self.loss] + self.grads, self.batch(i))))
            losses.append(sess.run([self.loss, self.step], self.batch(i))[0])
        return np.array(losses), at

    def evaluate(self, sess, i, weights):
        """The loss and gradients at step i's batch, at the given weights."""
        sess.run(self.load, {self.feeds[k]: w for k, w in zip(INIT, weights)})
        return sess.run([self.loss] + self.grads, self.batch(i))


def growth(a, b):
    """The largest relative difference of two loss curves up to each step."""
    return np.maximum.accumulate(np.abs(a - b) / np.abs(a))


def isa_paths():
    """The kernel paths this CPU can run, best first (as ferroflow's startup would pick)."""
    flags = open("/proc/cpuinfo").read().split()
    paths = []
    if "avx512f" in flags:
        paths.append("avx512")
    if "avx2" in flags and "fma" in flags:
        paths.append("avx2")
    return paths + ["portable"]


if len(sys.argv) == 2:
    # The child run: TensorFlow's Eigen kernels (oneDNN off); its loss curve saved to argv[1].
    m = Model("/cpu:0", "/cpu:0")
    with tf.compat.v1.Session(graph=m.graph) as sess:
        np.save(sys.argv[1], m.train(sess)[0])
    sys.exit(0)

m = Model("/cpu:0", "/cpu:0")
with tf.compat.v1.Session(graph=m.graph) as sess:
    ref, points = m.train(sess, points=True)
assert ref[-1] < ref[0] * 0.3, f"TensorFlow's loss must go down: {ref[0]} -> {ref[-1]}"
with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "eigen.npy")
    env = dict(os.environ, TF_ENABLE_ONEDNN_OPTS="0")
    subprocess.run([sys.executable, os.path.abspath(__file__), out], env=env, check=True, timeout=600)
    tf_self = growth(ref, np.load(out))
print(f"TensorFlow's Eigen kernels drift from its oneDNN ones by {tf_self[STRICT - 1]:.1e} by step {STRICT}, "
      f"{tf_self[-1]:.1e} by step {STEPS}")
for isa in isa_paths():
    servers, _ = ffcluster.cluster({"ps": 1, "worker": 1}, env={"FERROFLOW_ISA": isa})
    try:
        m = Model("/job:ps/task:0", "/job:worker/task:0")
        with tf.compat.v1.Session(servers["worker"][0].target, graph=m.graph) as sess:
            got, _ = m.train(sess)
            worst_loss, exact, flips = 0.0, 0, []
            for i, weights, want in points:
                have = m.evaluate(sess, i, weights)
                worst_loss = max(worst_loss, abs(have[0] - want[0]) / abs(want[0]))
                # Each gradient's difference as a whole (norm of the difference over its norm)
                # and at its worst element (relative to its largest element).
                norm = {k: np.linalg.norm(a - b) / np.linalg.norm(a) for k, a, b in zip(INIT, want[1:], have[1:])}
                elem = {k: np.abs(a - b).max() / np.abs(a).max() for k, a, b in zip(INIT, want[1:], have[1:])}
                worst = max(norm, key=norm.get)
                if norm[worst] <= 1e-5:
                    exact += 1
                else:
                    flips.append(f"step {i}: {worst} {norm[worst]:.1e}")
                k = max(elem, key=elem.get)
                assert elem[k] <= 2e-2, f"{isa}: the gradient of {k} at step {i} is off by {elem[k]:.1e}"
            assert worst_loss <= 1e-5, f"{isa}: a loss at TensorFlow's weights is off by {worst_loss:.1e}"
            assert exact >= len(points) - 3, f"{isa}: gradients differ at {flips}"
    finally:
        for ss in servers.values():
            for s in ss:
                s.kill()
    ours = growth(ref, got)
    print(f"{isa}: at TensorFlow's weights of steps 0, {EVERY}, .., {STEPS - EVERY}: losses within {worst_loss:.1e}, "
          f"gradients within 1e-5 (norm) at {exact} of {len(points)} points (else {', '.join(flips) or '-'})")
    print(f"  own curve {got[0]:.5f} -> {got[-1]:.5f} (TensorFlow {ref[0]:.5f} -> {ref[-1]:.5f}): drift "
          f"{ours[STRICT - 1]:.1e} by step {STRICT}, {ours[-1]:.1e} by step {STEPS}")
    assert ours[STRICT - 1] <= 1e-4, f"{isa}: the first {STRICT} losses drift {ours[STRICT - 1]:.1e} from TensorFlow's"
    tail, ref_tail = got[-10:].mean(), ref[-10:].mean()
    assert abs(tail - ref_tail) <= 0.05 * ref_tail, f"{isa}: the last 10 losses average {tail}, TensorFlow's {ref_tail}"
print("test_cnn_losses: OK")
