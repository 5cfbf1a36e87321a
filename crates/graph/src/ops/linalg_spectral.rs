//! Spectral decompositions (TensorFlow's definitions, shape functions and builders):
//! `SelfAdjointEigV2` (eigenvalues and eigenvectors of self-adjoint matrices), `Eig` (of
//! general ones, complex results) and `Svd`.

use ferroflow_core::{attr, NodeAttrs, Status};

use crate::op_def::op;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{Dims, ShapeCtx};

/// The input's dimensions, which must be at least a matrix.
fn matrices(c: &ShapeCtx) -> Result<Option<Vec<i64>>, Status> {
    let Some(d) = c.input(0) else { return Ok(None) };
    if d.len() < 2 {
        return Err(c.error(format!("Shape must be at least rank 2 but is rank {}", d.len())));
    }
    Ok(Some(d))
}

fn eig_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let Some(d) = matrices(c)? else { return Ok(vec![None, None]) };
    let (m, n) = (d[d.len() - 2], d[d.len() - 1]);
    if m >= 0 && n >= 0 && m != n {
        return Err(c.error(format!("Dimensions must be equal, but are {m} and {n}")));
    }
    let n = if n >= 0 { n } else { m };
    let e: Vec<i64> = d[..d.len() - 2].iter().copied().chain([n]).collect();
    let v = if c.node.attr_bool("compute_v")? { d } else { vec![0] };
    Ok(vec![Some(e), Some(v)])
}

fn svd_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let Some(d) = matrices(c)? else { return Ok(vec![None, None, None]) };
    let (m, n) = (d[d.len() - 2], d[d.len() - 1]);
    let p = if m < 0 || n < 0 { -1 } else { m.min(n) };
    let batch = &d[..d.len() - 2];
    let s: Vec<i64> = batch.iter().copied().chain([p]).collect();
    if !c.node.attr_bool("compute_uv")? {
        return Ok(vec![Some(s), Some(vec![0]), Some(vec![0])]);
    }
    let full = c.node.attr_bool("full_matrices")?;
    let (uc, vc) = if full { (m, n) } else { (p, p) };
    let u: Vec<i64> = batch.iter().copied().chain([m, uc]).collect();
    let v: Vec<i64> = batch.iter().copied().chain([n, vc]).collect();
    Ok(vec![Some(s), Some(u), Some(v)])
}

pub(crate) fn register(r: &mut OpRegistry) {
    r.add(
        op("SelfAdjointEigV2")
            .input("input: T")
            .output("e: T")
            .output("v: T")
            .attr("compute_v: bool = true")
            .attr("T: {double, float, half, complex64, complex128}")
            .shape_fn(eig_shape)
            .build(),
    );
    // TensorFlow's kernels pair float with complex64 and double with complex128.
    let eig = op("Eig").input("input: T").output("e: Tout").output("v: Tout").attr("compute_v: bool = true");
    let eig = eig.attr("T: {float, double, complex64, complex128}").attr("Tout: {complex64, complex128}");
    r.add(eig.shape_fn(eig_shape).build());
    r.add(
        op("Svd")
            .input("input: T")
            .output("s: T")
            .output("u: T")
            .output("v: T")
            .attr("compute_uv: bool = true")
            .attr("full_matrices: bool = false")
            .attr("T: {double, float, half, complex64, complex128}")
            .shape_fn(svd_shape)
            .build(),
    );
}

/// `SelfAdjointEigV2`: the eigenvalues `e` (ascending) of each innermost matrix of `x`
/// (only its lower triangle is read) and, when `compute_v`, the eigenvectors as the
/// columns of `v`.
pub fn self_adjoint_eig(s: &Scope, x: Output, compute_v: bool) -> (Output, Output) {
    let o = s.op("SelfAdjointEigV2").input(x).attr("compute_v", attr::bool(compute_v)).build();
    (o.output(0), o.output(1))
}

/// `Svd`: the singular values `s` (descending) of each innermost matrix of `x` and, when
/// `compute_uv`, `u` and `v` with `x = u·diag(s)·vᴴ` (`full_matrices` false: `u` is
/// `[.., m, min(m, n)]`, `v` is `[.., n, min(m, n)]`).
pub fn svd(s: &Scope, x: Output, compute_uv: bool, full_matrices: bool) -> (Output, Output, Output) {
    let o = s
        .op("Svd")
        .input(x)
        .attr("compute_uv", attr::bool(compute_uv))
        .attr("full_matrices", attr::bool(full_matrices))
        .build();
    (o.output(0), o.output(1), o.output(2))
}
