//! Gradients of TridiagonalSolve, TridiagonalMatMul, BandedTriangularSolve and
//! MatrixSquareRoot (real types), as TensorFlow 2.21's `linalg_grad.py` builds them.
//! TensorFlow registers no gradient for `Lu`, nor does ferroflow.

use ferroflow_core::{DataType, NodeAttrs};

use super::array_grad::{grad0, input, ints, shape_of, Grads};
use super::linalg_grad::{batch_part, matrix_transpose, triangular_solve_grads};
use super::registry::GradRegistry;
use crate::gradients::GradOp;
use crate::ops::{self, SliceMasks};
use crate::scope::{Output, Scope};

/// Registers the gradients.
pub(super) fn register(r: &mut GradRegistry) {
    r.add("TridiagonalSolve", tridiagonal_solve_grad);
    r.add("TridiagonalMatMul", tridiagonal_matmul_grad);
    r.add("BandedTriangularSolve", banded_triangular_solve_grad);
    r.add("MatrixSquareRoot", matrix_square_root_grad);
}

/// `x[..., spec]` for the trailing `(begin, end, shrink)` specs (`None` ends run to the end).
fn tail_slice(s: &Scope, x: Output, specs: &[(i32, Option<i32>, bool)]) -> Output {
    let mut masks = SliceMasks { ellipsis: 1, ..Default::default() };
    let (mut b, mut e, mut st) = (vec![0], vec![0], vec![1]);
    for (i, &(lo, hi, shrink)) in specs.iter().enumerate() {
        b.push(lo);
        e.push(hi.unwrap_or(if shrink { lo + 1 } else { 0 }));
        st.push(1);
        if hi.is_none() && !shrink {
            masks.end |= 1 << (i + 1);
        }
        if shrink {
            masks.shrink_axis |= 1 << (i + 1);
        }
    }
    ops::strided_slice(s, x, ints(s, &b), ints(s, &e), ints(s, &st), masks)
}

/// `x[..., 1:, :]` followed by a zero row (TensorFlow's `_LeftShift`).
fn left_shift(s: &Scope, x: Output) -> Output {
    let rest = tail_slice(s, x.clone(), &[(1, None, false), (0, None, false)]);
    let zero = ops::zeros_like(s, tail_slice(s, x, &[(0, Some(1), false), (0, None, false)]));
    ops::concat(s, vec![rest, zero], ops::constant(s, -2i32))
}

/// A zero row followed by `x[..., :-1, :]` (TensorFlow's `_RightShift`).
fn right_shift(s: &Scope, x: Output) -> Output {
    let rest = tail_slice(s, x.clone(), &[(0, Some(-1), false), (0, None, false)]);
    let zero = ops::zeros_like(s, tail_slice(s, x, &[(0, Some(1), false), (0, None, false)]));
    ops::concat(s, vec![zero, rest], ops::constant(s, -2i32))
}

fn sum_last(s: &Scope, x: Output) -> Output {
    ops::sum(s, x, ops::constant(s, -1i32), false)
}

/// TridiagonalSolve: `grad_rhs` solves the transposed system; `grad_diags` is minus the
/// three diagonals of `grad_rhs·xᵀ`.
fn tridiagonal_solve_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let diags = input(op, 0)?.clone();
    let x = op.outputs[0].clone();
    let piv = op.node.attr_bool("partial_pivoting")?;
    let pert = op.node.attr_bool("perturb_singular").unwrap_or(false);
    // The transpose's diagonals: superdiagonal = subdiagonal shifted left, and back.
    let row = |i: i32, lo: i32, hi: Option<i32>| tail_slice(s, diags.clone(), &[(i, None, true), (lo, hi, false)]);
    let zeros = ops::zeros_like(s, row(1, 0, Some(1)));
    let minus1 = ops::constant(s, -1i32);
    let sup = ops::concat(s, vec![row(2, 1, None), zeros.clone()], minus1.clone());
    let sub = ops::concat(s, vec![zeros, row(0, 0, Some(-1))], minus1);
    let diags_t = ops::stack(s, vec![sup, row(1, 0, None), sub], -2);
    let grad_rhs = ops::tridiagonal_solve(s, diags_t, grad0(op, g)?, piv, pert);
    // The three diagonals of grad_rhs · xᵀ.
    let main = sum_last(s, ops::mul(s, grad_rhs.clone(), x.clone()));
    let up = sum_last(s, ops::mul(s, grad_rhs.clone(), left_shift(s, x.clone())));
    let down = sum_last(s, ops::mul(s, grad_rhs.clone(), right_shift(s, x)));
    let grad_diags = ops::neg(s, ops::stack(s, vec![up, main, down], -2));
    Ok(vec![Some(grad_diags), Some(grad_rhs)])
}

/// TridiagonalMatMul: each diagonal's gradient is the row sums of `grad` times the
/// (shifted) rhs; the rhs's is the transposed tridiagonal product.
fn tridiagonal_matmul_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let grad = grad0(op, g)?;
    let (sup, main, sub, rhs) =
        (input(op, 0)?.clone(), input(op, 1)?.clone(), input(op, 2)?.clone(), input(op, 3)?.clone());
    let row = |x: Output| ops::expand_dims(s, sum_last(s, x), ops::constant(s, -2i32));
    let g_sup = row(ops::mul(s, left_shift(s, rhs.clone()), grad.clone()));
    let g_main = row(ops::mul(s, rhs.clone(), grad.clone()));
    let g_sub = row(ops::mul(s, right_shift(s, rhs), grad.clone()));
    let times = |d: Output| ops::mul(s, matrix_transpose(s, d), grad.clone());
    let g_rhs = ops::add_v2(s, ops::add_v2(s, right_shift(s, times(sup)), times(main)), left_shift(s, times(sub)));
    Ok(vec![Some(g_sup), Some(g_main), Some(g_sub), Some(g_rhs)])
}

/// BandedTriangularSolve: as MatrixTriangularSolve's, `grad_a` kept to the band (in band
/// storage) and summed over broadcast batch dimensions.
fn banded_triangular_solve_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    triangular_solve_grads(s, op, g, ops::banded_triangular_solve, |ga, a, lower| {
        let bands = tail_slice(s, shape_of(s, a, DataType::Int32), &[(-2, None, true)]);
        let last = ops::sub(s, bands, ops::constant(s, 1i32));
        let zero = ops::constant(s, 0i32);
        let k = if lower { vec![ops::neg(s, last), zero] } else { vec![zero, last] };
        let pad = ops::cast(s, ops::constant(s, 0i32), a.dtype);
        ops::matrix_diag_part_v3(s, ga, ops::stack(s, k, 0), pad, "LEFT_RIGHT")
    })
}

/// MatrixSquareRoot: solves the Sylvester equation `R·dR + dR·R = dA` through its
/// Kronecker form `(I ⊗ Rᵀ + R ⊗ I)·vec(dR) = vec(dA)`.
fn matrix_square_root_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let r = op.outputs[0].clone();
    let grad = grad0(op, g)?;
    let shape = shape_of(s, &r, DataType::Int32);
    let m = tail_slice(s, shape.clone(), &[(-1, None, true)]);
    let batch = batch_part(s, shape.clone());
    let one = ops::constant(s, vec![1i32]);
    let mv = ops::reshape(s, m.clone(), ints(s, &[1]));
    let cat = |parts: Vec<Output>| ops::concat(s, parts, ops::constant(s, 0i32));
    let mm2 = ops::mul(s, mv.clone(), mv.clone());
    let kron = |b1: Output, b2: Output| {
        let s1 = cat(vec![batch.clone(), mv.clone(), one.clone(), mv.clone(), one.clone()]);
        let s2 = cat(vec![batch.clone(), one.clone(), mv.clone(), one.clone(), mv.clone()]);
        let p = ops::mul(s, ops::reshape(s, b1, s1), ops::reshape(s, b2, s2));
        ops::reshape(s, p, cat(vec![batch.clone(), mm2.clone(), mm2.clone()]))
    };
    let zero = ops::cast(s, ops::constant(s, 0i32), r.dtype);
    let k0 = ops::constant(s, 0i32);
    let diag = ops::matrix_diag_part_v3(s, r.clone(), k0.clone(), zero, "RIGHT_LEFT");
    let eye = ops::matrix_set_diag_v3(s, ops::zeros_like(s, r.clone()), ops::ones_like(s, diag), k0, "RIGHT_LEFT");
    let ksum = ops::add_v2(s, kron(eye.clone(), matrix_transpose(s, r.clone())), kron(r, eye));
    let vec_da = ops::reshape(s, matrix_transpose(s, grad), cat(vec![batch, mm2, one]));
    let vec_dr = ops::matrix_solve(s, ksum, vec_da, false);
    Ok(vec![Some(matrix_transpose(s, ops::reshape(s, vec_dr, shape)))])
}
