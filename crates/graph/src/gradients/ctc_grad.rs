//! The gradient of `CTCLoss` (TensorFlow's `_CTCLossGrad`): the loss kernel computes the
//! gradient with respect to the logits itself (output 1); the incoming gradient of each
//! entry's loss scales it. A second derivative is refused, as in TensorFlow. The decoders
//! are not differentiable.

use super::nn_grad::{broadcast_mul, grad, output};
use super::registry::{GradRegistry, Grads};
use crate::gradients::GradOp;
use crate::ops;
use crate::scope::{Output, Scope};

fn ctc_loss_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let fused = ops::prevent_gradient(
        s,
        output(op, 1)?,
        "Currently there is no way to take the second derivative of ctc_loss due to the fused implementation's interaction with tf.gradients()",
    );
    Ok(vec![Some(broadcast_mul(s, grad(op, g, 0)?, fused)), None, None, None])
}

pub(super) fn register(r: &mut GradRegistry) {
    r.add("CTCLoss", ctc_loss_grad);
    r.no_gradient(&["CTCGreedyDecoder", "CTCBeamSearchDecoder"]);
}
