//! Gradient functions of the linear-algebra ops, as TensorFlow's `linalg_grad.py` builds
//! them (matrix products, inverses and triangular solves of the outputs). `Qr`'s and
//! `Svd`'s are in `decomposition_grad.rs`.

use ferroflow_core::{DataType, NodeAttrs};

use super::array_grad::{grad0, input, ints, shape_of, static_shape, Grads};
use super::registry::GradRegistry;
use crate::gradients::GradOp;
use crate::ops::{self, SliceMasks};
use crate::scope::{Output, Scope};

/// Registers the linear-algebra gradients.
pub(super) fn register(r: &mut GradRegistry) {
    r.add("MatrixInverse", matrix_inverse_grad);
    r.add("MatrixDeterminant", determinant_grad);
    r.add("LogMatrixDeterminant", log_determinant_grad);
    r.add("MatrixSolve", matrix_solve_grad);
    r.add("MatrixTriangularSolve", triangular_solve_grad);
    r.add("Cholesky", cholesky_grad);
    r.add("SelfAdjointEigV2", self_adjoint_eig_grad);
}

/// The batched product of `a` and `b`, each adjoined first where its flag says (the
/// matrix product every linear-algebra gradient here builds).
pub(super) fn mm(s: &Scope, a: Output, b: Output, adj_a: bool, adj_b: bool) -> Output {
    ops::batch_mat_mul_v2(s, a, b, adj_a, adj_b)
}

/// `x` with its two innermost dimensions swapped.
pub(super) fn matrix_transpose(s: &Scope, x: Output) -> Output {
    ops::einsum(s, vec![x], "...ij->...ji")
}

fn half(s: &Scope, dt: DataType) -> Output {
    match dt {
        DataType::Double => ops::constant(s, 0.5f64),
        _ => ops::constant(s, 0.5f32),
    }
}

/// `x` with two trailing dimensions of size 1.
fn as_matrices(s: &Scope, x: Output) -> Output {
    ops::expand_dims(s, ops::expand_dims(s, x, ops::constant(s, -1i32)), ops::constant(s, -1i32))
}

/// MatrixInverse: `-A⁻ᴴ·G·A⁻ᴴ` (adjoints swapped for the adjoint op).
fn matrix_inverse_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let adj = op.node.attr_bool("adjoint")?;
    let ainv = op.outputs[0].clone();
    let inner = mm(s, grad0(op, g)?, ainv.clone(), adj, !adj);
    Ok(vec![Some(ops::neg(s, mm(s, ainv, inner, !adj, false)))])
}

/// MatrixDeterminant: `g · det(A) · A⁻ᴴ`.
fn determinant_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let a = input(op, 0)?.clone();
    let inv = ops::matrix_inverse(s, a, true);
    let mult = as_matrices(s, ops::mul(s, grad0(op, g)?, op.outputs[0].clone()));
    Ok(vec![Some(ops::mul(s, mult, inv))])
}

/// LogMatrixDeterminant: `g_log · A⁻ᴴ` (the sign has no gradient).
fn log_determinant_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let a = input(op, 0)?.clone();
    let gb =
        g.get(1).cloned().ok_or_else(|| ferroflow_core::Status::internal("no gradient for log_abs_determinant"))?;
    let inv = ops::matrix_inverse(s, a, true);
    Ok(vec![Some(ops::mul(s, as_matrices(s, gb), inv))])
}

/// MatrixSolve: `grad_b = A⁻ᴴ·G`, `grad_a = -grad_b·Cᴴ`.
fn matrix_solve_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let adj = op.node.attr_bool("adjoint")?;
    let (a, c) = (input(op, 0)?.clone(), op.outputs[0].clone());
    let gb = ops::matrix_solve(s, a, grad0(op, g)?, !adj);
    let ga = if adj { mm(s, c, gb.clone(), false, true) } else { mm(s, gb.clone(), c, false, true) };
    Ok(vec![Some(ops::neg(s, ga)), Some(gb)])
}

/// `x[:-2]` of a shape vector.
pub(super) fn batch_part(s: &Scope, shape: Output) -> Output {
    ops::strided_slice(s, shape, ints(s, &[0]), ints(s, &[-2]), ints(s, &[1]), SliceMasks::default())
}

/// MatrixTriangularSolve: as MatrixSolve, `grad_a` kept to `A`'s triangle and summed over
/// broadcast batch dimensions.
fn triangular_solve_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    triangular_solve_grads(s, op, g, ops::matrix_triangular_solve, |ga, _, lower| {
        let band = |lo: i64, hi: i64| (ops::constant(s, lo), ops::constant(s, hi));
        let (lo, hi) = if lower { band(-1, 0) } else { band(0, -1) };
        ops::matrix_band_part(s, ga, lo, hi)
    })
}

/// The gradients of a triangular solve `solve(A, B, lower, adjoint)` (MatrixTriangularSolve,
/// BandedTriangularSolve): `grad_b` the solve of `G` with the adjoint flipped, `grad_a` as
/// MatrixSolve's kept to `A`'s storage by `keep(grad_a, A, lower)`, both summed over the
/// batch dimensions `A` and `B` were broadcast over.
pub(super) fn triangular_solve_grads(
    s: &Scope,
    op: &GradOp,
    g: &[Output],
    solve: fn(&Scope, Output, Output, bool, bool) -> Output,
    keep: impl FnOnce(Output, &Output, bool) -> Output,
) -> Grads {
    let adj = op.node.attr_bool("adjoint")?;
    let lower = op.node.attr_bool("lower")?;
    let (a, b, c) = (input(op, 0)?.clone(), input(op, 1)?.clone(), op.outputs[0].clone());
    let gb = solve(s, a.clone(), grad0(op, g)?, lower, !adj);
    let ga = if adj { mm(s, c, gb.clone(), false, true) } else { mm(s, gb.clone(), c, false, true) };
    let ga = keep(ops::neg(s, ga), &a, lower);
    let (sa, sb) = (static_shape(s, &a), static_shape(s, &b));
    if let (Some(x), Some(y)) = (&sa, &sb) {
        if x[..x.len() - 2] == y[..y.len() - 2] {
            return Ok(vec![Some(ga), Some(gb)]);
        }
    }
    let (a_shape, b_shape) = (shape_of(s, &a, DataType::Int32), shape_of(s, &b, DataType::Int32));
    let (ra, rb) = ops::broadcast_gradient_args(s, batch_part(s, a_shape.clone()), batch_part(s, b_shape.clone()));
    let ga = ops::reshape(s, ops::sum(s, ga, ra, false), a_shape);
    let gb = ops::reshape(s, ops::sum(s, gb, rb, false), b_shape);
    Ok(vec![Some(ga), Some(gb)])
}

/// Cholesky: `L⁻ᴴ·Φ(Lᴴ·G)·L⁻¹` symmetrized, Φ taking the lower triangle with half the
/// diagonal.
fn cholesky_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let l = op.outputs[0].clone();
    let dt = l.dtype;
    let zero = ops::cast(s, ops::constant(s, 0i32), dt);
    let k0 = ops::constant(s, 0i32);
    let diag = ops::matrix_diag_part_v3(s, l.clone(), k0.clone(), zero.clone(), "RIGHT_LEFT");
    let eye =
        ops::matrix_set_diag_v3(s, ops::zeros_like(s, l.clone()), ops::ones_like(s, diag), k0.clone(), "RIGHT_LEFT");
    let l_inv = ops::matrix_triangular_solve(s, l.clone(), eye, true, false);
    let middle = mm(s, l, grad0(op, g)?, true, false);
    let d = ops::matrix_diag_part_v3(s, middle.clone(), k0.clone(), zero, "RIGHT_LEFT");
    let middle = ops::matrix_set_diag_v3(s, middle, ops::mul(s, half(s, dt), d), k0, "RIGHT_LEFT");
    let middle = ops::matrix_band_part(s, middle, ops::constant(s, -1i64), ops::constant(s, 0i64));
    let ga = mm(s, mm(s, l_inv.clone(), middle, true, false), l_inv, false, false);
    let sym = ops::add_v2(s, ga.clone(), matrix_transpose(s, ga));
    Ok(vec![Some(ops::mul(s, sym, half(s, dt)))])
}

/// SelfAdjointEigV2: `V·(diag(g_e) + F∘(Vᴴ·g_v))·Vᴴ` with `F_ij = 1/(e_j − e_i)` off the
/// diagonal (without `compute_v`: the eigenvectors are computed again and `g_v` is 0),
/// then folded onto the lower triangle, the only one the op reads.
fn self_adjoint_eig_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let ge = grad0(op, g)?;
    let e = op.outputs[0].clone();
    let dt = e.dtype;
    let k0 = ops::constant(s, 0i32);
    let zero = ops::cast(s, k0.clone(), dt);
    let minus1 = ops::constant(s, -1i32);
    let diag =
        |d: Output| ops::matrix_diag_v3(s, d, k0.clone(), minus1.clone(), minus1.clone(), zero.clone(), "RIGHT_LEFT");
    let inner = if op.node.attr_bool("compute_v")? {
        let v = op.outputs[1].clone();
        let gv = g.get(1).cloned().ok_or_else(|| ferroflow_core::Status::internal("no gradient for v"))?;
        let diff = ops::sub(
            s,
            ops::expand_dims(s, e.clone(), ops::constant(s, -2i32)),
            ops::expand_dims(s, e.clone(), minus1.clone()),
        );
        let f = ops::matrix_set_diag_v3(s, ops::reciprocal(s, diff), ops::zeros_like(s, e), k0.clone(), "RIGHT_LEFT");
        let mixed = ops::add_v2(s, diag(ge), ops::mul(s, f, mm(s, v.clone(), gv, true, false)));
        mm(s, mm(s, v.clone(), mixed, false, false), v, false, true)
    } else {
        let v = ops::self_adjoint_eig(s, input(op, 0)?.clone(), true).1;
        mm(s, mm(s, v.clone(), diag(ge), false, false), v, false, true)
    };
    let sym = ops::add_v2(s, inner.clone(), matrix_transpose(s, inner));
    let lower = ops::matrix_band_part(s, sym, ops::constant(s, -1i64), ops::constant(s, 0i64));
    let d = ops::matrix_diag_part_v3(s, lower.clone(), k0.clone(), zero, "RIGHT_LEFT");
    Ok(vec![Some(ops::matrix_set_diag_v3(s, lower, ops::mul(s, half(s, dt), d), k0, "RIGHT_LEFT"))])
}
