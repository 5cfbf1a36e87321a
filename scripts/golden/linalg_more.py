"""Golden values for the linear-algebra ops Lu, TridiagonalSolve, TridiagonalMatMul,
BandedTriangularSolve and MatrixSquareRoot from TensorFlow 2.21's CPU kernels (float32 and
float64, batched inputs), written to crates/kernels/tests/golden/linalg_more.json. Run it as
every generator here runs (common.py's header says how)."""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from common import case_list, io_case, print_error_classes, write  # noqa: E402

R = tf.raw_ops
rng = np.random.RandomState(20260721)
cases, case = case_list()
TOL = {"float32": {"rtol": 1e-4, "atol": 1e-5}, "float64": {"rtol": 1e-10, "atol": 1e-12}}


def tol(dt, scale=1.0):
    t = TOL[dt]
    return {"rtol": t["rtol"] * scale, "atol": t["atol"] * scale}


for dt in ("float32", "float64"):
    # Lu: batched general matrices (pivoting needed), both index types.
    for idx, shape in (("int32", (2, 3, 4, 4)), ("int64", (3, 5, 5))):
        x = rng.uniform(-2, 2, shape).astype(dt)
        lu, p = R.Lu(input=tf.constant(x), output_idx_type=tf.as_dtype(idx))
        cases.append(io_case("Lu_%s_%s" % (dt, idx), "Lu", {"T": {"type": dt}, "output_idx_type": {"type": idx}},
                             [x], [lu.numpy(), p.numpy()], tol(dt, 10)))
    # Lu of a matrix with tied pivot candidates: the first row of the largest wins.
    x = np.array([[1, 2, 3], [-3, 1, 2], [3, 5, 1]], dt)
    lu, p = R.Lu(input=tf.constant(x))
    cases.append(io_case("Lu_ties_%s" % dt, "Lu", {"T": {"type": dt}, "output_idx_type": {"type": "int32"}},
                         [x], [lu.numpy(), p.numpy()], tol(dt)))

    # TridiagonalSolve: every mode on batched systems, one with tiny diagonals (row swaps).
    diags = rng.uniform(-1, 1, (2, 3, 6)).astype(dt)
    diags[:, 1, :] += np.where(diags[:, 1, :] >= 0, 3.0, -3.0).astype(dt)
    rhs = rng.uniform(-1, 1, (2, 6, 3)).astype(dt)
    small = diags.copy()
    small[:, 1, :] = rng.uniform(-0.05, 0.05, (2, 6)).astype(dt)
    for tag, d in (("dominant", diags), ("small_diag", small)):
        for piv, pert in ((True, False), (False, False), (True, True)):
            if tag == "small_diag" and not piv:
                continue
            case("TridiagonalSolve_%s_%s_piv%d_pert%d" % (tag, dt, piv, pert), "TridiagonalSolve",
                 [("diagonals", d), ("rhs", rhs)], {"T": dt},
                 {"partial_pivoting": piv, "perturb_singular": pert}, **tol(dt, 10))
    sing = np.array([[1, 1, 0], [0, 0, 0], [0, 1, 1]], dt)
    for piv, pert in ((True, False), (False, False), (True, True)):
        case("TridiagonalSolve_singular_%s_piv%d_pert%d" % (dt, piv, pert), "TridiagonalSolve",
             [("diagonals", sing), ("rhs", np.ones((3, 2), dt))], {"T": dt},
             {"partial_pivoting": piv, "perturb_singular": pert}, **tol(dt))
    one = np.array([[7], [2.5], [9]], dt)
    case("TridiagonalSolve_1x1_%s" % dt, "TridiagonalSolve", [("diagonals", one), ("rhs", np.ones((1, 3), dt))],
         {"T": dt}, {"partial_pivoting": True, "perturb_singular": False}, **tol(dt))

    # TridiagonalMatMul.
    sup, main, sub = (rng.uniform(-1, 1, (2, 3, 1, 5)).astype(dt) for _ in range(3))
    b = rng.uniform(-1, 1, (2, 3, 5, 4)).astype(dt)
    case("TridiagonalMatMul_%s" % dt, "TridiagonalMatMul",
         [("superdiag", sup), ("maindiag", main), ("subdiag", sub), ("rhs", b)], {"T": dt}, **tol(dt))

    # BandedTriangularSolve: lower/upper, adjoint, broadcast batch dimensions.
    band = rng.uniform(-1, 1, (2, 1, 3, 6)).astype(dt)
    for lower in (True, False):
        bnd = band.copy()
        row = 0 if lower else 2
        bnd[..., row, :] += np.where(bnd[..., row, :] >= 0, 2.0, -2.0).astype(dt)
        for adj in (False, True):
            case("BandedTriangularSolve_%s_lower%d_adj%d" % (dt, lower, adj), "BandedTriangularSolve",
                 [("matrix", bnd), ("rhs", rng.uniform(-1, 1, (4, 6, 2)).astype(dt))], {"T": dt},
                 {"lower": lower, "adjoint": adj}, **tol(dt, 10))
    # More bands than rows.
    wide = rng.uniform(0.5, 1.5, (5, 3)).astype(dt)
    case("BandedTriangularSolve_wide_%s" % dt, "BandedTriangularSolve",
         [("matrix", wide), ("rhs", rng.uniform(-1, 1, (3, 2)).astype(dt))], {"T": dt},
         {"lower": True, "adjoint": False}, **tol(dt, 10))

    # MatrixSquareRoot: positive real eigenvalues, and a complex pair with positive real part.
    q = rng.uniform(-1, 1, (2, 3, 4, 4))
    spd = (q @ np.swapaxes(q, -1, -2) + 0.5 * np.eye(4)).astype(dt)
    case("MatrixSquareRoot_spd_%s" % dt, "MatrixSquareRoot", [("input", spd)], {"T": dt}, **tol(dt, 100))
    g = (rng.uniform(-0.3, 0.3, (2, 5, 5)) + 2.0 * np.eye(5)).astype(dt)
    case("MatrixSquareRoot_general_%s" % dt, "MatrixSquareRoot", [("input", g)], {"T": dt}, **tol(dt, 100))
    rot = np.array([[1.0, -2.0, 0.0], [2.0, 1.0, 0.5], [0.0, 0.0, 4.0]], dt)
    case("MatrixSquareRoot_complex_pair_%s" % dt, "MatrixSquareRoot", [("input", rot)], {"T": dt},
         **tol(dt, 100))
    case("MatrixSquareRoot_negative_%s" % dt, "MatrixSquareRoot", [("input", np.diag([-4.0, 9.0]).astype(dt))],
         {"T": dt})

write("linalg_more", cases)

print_error_classes([
    ("Lu singular", lambda: R.Lu(input=tf.constant([[1.0, 2.0], [2.0, 4.0]]))),
    ("Lu non-square", lambda: R.Lu(input=tf.zeros([2, 3]))),
    ("TridiagonalSolve rows", lambda: R.TridiagonalSolve(diagonals=tf.ones([2, 3]), rhs=tf.ones([3, 1]))),
    ("TridiagonalSolve perturb without pivoting", lambda: R.TridiagonalSolve(
        diagonals=tf.ones([3, 3]), rhs=tf.ones([3, 1]), partial_pivoting=False, perturb_singular=True)),
    ("TridiagonalMatMul shape", lambda: R.TridiagonalMatMul(
        superdiag=tf.ones([2, 3]), maindiag=tf.ones([1, 3]), subdiag=tf.ones([1, 3]), rhs=tf.ones([3, 2]))),
    ("BandedTriangularSolve singular", lambda: R.BandedTriangularSolve(
        matrix=tf.constant([[1.0, 0.0, 1.0], [1.0, 1.0, 1.0]]), rhs=tf.ones([3, 1]))),
    ("BandedTriangularSolve empty", lambda: R.BandedTriangularSolve(matrix=tf.zeros([2, 0]), rhs=tf.ones([0, 1]))),
])
