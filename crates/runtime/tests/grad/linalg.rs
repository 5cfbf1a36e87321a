//! Numeric checks of the linear-algebra gradients: MatrixInverse, MatrixDeterminant,
//! LogMatrixDeterminant, MatrixSolve, MatrixTriangularSolve, Cholesky, SelfAdjointEigV2,
//! Qr and Svd.

use crate::util::*;
use ferroflow_core::Tensor;
use ferroflow_graph::ops;

/// Well-conditioned matrices: random plus `shift` on the diagonal.
fn shifted(dims: &[usize], seed: u64, shift: f64) -> Tensor {
    let n = dims[dims.len() - 1];
    let mut v = rand(dims, seed).to_f64_vec().unwrap();
    for (k, x) in v.iter_mut().enumerate() {
        if (k / n) % n == k % n {
            *x += shift;
        }
    }
    Tensor::new(dims.to_vec(), v).unwrap()
}

#[test]
fn inverse_determinant_solve() {
    for adj in [false, true] {
        assert_grad(
            "MatrixInverse",
            |s, x| ops::matrix_inverse(s, x[0].clone(), adj),
            &[shifted(&[2, 3, 3], 1, 3.0)],
            &[0],
        );
        assert_grad(
            "MatrixSolve",
            |s, x| ops::matrix_solve(s, x[0].clone(), x[1].clone(), adj),
            &[shifted(&[2, 3, 3], 2, 3.0), rand(&[2, 3, 2], 3)],
            &[0, 1],
        );
    }
    assert_grad(
        "MatrixDeterminant",
        |s, x| ops::matrix_determinant(s, x[0].clone()),
        &[shifted(&[2, 3, 3], 4, 2.0)],
        &[0],
    );
    assert_grad(
        "LogMatrixDeterminant",
        |s, x| ops::log_matrix_determinant(s, x[0].clone()).1,
        &[shifted(&[3, 3], 5, 2.0)],
        &[0],
    );
}

#[test]
fn triangular_solve_and_cholesky() {
    for (lower, adj) in [(true, false), (true, true), (false, false), (false, true)] {
        let e = check(
            |s, x| ops::matrix_triangular_solve(s, x[0].clone(), x[1].clone(), lower, adj),
            &[shifted(&[2, 3, 3], 6, 3.0), rand(&[2, 3, 2], 7)],
            &[0, 1],
            Mode::Static,
        );
        // The strict other triangle is never read: its numeric gradient is 0 as the band's.
        ok(&format!("MatrixTriangularSolve lower {lower} adjoint {adj}"), e, TOL);
    }
    let e = check(
        |s, x| ops::matrix_triangular_solve(s, x[0].clone(), x[1].clone(), true, false),
        &[shifted(&[3, 3], 8, 3.0), rand(&[2, 3, 2], 9)],
        &[0, 1],
        Mode::Rank,
    );
    ok("MatrixTriangularSolve broadcast batch", e, TOL);
    // Cholesky of a symmetrized input (the op reads only the lower triangle).
    let e = check(
        |s, x| {
            let sym = ops::add_v2(s, x[0].clone(), ops::einsum(s, vec![x[0].clone()], "...ij->...ji"));
            ops::cholesky(s, sym)
        },
        &[shifted(&[2, 3, 3], 10, 3.0)],
        &[0],
        Mode::Static,
    );
    ok("Cholesky", e, TOL);
}

#[test]
fn self_adjoint_eig() {
    // Distinct eigenvalues (random symmetric matrices); the upper triangle is never read,
    // so its numeric gradient is 0 as the folded one's. The eigenvectors enter through
    // sign-independent products (each column times its first component).
    let e = check(
        |s, x| {
            let (e, v) = ops::self_adjoint_eig(s, x[0].clone(), true);
            ops::add_v2(s, ops::mul(s, e.clone(), e), ops::sum(s, sign_free(s, v), ops::constant(s, -2i32), false))
        },
        &[rand(&[2, 4, 4], 11)],
        &[0],
        Mode::Static,
    );
    ok("SelfAdjointEigV2", e, TOL);
    let e = check(|s, x| ops::self_adjoint_eig(s, x[0].clone(), false).0, &[rand(&[3, 3], 12)], &[0], Mode::Static);
    ok("SelfAdjointEigV2 without vectors", e, TOL);
}

/// `v` with each column times its first component: independent of the column's sign.
fn sign_free(s: &ferroflow_graph::Scope, v: ferroflow_graph::Output) -> ferroflow_graph::Output {
    let first = ops::strided_slice(
        s,
        v.clone(),
        ops::constant(s, Tensor::vec(vec![0i32, 0, 0])),
        ops::constant(s, Tensor::vec(vec![0i32, 1, 0])),
        ops::constant(s, Tensor::vec(vec![1i32, 1, 1])),
        ops::SliceMasks { begin: 4, end: 4, ellipsis: 1, ..Default::default() },
    );
    ops::mul(s, v, first)
}

#[test]
fn qr_square_tall_wide_and_batched() {
    for dims in [&[3usize, 3][..], &[4, 3], &[3, 5], &[2, 4, 3]] {
        let e = check_multi(
            |s, x| {
                let (q, r) = ops::qr(s, x[0].clone());
                vec![q, r]
            },
            &[shifted(dims, 13, 0.5)],
            &[0],
            EPS,
            Mode::Static,
        );
        ok(&format!("Qr {dims:?}"), e, TOL);
    }
}

#[test]
fn svd_values_and_vectors() {
    for dims in [&[2usize, 3, 3][..], &[3, 4]] {
        let e = check(|s, x| ops::svd(s, x[0].clone(), false, false).0, &[rand(dims, 14)], &[0], Mode::Static);
        ok(&format!("Svd without vectors {dims:?}"), e, TOL);
    }
    // Square, tall and wide; full matrices where the sides differ by one. The vectors
    // enter sign-free.
    for (dims, full) in
        [(&[2usize, 3, 3][..], false), (&[4, 3], false), (&[3, 4], false), (&[3, 4], true), (&[4, 3], true)]
    {
        let e = check_multi(
            |s, x| {
                let (sv, u, v) = ops::svd(s, x[0].clone(), true, full);
                vec![sv, sign_free(s, u), sign_free(s, v)]
            },
            &[rand(dims, 15)],
            &[0],
            EPS,
            Mode::Static,
        );
        ok(&format!("Svd {dims:?} full_matrices {full}"), e, TOL);
    }
}

#[test]
fn decompositions_of_unknown_matrix_shape_have_no_gradient_yet() {
    let s = ferroflow_graph::Scope::new_root();
    let x = ops::placeholder(&s, ferroflow_core::DataType::Double, None);
    let (q, _) = ops::qr(&s, x.clone());
    let e = ferroflow_graph::gradients(&s, &[q], &[x], None).unwrap_err();
    assert_eq!(e.code, ferroflow_core::Code::Unimplemented, "{e}");
    assert!(e.message.contains("unknown inner matrix shape"), "{e}");
}
