//! Gradients of the QR and singular value decompositions (real inputs), with the formulas
//! of TensorFlow's `linalg_grad.py`: QR for reduced factors of any shape (a wide matrix
//! through its leading square block), SVD with or without `compute_uv`, and
//! `full_matrices` where `|m − n| ≤ 1`. Both need the matrix dims statically known, as in
//! TensorFlow.

use ferroflow_core::{DataType, NodeAttrs, Status};

use super::array_grad::{grad0, input, Grads};
use super::linalg_grad::{matrix_transpose, mm};
use super::registry::GradRegistry;
use crate::gradients::GradOp;
use crate::ops::{self, SliceMasks};
use crate::scope::{Output, Scope};

/// Registers the decompositions' gradients.
pub(super) fn register(r: &mut GradRegistry) {
    r.add("Qr", qr_grad);
    r.add("Svd", svd_grad);
}

/// `x[..., :, from..to]`.
fn cols(s: &Scope, x: Output, from: i64, to: i64) -> Output {
    let v = |a: i64, b: i64| ops::constant(s, vec![0i64, a, b]);
    let masks = SliceMasks { begin: 2, end: 2, ellipsis: 1, ..Default::default() };
    ops::strided_slice(s, x, v(0, from), v(0, to), v(1, 1), masks)
}

/// The two matrix dims of `x`, which must be statically known.
fn matrix_dims(s: &Scope, x: &Output, what: &str) -> Result<(i64, i64), Status> {
    let d = s.graph().shape_of(x).unwrap_or_default();
    match d.len() {
        r if r >= 2 && d[r - 2] >= 0 && d[r - 1] >= 0 => Ok((d[r - 2], d[r - 1])),
        _ => Err(Status::unimplemented(format!(
            "{what} gradient has not been implemented for input with unknown inner matrix shape ({x} has shape {d:?})"
        ))),
    }
}

fn real_only(x: &Output, what: &str) -> Result<(), Status> {
    match x.dtype {
        DataType::Float | DataType::Double | DataType::Half | DataType::BFloat16 => Ok(()),
        dt => {
            Err(Status::unimplemented(format!("{what} gradient for {dt} input ({x}): only real types are supported")))
        }
    }
}

fn diag(s: &Scope, d: Output) -> Output {
    let k0 = ops::constant(s, 0i32);
    let m1 = ops::constant(s, -1i32);
    let zero = ops::cast(s, ops::constant(s, 0i32), d.dtype);
    ops::matrix_diag_v3(s, d, k0, m1.clone(), m1, zero, "RIGHT_LEFT")
}

/// `x · (r⁻¹)ᴴ` for upper-triangular `r`, by a triangular solve.
fn times_r_inv_adj(s: &Scope, x: Output, r: Output) -> Output {
    matrix_transpose(s, ops::matrix_triangular_solve(s, r, matrix_transpose(s, x), false, false))
}

/// The gradient of `(q, r) = qr(a)` for square or tall `a` (m ≥ n).
fn qr_square_or_deep(s: &Scope, q: Output, r: Output, dq: Output, dr: Output) -> Output {
    let qdq = mm(s, q.clone(), dq.clone(), true, false);
    let qdq_skew = ops::sub(s, qdq.clone(), matrix_transpose(s, qdq.clone()));
    let rdr = mm(s, r.clone(), dr.clone(), false, true);
    let rdr_skew = ops::sub(s, rdr.clone(), matrix_transpose(s, rdr));
    let tril =
        ops::matrix_band_part(s, ops::add_v2(s, qdq_skew, rdr_skew), ops::constant(s, -1i64), ops::constant(s, 0i64));
    let grad_a = mm(s, q.clone(), ops::add_v2(s, dr, times_r_inv_adj(s, tril, r.clone())), false, false);
    let grad_b = times_r_inv_adj(s, ops::sub(s, dq, mm(s, q, qdq, false, false)), r);
    ops::add_v2(s, grad_a, grad_b)
}

/// Qr: TensorFlow's formula; a wide input (m < n) through its leading m×m block.
fn qr_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let a = input(op, 0)?.clone();
    real_only(&a, "QR")?;
    let (m, n) = matrix_dims(s, &a, "QR")?;
    if op.node.attr_bool("full_matrices")? && m > n {
        return Err(Status::unimplemented(format!(
            "QR gradient is not implemented with full_matrices = true for a tall input ({m}×{n} at {a})"
        )));
    }
    let (q, r) = (op.outputs[0].clone(), op.outputs[1].clone());
    let zeros = |x: &Output| ops::zeros_like(s, x.clone());
    let dq = g.first().cloned().unwrap_or_else(|| zeros(&q));
    let dr = g.get(1).cloned().unwrap_or_else(|| zeros(&r));
    if m >= n {
        return Ok(vec![Some(qr_square_or_deep(s, q, r, dq, dr))]);
    }
    let (y, u) = (cols(s, a, m, n), cols(s, r.clone(), 0, m));
    let (dv, du) = (cols(s, dr.clone(), m, n), cols(s, dr, 0, m));
    let dy = mm(s, q.clone(), dv.clone(), false, false);
    let dx = qr_square_or_deep(s, q, u, ops::add_v2(s, dq, mm(s, y, dv, false, true)), du);
    Ok(vec![Some(ops::concat(s, vec![dx, dy], ops::constant(s, -1i32)))])
}

/// `x / (x² + ε)`: `1/x` that stays finite at 0 (repeated singular values).
fn safe_reciprocal(s: &Scope, x: Output) -> Output {
    let eps = ops::cast(s, ops::constant(s, 1e-20f64), x.dtype);
    ops::mul(s, x.clone(), ops::reciprocal(s, ops::add_v2(s, ops::square(s, x), eps)))
}

/// Svd: TensorFlow's formula, on the adjoint when the input is tall.
fn svd_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let a = input(op, 0)?.clone();
    real_only(&a, "SVD")?;
    let gs = grad0(op, g)?;
    if !op.node.attr_bool("compute_uv")? {
        let (_, u, v) = ops::svd(s, a, true, false);
        return Ok(vec![Some(mm(s, u, mm(s, diag(s, gs), v, false, true), false, false))]);
    }
    let (mut m, mut n) = matrix_dims(s, &a, "SVD")?;
    let full = op.node.attr_bool("full_matrices")?;
    // U is m×m (m the smaller side now), V is n×m, or n×n with full matrices.
    let (sv, mut u, mut v) = (op.outputs[0].clone(), op.outputs[1].clone(), op.outputs[2].clone());
    let zeros = |x: &Output| ops::zeros_like(s, x.clone());
    let mut gu = g.get(1).cloned().unwrap_or_else(|| zeros(&u));
    let mut gv = g.get(2).cloned().unwrap_or_else(|| zeros(&v));
    // A tall input: the gradient of Aᴴ = V·Sᴴ·Uᴴ, transposed back at the end.
    let tall = m > n;
    if tall {
        std::mem::swap(&mut m, &mut n);
        std::mem::swap(&mut u, &mut v);
        std::mem::swap(&mut gu, &mut gv);
    }
    if full && n - m > 1 {
        return Err(Status::unimplemented(format!(
            "SVD gradient is not implemented for |m - n| > 1 with full_matrices = true ({a})"
        )));
    }
    let s_mat = diag(s, sv.clone());
    let s2 = ops::square(s, sv.clone());
    let gap = ops::sub(
        s,
        ops::expand_dims(s, s2.clone(), ops::constant(s, -2i32)),
        ops::expand_dims(s, s2, ops::constant(s, -1i32)),
    );
    let f = ops::matrix_set_diag_v3(s, safe_reciprocal(s, gap), zeros(&sv), ops::constant(s, 0i32), "RIGHT_LEFT");
    let v1 = cols(s, v.clone(), 0, m);
    let gv1 = cols(s, gv.clone(), 0, m);
    let f_u = ops::mul(s, f.clone(), mm(s, u.clone(), gu, true, false));
    let f_v = ops::mul(s, f, mm(s, v1.clone(), gv1.clone(), true, false));
    let sym = |x: Output| ops::add_v2(s, x.clone(), matrix_transpose(s, x));
    let inner = ops::add_v2(
        s,
        ops::add_v2(s, diag(s, gs), mm(s, sym(f_u), s_mat.clone(), false, false)),
        mm(s, s_mat, sym(f_v), false, false),
    );
    let mut grad = mm(s, u.clone(), mm(s, inner, v1.clone(), false, true), false, false);
    if m != n {
        let gv1t = matrix_transpose(s, gv1);
        let mut term = ops::sub(s, gv1t.clone(), mm(s, mm(s, gv1t, v1.clone(), false, false), v1.clone(), false, true));
        if full {
            let (v2, gv2) = (cols(s, v, m, n), cols(s, gv, m, n));
            term = ops::sub(s, term, mm(s, mm(s, v1, gv2, true, false), v2, false, true));
        }
        let u_s_inv = mm(s, u, diag(s, safe_reciprocal(s, sv)), false, false);
        grad = ops::add_v2(s, grad, mm(s, u_s_inv, term, false, false));
    }
    Ok(vec![Some(if tall { matrix_transpose(s, grad) } else { grad })])
}
