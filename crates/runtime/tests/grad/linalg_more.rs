//! Numeric checks of the gradients of TridiagonalSolve, TridiagonalMatMul,
//! BandedTriangularSolve and MatrixSquareRoot.

use crate::util::*;
use ferroflow_core::Tensor;
use ferroflow_graph::ops;

/// Random values plus `shift` (away from zero) on row `row` of each `[..., K, M]` matrix.
fn dominant(dims: &[usize], seed: u64, row: usize, shift: f64) -> Tensor {
    let (k, m) = (dims[dims.len() - 2], dims[dims.len() - 1]);
    let mut v = rand(dims, seed).to_f64_vec().unwrap();
    for (i, x) in v.iter_mut().enumerate() {
        if (i / m) % k == row {
            *x += if *x >= 0.0 { shift } else { -shift };
        }
    }
    Tensor::new(dims.to_vec(), v).unwrap()
}

#[test]
fn tridiagonal_solve() {
    for (piv, pert) in [(true, false), (false, false), (true, true)] {
        let e = check(
            |s, x| ops::tridiagonal_solve(s, x[0].clone(), x[1].clone(), piv, pert),
            &[dominant(&[2, 3, 5], 21, 1, 3.0), rand(&[2, 5, 2], 22)],
            &[0, 1],
            Mode::Static,
        );
        // The ignored corner entries' numeric gradient is 0; so is the symbolic one there
        // (the shifted products put zeros in those places).
        ok(&format!("TridiagonalSolve pivoting {piv} perturb {pert}"), e, TOL);
    }
    let e = check(
        |s, x| ops::tridiagonal_solve(s, x[0].clone(), x[1].clone(), true, false),
        &[dominant(&[3, 4], 23, 1, 3.0), rand(&[4, 3], 24)],
        &[0, 1],
        Mode::Rank,
    );
    ok("TridiagonalSolve unknown rank", e, TOL);
}

#[test]
fn tridiagonal_matmul() {
    for mode in [Mode::Static, Mode::Rank] {
        let e = check(
            |s, x| ops::tridiagonal_mat_mul(s, x[0].clone(), x[1].clone(), x[2].clone(), x[3].clone()),
            &[rand(&[2, 1, 4], 25), rand(&[2, 1, 4], 26), rand(&[2, 1, 4], 27), rand(&[2, 4, 3], 28)],
            &[0, 1, 2, 3],
            mode,
        );
        ok(&format!("TridiagonalMatMul {mode:?}"), e, TOL);
    }
}

#[test]
fn banded_triangular_solve() {
    for (lower, adj) in [(true, false), (true, true), (false, false), (false, true)] {
        let row = if lower { 0 } else { 2 };
        let e = check(
            |s, x| ops::banded_triangular_solve(s, x[0].clone(), x[1].clone(), lower, adj),
            &[dominant(&[2, 3, 5], 29, row, 2.0), rand(&[2, 5, 2], 30)],
            &[0, 1],
            Mode::Static,
        );
        ok(&format!("BandedTriangularSolve lower {lower} adjoint {adj}"), e, TOL);
    }
    let e = check(
        |s, x| ops::banded_triangular_solve(s, x[0].clone(), x[1].clone(), true, false),
        &[dominant(&[2, 4], 31, 0, 2.0), rand(&[3, 4, 2], 32)],
        &[0, 1],
        Mode::Rank,
    );
    ok("BandedTriangularSolve broadcast batch", e, TOL);
}

#[test]
fn matrix_square_root() {
    // Symmetric positive definite inputs, and a general one near 2·I.
    let spd = |s: &ferroflow_graph::Scope, x: ferroflow_graph::Output| {
        let p = ops::batch_mat_mul_v2(s, x.clone(), x, false, true);
        ops::add_v2(
            s,
            p,
            ops::constant(s, Tensor::new(vec![3, 3], vec![1.0f64, 0., 0., 0., 1., 0., 0., 0., 1.]).unwrap()),
        )
    };
    let e = check(|s, x| ops::matrix_square_root(s, spd(s, x[0].clone())), &[rand(&[2, 3, 3], 33)], &[0], Mode::Static);
    ok("MatrixSquareRoot spd", e, TOL);
    let mut v = rand(&[3, 3], 35).to_f64_vec().unwrap();
    v.iter_mut().for_each(|x| *x *= 0.3);
    (0..3).for_each(|i| v[i * 4] += 2.0);
    let e = check(
        |s, x| ops::matrix_square_root(s, x[0].clone()),
        &[Tensor::new(vec![3, 3], v).unwrap()],
        &[0],
        Mode::Rank,
    );
    ok("MatrixSquareRoot general", e, TOL);
}
