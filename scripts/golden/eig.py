"""Golden eigen decompositions from TensorFlow 2.21's `Eig` (tf.linalg.eig), written to
crates/kernels/tests/data/linalg/eig.json: real float32/float64 and complex64/complex128
matrices (random ones of sizes 1-7, a rotation, triangular ones, a Jordan-like block, a
matrix with a repeated eigenvalue, a batch), TensorFlow's eigenvalues and eigenvectors.
Eigenvectors are unique up to a complex phase and eigenvalues of equal modulus may be
ordered differently, so crates/kernels/src/linalg/eig_tests.rs compares the eigenvalues as
sets, the eigenvectors up to phase, and checks A v = lambda v. Also the error a NaN input
gives. Run it as every generator here runs (common.py's header says how)."""
import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "crates", "kernels", "tests", "data", "linalg", "eig.json")
rng = np.random.RandomState(20261207)


def pairs(a):
    a = np.asarray(a).reshape(-1)
    return [[float(z.real), float(z.imag)] for z in a.astype(np.complex128)]


cases = []


def add(name, a):
    a = np.asarray(a)
    e, v = tf.linalg.eig(tf.constant(a))
    cases.append({"name": name, "dtype": a.dtype.name, "shape": list(a.shape), "input": pairs(a),
                  "e": pairs(e.numpy()), "v": pairs(v.numpy())})


for n in range(1, 8):
    add("random_f64_%d" % n, rng.standard_normal((n, n)))
for n in (2, 3, 5):
    add("random_f32_%d" % n, rng.standard_normal((n, n)).astype(np.float32))
    add("random_c128_%d" % n, rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n)))
    add("random_c64_%d" % n, (rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))).astype(np.complex64))
add("rotation", np.array([[0.0, -1.0], [1.0, 0.0]]))
add("upper_triangular", np.triu(rng.standard_normal((4, 4))) + np.diag([3.0, -1.0, 0.5, 2.0]))
add("lower_triangular", np.tril(rng.standard_normal((4, 4))) + np.diag([3.0, -1.0, 0.5, 2.0]))
add("near_jordan", np.array([[2.0, 1.0, 0.0], [0.0, 2.0, 1.0], [1e-6, 0.0, 2.0]]))
add("repeated", np.diag([1.0, 1.0, 3.0]) + np.triu(np.ones((3, 3)), 1) * [0, 0, 1])
add("companion", np.array([[0.0, 0.0, -6.0], [1.0, 0.0, 11.0], [0.0, 1.0, -6.0]]))
add("batch_f64", rng.standard_normal((2, 3, 3, 3)))
add("large_scale", rng.standard_normal((4, 4)) * 1e5)
add("symmetric", (lambda m: m + m.T)(rng.standard_normal((5, 5))))

errors = {}
try:
    tf.linalg.eig(tf.constant([[np.nan, 1.0], [2.0, 3.0]]))
    errors["nan"] = None
except tf.errors.OpError as e:
    errors["nan"] = {"class": type(e).__name__, "message": e.message.split(" [Op:")[0].split("}} ", 1)[-1]}

with open(OUT, "w") as f:
    json.dump({"cases": cases, "errors": errors}, f)
print("wrote", OUT, len(cases), "cases;", errors)
