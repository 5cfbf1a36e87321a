//! Gradients of the ops an embedding lookup builds: `ResourceGather` (rows of a resource
//! variable) and `DynamicStitch` / `ParallelDynamicStitch` (joining the rows looked up in
//! each part of a partitioned table), and [`indexed_slices`], which finds the rows and
//! indices behind a gather's gradient.
//!
//! TensorFlow returns a gather's gradient as an `IndexedSlices` (the gradient rows and the
//! indices they belong to), and optimizers update only those rows. ferroflow's gradients
//! are tensors, so a gather's gradient is the dense `UnsortedSegmentSum` of the rows, marked
//! with [`INDEXED_SLICES_ATTR`]: used as a tensor it is TensorFlow's dense conversion; an
//! optimizer that finds the mark takes the rows and indices instead and applies a sparse
//! update, and the dense sum is never computed (nothing consumes it).

use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use super::array_grad::{grad0, input, Grads};
use super::array_grad_gather::axis0_grad;
use crate::gradients::GradOp;
use crate::graph::Graph;
use crate::ops;
use crate::scope::{Output, Scope};

/// The attr marking a gather gradient's `UnsortedSegmentSum`.
pub const INDEXED_SLICES_ATTR: &str = "_ferroflow_indexed_slices";

/// If `grad` is a gather's gradient, its rows (`[n] + params.shape[1:]`) and their
/// indices (`[n]`, int32 or int64), possibly repeated: TensorFlow's IndexedSlices.
pub fn indexed_slices(g: &Graph, grad: &Output) -> Option<(Output, Output)> {
    let n = g.node(&grad.node)?;
    if n.def.op != "UnsortedSegmentSum" || !n.def.attr_bool(INDEXED_SLICES_ATTR).unwrap_or(false) {
        return None;
    }
    let (values, indices) = (n.def.input.first()?, n.def.input.get(1)?);
    let out = |name: &str| {
        let (node, index) = crate::graph::parse_tensor_name(name).ok()?;
        let e = g.node(node)?;
        Some(Output { node: node.to_string(), index, dtype: e.sig.outputs.get(index)?.0 })
    };
    Some((out(values)?, out(indices)?))
}

/// `ResourceGather(resource, indices)`: the rows of the gradient scattered back into the
/// variable's shape (marked as an IndexedSlices). The variable's shape must be known from
/// its `VarHandleOp`.
pub(super) fn resource_gather_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let handle = input(op, 0)?;
    let indices = input(op, 1)?;
    if op.node.attr_int("batch_dims").unwrap_or(0) != 0 {
        return Err(Status::unimplemented(format!(
            "the gradient of ResourceGather node '{}' with batch_dims != 0 is not implemented yet",
            op.node.name
        )));
    }
    let shape = s
        .graph()
        .node(&handle.node)
        .filter(|n| n.def.op == "VarHandleOp")
        .and_then(|n| n.def.attr_shape("shape").ok().flatten())
        .filter(|d| !d.is_empty() && d.iter().all(|&x| x >= 0));
    let Some(shape) = shape else {
        return Err(Status::unimplemented(format!(
            "cannot differentiate ResourceGather node '{}': the shape of variable '{}' is not fully known \
             (ferroflow takes it from the VarHandleOp's shape attr)",
            op.node.name, handle.node
        )));
    };
    let dims: Vec<i32> = shape.iter().map(|&d| i32::try_from(d).unwrap_or(i32::MAX)).collect();
    let pshape = ops::constant(s, Tensor::vec(dims));
    Ok(vec![Some(axis0_grad(s, pshape, indices, grad0(op, g)?)), None])
}

/// `DynamicStitch(indices_0.., data_0..)`: data_i's gradient is the rows of the output's
/// gradient at indices_i; the indices get none. As in TensorFlow, this assumes every
/// position is written once (an embedding lookup's are): where several data rows write one
/// position, each gets that position's gradient, though only the last one's value is kept.
pub(super) fn stitch_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let n = op.inputs.len() / 2;
    let grad = grad0(op, g)?;
    let mut out: Vec<Option<Output>> = vec![None; n];
    for ix in &op.inputs[..n] {
        let ix = if ix.dtype == DataType::Int32 { ix.clone() } else { ops::cast(s, ix.clone(), DataType::Int32) };
        out.push(Some(ops::gather(s, grad.clone(), ix)));
    }
    Ok(out)
}
