//! Gradients of `SparseAdd` and `SparseSlice` (TensorFlow's `sparse_grad.py`): the values'
//! gradients come from the gradient ops `SparseAddGrad` (each entry of `a` and `b` takes
//! the gradient of the sum entry it made) and `SparseSliceGrad` (each input entry the slice
//! kept takes its output entry's gradient, the others zero). No gradient for the indices,
//! the shapes, the threshold, the start or the size.

use ferroflow_core::Status;

use crate::gradients::GradOp;
use crate::scope::{Output, Scope};

type Grads = Result<Vec<Option<Output>>, Status>;

fn arg(op: &GradOp, i: usize) -> Result<Output, Status> {
    op.inputs.get(i).cloned().ok_or_else(|| Status::internal(format!("{} has no input {i}", op.node.name)))
}

fn values_grad(op: &GradOp, g: &[Output]) -> Result<Output, Status> {
    g.get(1).cloned().ok_or_else(|| Status::internal(format!("{}: no gradient for the values", op.node.name)))
}

/// `SparseAdd`: `(None, a_values', None, None, b_values', None, None)`.
pub(super) fn sparse_add_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let sum_indices =
        op.outputs.first().cloned().ok_or_else(|| Status::internal(format!("{} has no outputs", op.node.name)))?;
    let o = s
        .op("SparseAddGrad")
        .input(values_grad(op, g)?)
        .input(arg(op, 0)?)
        .input(arg(op, 3)?)
        .input(sum_indices)
        .build();
    Ok(vec![None, Some(o.output(0)), None, None, Some(o.output(1)), None, None])
}

/// `SparseSlice`: `(None, values', None, None, None)`.
pub(super) fn sparse_slice_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let out_indices =
        op.outputs.first().cloned().ok_or_else(|| Status::internal(format!("{} has no outputs", op.node.name)))?;
    let o = s
        .op("SparseSliceGrad")
        .input(values_grad(op, g)?)
        .input(arg(op, 0)?)
        .input(arg(op, 3)?)
        .input(out_indices)
        .build();
    Ok(vec![None, Some(o.output(0)), None, None, None])
}
