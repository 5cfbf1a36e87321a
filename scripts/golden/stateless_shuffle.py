"""Golden values for StatelessShuffle (tf.random.experimental.stateless_shuffle) from
TensorFlow 2.21's CPU kernel, written to crates/kernels/tests/golden/stateless_shuffle.json:
vectors, matrices and higher ranks of every kind of element, keys and counters from seeds
(StatelessRandomGetKeyCounter) and raw ones, algorithms 1 (Philox) and 3 (auto-select).
Run it as every generator here runs (common.py's header says how)."""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from common import case_list, raw_op_case, write  # noqa: E402

R = tf.raw_ops
rng = np.random.RandomState(20261208)
cases, case = case_list(raw_op_case)


def key_counter(seed):
    k, c = R.StatelessRandomGetKeyCounter(seed=np.array(seed, np.int64))
    return k.numpy(), c.numpy()


def shuffle(name, value, key, counter, alg, dtype):
    case("StatelessShuffle_" + name, "StatelessShuffle",
         [("value", value), ("key", np.asarray(key, np.uint64)), ("counter", np.asarray(counter, np.uint64)),
          ("alg", np.int32(alg))], {"T": dtype})


seeds = [(1, 2), (0, 0), (7, 123456789), (-5, 3), (2**40 + 11, -2**35)]
sizes = [2, 3, 5, 10, 17, 64, 257, 1000]
for s in seeds:
    key, counter = key_counter(s)
    for n in sizes:
        shuffle("seed_%d_%d_n%d" % (s[0] & 0xFFFF, s[1] & 0xFFFF, n), np.arange(n, dtype=np.int64), key, counter,
                1 if n % 2 else 3, "int64")
# Raw keys and counters (the counter's high word in play), one-element and empty inputs.
for i in range(6):
    key = rng.randint(0, 2**63, 1, dtype=np.int64).astype(np.uint64)
    counter = rng.randint(0, 2**63, 2, dtype=np.int64).astype(np.uint64) * np.uint64(2) + np.uint64(i % 2)
    shuffle("raw_%d" % i, rng.randn(33).astype(np.float32), key, counter, 1, "float32")
key, counter = key_counter((3, 4))
shuffle("matrix_f64", rng.randn(9, 4), key, counter, 1, "float64")
shuffle("rank3_i32", rng.randint(-9, 9, (6, 2, 3)).astype(np.int32), key, counter, 3, "int32")
shuffle("rank3_one_column", rng.randn(12, 1, 1).astype(np.float32), key, counter, 1, "float32")
shuffle("bool", rng.rand(20) > 0.5, key, counter, 1, "bool")
shuffle("uint8_rows", rng.randint(0, 255, (7, 5)).astype(np.uint8), key, counter, 1, "uint8")
shuffle("strings", np.array([b"s%d" % i for i in range(11)], dtype=object), key, counter, 1, "string")
shuffle("scalar", np.float32(2.5), key, counter, 1, "float32")
shuffle("one_row", rng.randn(1, 4).astype(np.float32), key, counter, 1, "float32")
shuffle("empty_rows", np.zeros((0, 3), np.float32), key, counter, 1, "float32")
shuffle("rows_of_nothing", np.zeros((5, 0), np.float32), key, counter, 1, "float32")
write("stateless_shuffle", cases)
