//! Gradients of fake quantization (TensorFlow's `array_grad.py`): the straight-through
//! estimator, computed by the ops' gradient kernels: the incoming gradient passes where the
//! input lies in the nudged range; for the `Vars` forms, what falls below (above) the range
//! is the gradient of its `min` (`max`).

use super::nn_grad::{copy_attrs, grad, input};
use super::registry::{GradRegistry, Grads};
use crate::gradients::GradOp;
use crate::scope::{Output, Scope};

fn args_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let b = s.op("FakeQuantWithMinMaxArgsGradient").input(grad(op, g, 0)?).input(input(op, 0)?);
    let b = copy_attrs(b, &op.node, &["min", "max", "num_bits", "narrow_range"]);
    Ok(vec![Some(b.build().output(0))])
}

fn vars_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let name = format!("{}Gradient", op.node.op);
    let b = s.op(&name).input(grad(op, g, 0)?).input(input(op, 0)?).input(input(op, 1)?).input(input(op, 2)?);
    let o = copy_attrs(b, &op.node, &["num_bits", "narrow_range"]).build();
    Ok((0..3).map(|i| Some(o.output(i))).collect())
}

pub(super) fn register(r: &mut GradRegistry) {
    r.add("FakeQuantWithMinMaxArgs", args_grad);
    r.add("FakeQuantWithMinMaxVars", vars_grad);
    r.add("FakeQuantWithMinMaxVarsPerChannel", vars_grad);
}
