//! Linear-algebra ops on batches of matrices: determinants, inverses, solves, Cholesky,
//! triangular solves (definitions, shape functions and builders).

use ferroflow_core::{attr, Status};

use crate::op_def::op;
use crate::ops::op_output;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{Dims, ShapeCtx};

const T5: &str = "T: {double, float, half, complex64, complex128}";

/// Input 0 must be a (batch of) square matrices.
fn square(c: &ShapeCtx) -> Result<Option<Vec<i64>>, Status> {
    let Some(d) = c.input(0) else { return Ok(None) };
    if d.len() < 2 {
        return Err(c.error(format!("Shape must be at least rank 2 but is rank {}", d.len())));
    }
    let (m, n) = (d[d.len() - 2], d[d.len() - 1]);
    if m >= 0 && n >= 0 && m != n {
        return Err(c.error(format!("Dimensions must be equal, but are {m} and {n}")));
    }
    Ok(Some(d))
}

fn square_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![square(c)?])
}

fn det_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let b = square(c)?.map(|d| d[..d.len() - 2].to_vec());
    Ok(vec![b.clone(); c.node.op.eq("LogMatrixDeterminant") as usize + 1])
}

fn solve_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    square(c)?;
    Ok(vec![c.input(1)])
}

fn tri_solve_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let (Some(a), Some(b)) = (square(c)?, c.input(1)) else { return Ok(vec![None]) };
    if b.len() < 2 {
        return Ok(vec![None]);
    }
    let batch = crate::shape_fn::broadcast_dims(c, &Some(a[..a.len() - 2].to_vec()), &Some(b[..b.len() - 2].to_vec()))?;
    Ok(vec![batch.map(|mut v| {
        v.extend_from_slice(&b[b.len() - 2..]);
        v
    })])
}

pub(crate) fn register(r: &mut OpRegistry) {
    for name in ["MatrixDeterminant", "LogMatrixDeterminant"] {
        let mut o = op(name).input("input: T");
        o = if name == "MatrixDeterminant" {
            o.output("output: T")
        } else {
            o.output("sign: T").output("log_abs_determinant: T")
        };
        r.add(o.attr("T: {half, float, double, complex64, complex128}").shape_fn(det_shape).build());
    }
    r.add(
        op("MatrixInverse")
            .input("input: T")
            .output("output: T")
            .attr("adjoint: bool = false")
            .attr(T5)
            .shape_fn(square_shape)
            .build(),
    );
    r.add(op("Cholesky").input("input: T").output("output: T").attr(T5).shape_fn(square_shape).build());
    r.add(
        op("MatrixSolve")
            .input("matrix: T")
            .input("rhs: T")
            .output("output: T")
            .attr("adjoint: bool = false")
            .attr(T5)
            .shape_fn(solve_shape)
            .build(),
    );
    r.add(
        op("MatrixTriangularSolve")
            .input("matrix: T")
            .input("rhs: T")
            .output("output: T")
            .attr("lower: bool = true")
            .attr("adjoint: bool = false")
            .attr("T: {bfloat16, double, float, half, complex64, complex128}")
            .shape_fn(tri_solve_shape)
            .build(),
    );
}

/// `MatrixDeterminant` of each innermost square matrix.
pub fn matrix_determinant(s: &Scope, x: Output) -> Output {
    s.op("MatrixDeterminant").input(x).build().output(0)
}

two_output_builders! {
    /// `LogMatrixDeterminant`: (sign, log |det|) of each innermost square matrix.
    log_matrix_determinant => "LogMatrixDeterminant"(x);
}

/// `MatrixInverse` (of the adjoint when `adjoint`).
pub fn matrix_inverse(s: &Scope, x: Output, adjoint: bool) -> Output {
    s.op("MatrixInverse").input(x).attr("adjoint", attr::bool(adjoint)).build().output(0)
}

/// `Cholesky`: the lower-triangular factor of each symmetric positive-definite matrix.
pub fn cholesky(s: &Scope, x: Output) -> Output {
    s.op("Cholesky").input(x).build().output(0)
}

/// `MatrixSolve`: `X` with `A·X = B` (`Aᴴ·X = B` when `adjoint`).
pub fn matrix_solve(s: &Scope, a: Output, b: Output, adjoint: bool) -> Output {
    s.op("MatrixSolve").input(a).input(b).attr("adjoint", attr::bool(adjoint)).build().output(0)
}

/// `MatrixTriangularSolve` with a lower (or upper) triangular `a`.
pub fn matrix_triangular_solve(s: &Scope, a: Output, b: Output, lower: bool, adjoint: bool) -> Output {
    let attrs = [("lower", attr::bool(lower)), ("adjoint", attr::bool(adjoint))];
    op_output(s, "MatrixTriangularSolve", [a, b], attrs)
}
