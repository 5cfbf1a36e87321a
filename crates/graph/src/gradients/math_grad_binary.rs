//! Gradients of the broadcasting binary math ops, AddN, Select and SelectV2 (TensorFlow's
//! `math_grad.py`): each operand's gradient is summed over the axes it was broadcast along.

use ferroflow_core::Status;

use super::math_grad::{reduce_gradient_args, scalar};
use super::registry::Grads;
use crate::gradients::GradOp;
use crate::ops;
use crate::scope::{Output, Scope};

/// The two operands of a binary op.
fn operands(op: &GradOp) -> Result<(Output, Output), Status> {
    match op.inputs.as_slice() {
        [x, y] => Ok((x.clone(), y.clone())),
        v => Err(Status::internal(format!("{} has {} inputs, expected 2", op.node.op, v.len()))),
    }
}

/// Reduces `gx`, `gy` to the operands' shapes.
fn reduced(s: &Scope, x: &Output, y: &Output, gx: Output, gy: Output) -> Grads {
    let (gx, gy) = reduce_gradient_args(s, x, y, Some(gx), Some(gy));
    Ok(vec![gx, gy])
}

pub(super) fn add_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (x, y) = operands(op)?;
    reduced(s, &x, &y, g[0].clone(), g[0].clone())
}

pub(super) fn sub_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (x, y) = operands(op)?;
    let gy = ops::neg(s, g[0].clone());
    reduced(s, &x, &y, g[0].clone(), gy)
}

pub(super) fn mul_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (x, y) = operands(op)?;
    let gx = ops::mul(s, g[0].clone(), y.clone());
    let gy = ops::mul(s, x.clone(), g[0].clone());
    reduced(s, &x, &y, gx, gy)
}

/// `Div`, `RealDiv` and `DivNoNan`: `(g / y, g * ((-x / y) / y))` with the op's own division.
pub(super) fn div_like(s: &Scope, op: &GradOp, g: &[Output], div: fn(&Scope, Output, Output) -> Output) -> Grads {
    let (x, y) = operands(op)?;
    let gx = div(s, g[0].clone(), y.clone());
    let q = div(s, ops::neg(s, x.clone()), y.clone());
    let gy = ops::mul(s, g[0].clone(), div(s, q, y.clone()));
    reduced(s, &x, &y, gx, gy)
}

/// `FloorMod`: `(g, -g * floor_div(x, y))`.
pub(super) fn floor_mod_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (x, y) = operands(op)?;
    let q = ops::floor_div(s, x.clone(), y.clone());
    let gy = ops::mul(s, g[0].clone(), ops::neg(s, q));
    reduced(s, &x, &y, g[0].clone(), gy)
}

/// `Pow`: `g * y * x^(y-1)` and `g * z * log(x)` (0 where `x <= 0`).
pub(super) fn pow_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (x, y) = operands(op)?;
    let dt = x.dtype;
    let ym1 = ops::sub(s, y.clone(), scalar(s, dt, 1.0));
    let gx = ops::mul(s, ops::mul(s, g[0].clone(), y.clone()), ops::pow(s, x.clone(), ym1));
    let mask = ops::greater(s, x.clone(), scalar(s, dt, 0.0));
    let safe_x = ops::select(s, mask.clone(), x.clone(), ops::ones_like(s, x.clone()));
    let log_x = ops::select(s, mask, ops::log(s, safe_x), ops::zeros_like(s, x.clone()));
    let gy = ops::mul(s, ops::mul(s, g[0].clone(), op.outputs[0].clone()), log_x);
    reduced(s, &x, &y, gx, gy)
}

/// `Maximum`/`Minimum`: the gradient goes to `x` where `selector(x, y)`, else to `y`.
pub(super) fn max_min(s: &Scope, op: &GradOp, g: &[Output], selector: fn(&Scope, Output, Output) -> Output) -> Grads {
    let (x, y) = operands(op)?;
    let zeros = ops::zeros_like(s, g[0].clone());
    let xmask = selector(s, x.clone(), y.clone());
    let gx = ops::select_v2(s, xmask.clone(), g[0].clone(), zeros.clone());
    let gy = ops::select_v2(s, xmask, zeros, g[0].clone());
    reduced(s, &x, &y, gx, gy)
}

/// `SquaredDifference`: `±2 g (x - y)`.
pub(super) fn squared_difference_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (x, y) = operands(op)?;
    let two_g = ops::mul(s, scalar(s, g[0].dtype, 2.0), g[0].clone());
    let gx = ops::mul(s, two_g, ops::sub(s, x.clone(), y.clone()));
    let gy = ops::neg(s, gx.clone());
    reduced(s, &x, &y, gx, gy)
}

/// `AddN`: every input gets the gradient.
pub(super) fn add_n_grad(_: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    Ok(vec![Some(g[0].clone()); op.inputs.len()])
}

fn select_inputs(op: &GradOp) -> Result<(Output, Output, Output), Status> {
    match op.inputs.as_slice() {
        [c, t, e] => Ok((c.clone(), t.clone(), e.clone())),
        v => Err(Status::internal(format!("{} has {} inputs, expected 3", op.node.op, v.len()))),
    }
}

/// `Select` (v1): no broadcasting beyond a row-picking vector condition.
pub(super) fn select_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (c, t, _) = select_inputs(op)?;
    let zeros = ops::zeros_like(s, t);
    let gt = ops::select(s, c.clone(), g[0].clone(), zeros.clone());
    let ge = ops::select(s, c, zeros, g[0].clone());
    Ok(vec![None, Some(gt), Some(ge)])
}

/// `SelectV2`: the masked gradients are reduced to each branch's shape.
pub(super) fn select_v2_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (c, t, e) = select_inputs(op)?;
    let z = &op.outputs[0];
    let zero = scalar(s, g[0].dtype, 0.0);
    let gt = ops::select_v2(s, c.clone(), g[0].clone(), zero.clone());
    let ge = ops::select_v2(s, c, zero, g[0].clone());
    let (gt, _) = reduce_gradient_args(s, &t, z, Some(gt), None);
    let (ge, _) = reduce_gradient_args(s, &e, z, Some(ge), None);
    Ok(vec![None, gt, ge])
}
