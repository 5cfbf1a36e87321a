//! Gradients of the elementwise unary math ops, of their gradient helpers (`TanhGrad`, …,
//! for second derivatives) and of `Cast` (TensorFlow's `math_grad.py`).

use ferroflow_core::Status;

use super::math_grad::scalar;
use super::registry::Grads;
use crate::gradients::GradOp;
use crate::ops;
use crate::scope::{Output, Scope};

fn one(o: Output) -> Grads {
    Ok(vec![Some(o)])
}

fn input(op: &GradOp, i: usize) -> Result<Output, Status> {
    op.inputs.get(i).cloned().ok_or_else(|| Status::internal(format!("{} has no input {i}", op.node.op)))
}

fn y(op: &GradOp) -> Output {
    op.outputs[0].clone()
}

pub(super) fn neg_grad(s: &Scope, _: &GradOp, g: &[Output]) -> Grads {
    one(ops::neg(s, g[0].clone()))
}

pub(super) fn abs_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    one(ops::mul(s, g[0].clone(), ops::sign(s, input(op, 0)?)))
}

/// `Sign`: zeros, as TensorFlow returns (not None).
pub(super) fn sign_grad(s: &Scope, op: &GradOp, _: &[Output]) -> Grads {
    one(ops::zeros_like(s, input(op, 0)?))
}

/// `Reciprocal` / `Inv`: `-g y²` via `ReciprocalGrad`.
pub(super) fn reciprocal_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    one(ops::reciprocal_grad(s, y(op), g[0].clone()))
}

pub(super) fn square_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let x = input(op, 0)?;
    let two_x = ops::mul(s, x.clone(), scalar(s, x.dtype, 2.0));
    one(ops::mul(s, g[0].clone(), two_x))
}

pub(super) fn sqrt_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    one(ops::sqrt_grad(s, y(op), g[0].clone()))
}

pub(super) fn rsqrt_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    one(ops::rsqrt_grad(s, y(op), g[0].clone()))
}

pub(super) fn exp_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    one(ops::mul(s, g[0].clone(), y(op)))
}

pub(super) fn log_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    one(ops::mul(s, g[0].clone(), ops::reciprocal(s, input(op, 0)?)))
}

pub(super) fn log1p_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let x = input(op, 0)?;
    let one_plus_x = ops::add_v2(s, scalar(s, x.dtype, 1.0), x);
    one(ops::mul(s, g[0].clone(), ops::reciprocal(s, one_plus_x)))
}

pub(super) fn tanh_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    one(ops::tanh_grad(s, y(op), g[0].clone()))
}

pub(super) fn sigmoid_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    one(ops::sigmoid_grad(s, y(op), g[0].clone()))
}

/// `c * a * b * …` built left to right, like TensorFlow's `grad * c * b * a`.
fn product(s: &Scope, first: Output, rest: &[Output]) -> Output {
    rest.iter().fold(first, |acc, o| ops::mul(s, acc, o.clone()))
}

/// `TanhGrad(a, b) = b (1 - a²)`: `(-2 g b a, TanhGrad(a, g))`.
pub(super) fn tanh_grad_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (a, b) = (input(op, 0)?, input(op, 1)?);
    let ga = product(s, g[0].clone(), &[scalar(s, a.dtype, -2.0), b, a.clone()]);
    Ok(vec![Some(ga), Some(ops::tanh_grad(s, a, g[0].clone()))])
}

/// `SigmoidGrad(a, b) = b a (1 - a)`: `(g b - 2 g b a, SigmoidGrad(a, g))`.
pub(super) fn sigmoid_grad_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (a, b) = (input(op, 0)?, input(op, 1)?);
    let gb = ops::mul(s, g[0].clone(), b);
    let two_gb_a = product(s, scalar(s, a.dtype, 2.0), &[gb.clone(), a.clone()]);
    let ga = ops::sub(s, gb, two_gb_a);
    Ok(vec![Some(ga), Some(ops::sigmoid_grad(s, a, g[0].clone()))])
}

/// `SqrtGrad(a, b) = 0.5 b / a`: `(-(g / a) y, 0.5 g / a)`.
pub(super) fn sqrt_grad_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let a = input(op, 0)?;
    let ga = ops::real_div(s, g[0].clone(), a.clone());
    let da = ops::mul(s, ops::neg(s, ga.clone()), y(op));
    let db = ops::mul(s, scalar(s, a.dtype, 0.5), ga);
    Ok(vec![Some(da), Some(db)])
}

/// `RsqrtGrad(a, b) = -0.5 b a³`: `(-1.5 g b a², RsqrtGrad(a, g))`.
pub(super) fn rsqrt_grad_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (a, b) = (input(op, 0)?, input(op, 1)?);
    let da = product(s, scalar(s, a.dtype, -1.5), &[g[0].clone(), b, ops::square(s, a.clone())]);
    Ok(vec![Some(da), Some(ops::rsqrt_grad(s, a, g[0].clone()))])
}

/// `ReciprocalGrad(a, b) = -b a²` (also `InvGrad`): `(-2 g b a, ReciprocalGrad(a, g))`.
pub(super) fn reciprocal_grad_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (a, b) = (input(op, 0)?, input(op, 1)?);
    let da = product(s, g[0].clone(), &[scalar(s, a.dtype, -2.0), b, a.clone()]);
    Ok(vec![Some(da), Some(ops::reciprocal_grad(s, a, g[0].clone()))])
}

/// `Cast`: the gradient cast back, between float types only (None otherwise).
pub(super) fn cast_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let src = input(op, 0)?.dtype;
    if src.is_float() && g[0].dtype.is_float() {
        one(ops::cast(s, g[0].clone(), src))
    } else {
        Ok(vec![None])
    }
}
