//! Gradients of quantize-and-dequantize, as TensorFlow 2.21's Python registry gives them
//! (`array_grad.py`, `array_ops.py`): `QuantizeAndDequantizeV2` and `V3` pass the incoming
//! gradient straight through to the input, everywhere, and give the range (and `num_bits`)
//! none; `QuantizeAndDequantizeV4` computes all three with `QuantizeAndDequantizeV4Grad`
//! (the gradient where the input lies in [`input_min`, `input_max`], 0 outside; zeros for
//! the range ends). `QuantizeAndDequantizeV4Grad` itself has no usable gradient in
//! TensorFlow (its registered function fails), so none is registered here.

use super::nn_grad::{grad, grad_op};
use super::registry::{GradRegistry, Grads};
use crate::gradients::GradOp;
use crate::scope::{Output, Scope};

/// Straight through to the input; nothing for the other inputs.
fn pass_through(_: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let mut out = vec![Some(grad(op, g, 0)?)];
    out.extend((1..op.inputs.len()).map(|_| None));
    Ok(out)
}

fn v4_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let o = grad_op(s, "QuantizeAndDequantizeV4Grad", op, g, &[0, 1, 2], &["axis"])?;
    Ok((0..3).map(|i| Some(o.output(i))).collect())
}

pub(super) fn register(r: &mut GradRegistry) {
    r.add("QuantizeAndDequantizeV2", pass_through);
    r.add("QuantizeAndDequantizeV3", pass_through);
    r.add("QuantizeAndDequantizeV4", v4_grad);
}
