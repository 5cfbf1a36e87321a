//! More linear-algebra ops (TensorFlow's definitions, shape functions and builders): the
//! LU factorization `Lu`, the tridiagonal `TridiagonalSolve` and `TridiagonalMatMul`,
//! `BandedTriangularSolve` and the principal square root `MatrixSquareRoot`.

use ferroflow_core::{attr, DataType, Status};

use crate::op_def::op;
use crate::ops::op_output;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{broadcast_dims, Dims, ShapeCtx};

/// Input `i`'s dimensions, which must be of rank at least 2.
fn matrices(c: &ShapeCtx, i: usize) -> Result<Option<Vec<i64>>, Status> {
    let Some(d) = c.input(i) else { return Ok(None) };
    if d.len() < 2 {
        return Err(c.error(format!("Shape must be at least rank 2 but is rank {}", d.len())));
    }
    Ok(Some(d))
}

/// Input 0 must be a (batch of) square matrices.
fn square(c: &ShapeCtx) -> Result<Option<Vec<i64>>, Status> {
    let Some(d) = matrices(c, 0)? else { return Ok(None) };
    let (m, n) = (d[d.len() - 2], d[d.len() - 1]);
    if m >= 0 && n >= 0 && m != n {
        return Err(c.error(format!("Dimensions must be equal, but are {m} and {n}")));
    }
    Ok(Some(d))
}

fn lu_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let Some(d) = square(c)? else { return Ok(vec![None, None]) };
    let p = d[..d.len() - 1].to_vec();
    Ok(vec![Some(d), Some(p)])
}

fn sqrtm_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![square(c)?])
}

/// Output: the right-hand side's shape (input `rhs`), after checking that the diagonals
/// (inputs before it) are of the same rank.
fn tridiagonal_shape(c: &ShapeCtx, rhs: usize) -> Result<Vec<Dims>, Status> {
    let Some(b) = matrices(c, rhs)? else { return Ok(vec![None]) };
    for i in 0..rhs {
        if let Some(d) = matrices(c, i)? {
            if d.len() != b.len() {
                return Err(c.error(format!("Shape must be rank {} but is rank {}", b.len(), d.len())));
            }
            let rows = if rhs == 1 { 3 } else { 1 };
            let r = d[d.len() - 2];
            if r >= 0 && r != rows {
                return Err(c.error(format!("Dimension {} must be {rows}, got {r}", d.len() - 2)));
            }
            let (m, n) = (d[d.len() - 1], b[b.len() - 2]);
            if m >= 0 && n >= 0 && m != n {
                return Err(c.error(format!("Dimensions must be equal, but are {m} and {n}")));
            }
        }
    }
    Ok(vec![Some(b)])
}

fn banded_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let (Some(a), Some(b)) = (matrices(c, 0)?, matrices(c, 1)?) else { return Ok(vec![None]) };
    let (n, m) = (a[a.len() - 1], b[b.len() - 2]);
    if n >= 0 && m >= 0 && n != m {
        return Err(c.error(format!("Dimensions must be equal, but are {n} and {m}")));
    }
    let batch = broadcast_dims(c, &Some(a[..a.len() - 2].to_vec()), &Some(b[..b.len() - 2].to_vec()))?;
    Ok(vec![batch.map(|mut v| {
        v.extend_from_slice(&b[b.len() - 2..]);
        v
    })])
}

pub(crate) fn register(r: &mut OpRegistry) {
    r.add(
        op("Lu")
            .input("input: T")
            .output("lu: T")
            .output("p: output_idx_type")
            .attr("T: {double, float, half, complex64, complex128}")
            .attr("output_idx_type: {int32, int64} = DT_INT32")
            .shape_fn(lu_shape)
            .build(),
    );
    r.add(
        op("TridiagonalSolve")
            .input("diagonals: T")
            .input("rhs: T")
            .output("output: T")
            .attr("partial_pivoting: bool = true")
            .attr("perturb_singular: bool = false")
            .attr("T: {double, float, complex64, complex128}")
            .shape_fn(|c| tridiagonal_shape(c, 1))
            .build(),
    );
    r.add(
        op("TridiagonalMatMul")
            .input("superdiag: T")
            .input("maindiag: T")
            .input("subdiag: T")
            .input("rhs: T")
            .output("output: T")
            .attr("T: {double, float, complex64, complex128}")
            .shape_fn(|c| tridiagonal_shape(c, 3))
            .build(),
    );
    r.add(
        op("BandedTriangularSolve")
            .input("matrix: T")
            .input("rhs: T")
            .output("output: T")
            .attr("lower: bool = true")
            .attr("adjoint: bool = false")
            .attr("T: {double, float, half, complex64, complex128}")
            .shape_fn(banded_shape)
            .build(),
    );
    r.add(
        op("MatrixSquareRoot")
            .input("input: T")
            .output("output: T")
            .attr("T: {double, float, half, complex64, complex128}")
            .shape_fn(sqrtm_shape)
            .build(),
    );
}

/// `Lu`: the packed factors (unit `L` below the diagonal, `U` on and above) and the row
/// permutation `p` (of `idx_type`, int32 or int64) with `L·U = input[p]`.
pub fn lu(s: &Scope, x: Output, idx_type: DataType) -> (Output, Output) {
    let o = s.op("Lu").input(x).attr("output_idx_type", attr::ty(idx_type)).build();
    (o.output(0), o.output(1))
}

/// `TridiagonalSolve`: `X` with `A·X = rhs`, `A` given by `diagonals` `[..., 3, M]`
/// (superdiagonal, diagonal, subdiagonal).
pub fn tridiagonal_solve(
    s: &Scope,
    diagonals: Output,
    rhs: Output,
    partial_pivoting: bool,
    perturb_singular: bool,
) -> Output {
    let attrs =
        [("partial_pivoting", attr::bool(partial_pivoting)), ("perturb_singular", attr::bool(perturb_singular))];
    op_output(s, "TridiagonalSolve", [diagonals, rhs], attrs)
}

/// `TridiagonalMatMul`: `A·rhs` for the tridiagonal `A` of the `[..., 1, M]` diagonals.
pub fn tridiagonal_mat_mul(s: &Scope, superdiag: Output, maindiag: Output, subdiag: Output, rhs: Output) -> Output {
    s.op("TridiagonalMatMul").input(superdiag).input(maindiag).input(subdiag).input(rhs).build().output(0)
}

/// `BandedTriangularSolve`: `X` with `A·X = rhs` (`Aᴴ·X` when `adjoint`), `A` a lower (or
/// upper) triangular band matrix in TensorFlow's band storage `[..., K, M]`.
pub fn banded_triangular_solve(s: &Scope, a: Output, b: Output, lower: bool, adjoint: bool) -> Output {
    let attrs = [("lower", attr::bool(lower)), ("adjoint", attr::bool(adjoint))];
    op_output(s, "BandedTriangularSolve", [a, b], attrs)
}

/// `MatrixSquareRoot`: the principal square root of each innermost square matrix.
pub fn matrix_square_root(s: &Scope, x: Output) -> Output {
    s.op("MatrixSquareRoot").input(x).build().output(0)
}
