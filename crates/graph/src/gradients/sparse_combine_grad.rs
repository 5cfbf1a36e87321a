//! Gradients of `SparseAdd` and `SparseSlice` (TensorFlow's `sparse_grad.py`): the values'
//! gradients come from the gradient ops `SparseAddGrad` (each entry of `a` and `b` takes
//! the gradient of the sum entry it made) and `SparseSliceGrad` (each input entry the slice
//! kept takes its output entry's gradient, the others zero). No gradient for the indices,
//! the shapes, the threshold, the start or the size.

use ferroflow_core::Status;

use super::registry::Grads;
use crate::gradients::GradOp;
use crate::scope::{Operation, Output, Scope};

fn arg(op: &GradOp, i: usize) -> Result<Output, Status> {
    op.inputs.get(i).cloned().ok_or_else(|| Status::internal(format!("{} has no input {i}", op.node.name)))
}

fn values_grad(op: &GradOp, g: &[Output]) -> Result<Output, Status> {
    g.get(1).cloned().ok_or_else(|| Status::internal(format!("{}: no gradient for the values", op.node.name)))
}

/// The gradient op `grad_op` of a sparse op on (values' gradient, input 0's indices, input
/// 3's indices, output 0's indices): the two ops' inputs agree on that layout.
fn values_grad_op(s: &Scope, op: &GradOp, g: &[Output], grad_op: &str) -> Result<Operation, Status> {
    let out_indices =
        op.outputs.first().cloned().ok_or_else(|| Status::internal(format!("{} has no outputs", op.node.name)))?;
    Ok(s.op(grad_op).inputs([values_grad(op, g)?, arg(op, 0)?, arg(op, 3)?, out_indices]).build())
}

/// `SparseAdd`: `(None, a_values', None, None, b_values', None, None)`.
pub(super) fn sparse_add_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let o = values_grad_op(s, op, g, "SparseAddGrad")?;
    Ok(vec![None, Some(o.output(0)), None, None, Some(o.output(1)), None, None])
}

/// `SparseSlice`: `(None, values', None, None, None)`.
pub(super) fn sparse_slice_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let o = values_grad_op(s, op, g, "SparseSliceGrad")?;
    Ok(vec![None, Some(o.output(0)), None, None, None])
}
