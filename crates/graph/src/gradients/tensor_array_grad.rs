//! Gradient functions of the TensorArray ops, with the semantics of TensorFlow's
//! `tensor_array_grad.py`: the gradient of an array is its gradient array
//! (`TensorArrayGradV3`, one per `gradients` call, named by the call's scope); a read's
//! gradient is a write into it, a write's a read from it, gather ↔ scatter, concat ↔
//! split. Repeated gradient writes to one index add up (the gradient array aggregates),
//! which is how an element read several times gets the sum of its gradients. The
//! handle-making and size ops are not differentiable.

use ferroflow_core::{NodeAttrs, Status};

use super::array_grad::Grads;
use crate::gradients::GradOp;
use crate::scope::{Output, Scope};
use crate::tensor_array::TensorArray;

/// The gradient source of a gradient scope, as TensorFlow names it: the scope's path up
/// to and including its first `gradients*` component.
fn source(s: &Scope) -> String {
    let mut parts = Vec::new();
    for p in s.prefix().split('/') {
        parts.push(p);
        if p.starts_with("gradients") {
            return parts.join("/");
        }
    }
    "gradients".to_string()
}

fn forward(op: &GradOp, dtype_attr: &str) -> Result<TensorArray, Status> {
    let dtype = op.node.attr_type(dtype_attr)?;
    let handle = op.inputs.first().cloned().ok_or_else(|| Status::internal("TensorArray op without a handle"))?;
    let flow = op.inputs.last().cloned().ok_or_else(|| Status::internal("TensorArray op without a flow"))?;
    Ok(TensorArray::from_parts(handle, flow, dtype))
}

/// A write or a scatter of a value at an index or indices ([`TensorArray::write`], [`TensorArray::scatter`]).
type Put = fn(&TensorArray, &Scope, Output, Output) -> TensorArray;
/// A read or a gather at an index or indices ([`TensorArray::read`], [`TensorArray::gather`]).
type Get = fn(&TensorArray, &Scope, Output) -> Output;

fn input(op: &GradOp, i: usize) -> Result<Output, Status> {
    op.inputs.get(i).cloned().ok_or_else(|| Status::internal(format!("{} has no input {i}", op.node.op)))
}

/// `TensorArrayReadV3` and `TensorArrayGatherV3`: `dy` put (by `write` or `scatter`) at the
/// same index or indices of the gradient array.
pub(super) fn read_grad(s: &Scope, op: &GradOp, g: &[Output], put: Put) -> Grads {
    let ta = forward(op, "dtype")?;
    let w = put(&ta.grad(s, &source(s), ta.flow.clone()), s, input(op, 1)?, g[0].clone());
    Ok(vec![None, None, Some(w.flow)])
}

/// `TensorArrayWriteV3` and `TensorArrayScatterV3`: the gradient array got (by `read` or
/// `gather`) at the same index or indices.
pub(super) fn write_grad(s: &Scope, op: &GradOp, g: &[Output], get: Get) -> Grads {
    let ta = forward(op, "T")?;
    let v = get(&ta.grad(s, &source(s), g[0].clone()), s, input(op, 1)?);
    Ok(vec![None, None, Some(v), Some(g[0].clone())])
}

pub(super) fn concat_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let ta = forward(op, "dtype")?;
    let lengths = op.outputs.get(1).cloned().ok_or_else(|| Status::internal("TensorArrayConcatV3 without lengths"))?;
    let ga = ta.grad(s, &source(s), ta.flow.clone());
    let w = ga.split(s, g[0].clone(), lengths);
    Ok(vec![None, Some(w.flow)])
}

pub(super) fn split_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let ta = forward(op, "T")?;
    let ga = ta.grad(s, &source(s), g[0].clone());
    let (v, _) = ga.concat(s);
    Ok(vec![None, Some(v), None, Some(g[0].clone())])
}
