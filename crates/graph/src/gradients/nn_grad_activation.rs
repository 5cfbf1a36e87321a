//! Gradients of `Softplus`, `Softsign`, `Selu`, `LeakyRelu` and of the gradient ops
//! `SoftplusGrad`, `SeluGrad`, `LeakyReluGrad` (second derivatives; TensorFlow's `nn_grad.py`).

use ferroflow_core::NodeAttrs;

use super::math_grad::scalar;
use super::nn_grad::{activation_grads, grad, input, output};
use super::registry::Grads;
use crate::gradients::GradOp;
use crate::ops;
use crate::scope::{Output, Scope};

fn alpha(op: &GradOp) -> f32 {
    op.node.attr_float("alpha").unwrap_or(0.2)
}

activation_grads! {
    softplus_grad => softplus_grad(input);
    softsign_grad => softsign_grad(input);
    selu_grad => selu_grad(output);
}

pub(super) fn leaky_relu_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    Ok(vec![Some(ops::leaky_relu_grad(s, grad(op, g, 0)?, input(op, 0)?, alpha(op)))])
}

/// `SoftplusGrad(dy, x) = dy / (1 + e⁻ˣ)`: `(SoftplusGrad(g, x), g dy / (e⁻ˣ + 2 + eˣ))`.
pub(super) fn softplus_grad_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (dy, x, gg) = (input(op, 0)?, input(op, 1)?, grad(op, g, 0)?);
    let ddy = ops::softplus_grad(s, gg.clone(), x.clone());
    let den = ops::add_v2(
        s,
        ops::add_v2(s, ops::exp(s, ops::neg(s, x.clone())), scalar(s, x.dtype, 2.0)),
        ops::exp(s, x.clone()),
    );
    let d2x = ops::real_div(s, ops::mul(s, gg, dy), den);
    Ok(vec![Some(ddy), Some(d2x)])
}

/// `SeluGrad(dy, y)`: `(SeluGrad(g, y), y < 0 ? g dy : 0)`.
pub(super) fn selu_grad_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (dy, y, gg) = (input(op, 0)?, input(op, 1)?, grad(op, g, 0)?);
    let neg = ops::less(s, y.clone(), scalar(s, y.dtype, 0.0));
    let dout = ops::select_v2(s, neg, ops::mul(s, gg.clone(), dy), ops::zeros_like(s, y.clone()));
    Ok(vec![Some(ops::selu_grad(s, gg, y)), Some(dout)])
}

/// `LeakyReluGrad(dy, x)` is linear in `dy`: `(LeakyReluGrad(g, x), 0)`.
pub(super) fn leaky_relu_grad_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let x = input(op, 1)?;
    Ok(vec![Some(ops::leaky_relu_grad(s, grad(op, g, 0)?, x.clone(), alpha(op))), Some(ops::zeros_like(s, x))])
}
