//! The gradients of `RaggedTensorToTensor` and `RaggedTensorToSparse` (TensorFlow's
//! `ragged_conversion_ops.py`). `RaggedTensorToSparse` keeps every value once, in order: the
//! values' gradient is the sparse values' gradient in the values' shape.
//!
//! The op is run again on the row indices `0..nvals` (default -1) with the same partitions,
//! which says, for every position of the dense output, the value it came from or -1.
//! The values' gradient is `UnsortedSegmentSum(grad, that index, nvals)` (a -1 position is
//! dropped, and a value cut by `shape` gets zero); the default's is the rest of `grad`:
//! its sum over the dense dims minus the values' gradient summed over the values, reduced
//! to the default's shape where it was broadcast. No gradient for the shape or partitions.

use ferroflow_core::{DataType, NodeAttrs};

use super::math_grad::{int32_vec, reduce_gradient_args};
use super::nn_grad::{grad, input};
use super::registry::Grads;
use crate::gradients::GradOp;
use crate::ops;
use crate::scope::{Output, Scope};

pub(super) fn ragged_tensor_to_tensor_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let types = op.node.attr_list_string("row_partition_types")?;
    let ragged_rank = types.iter().filter(|t| t.as_str() != "FIRST_DIM_SIZE").count() as i64;
    let (values, default, dy) = (input(op, 1)?, input(op, 2)?, grad(op, g, 0)?);
    let partitions: Vec<Output> = op.inputs[3..].to_vec();
    // The dense dims of the output (those the partitions describe) and the number of values.
    let dense =
        ops::slice(s, ops::shape(s, dy.clone(), DataType::Int32), int32_vec(s, &[0]), int32_vec(s, &[ragged_rank + 1]));
    let nvals = ops::reshape(
        s,
        ops::slice(s, ops::shape(s, values.clone(), DataType::Int32), int32_vec(s, &[0]), int32_vec(s, &[1])),
        int32_vec(s, &[]),
    );
    let rows = ops::range(s, ops::constant(s, 0i32), nvals.clone(), ops::constant(s, 1i32));
    let type_refs: Vec<&str> = types.iter().map(String::as_str).collect();
    let index = ops::ragged_tensor_to_tensor(s, dense, rows, ops::constant(s, -1i32), partitions, &type_refs);
    let dvalues = ops::unsorted_segment_sum(s, dy.clone(), index, nvals);
    // Everything the values did not take went to the default.
    let axes: Vec<i64> = (0..=ragged_rank).collect();
    let total = ops::sum(s, dy, int32_vec(s, &axes), false);
    let taken = ops::sum(s, dvalues.clone(), int32_vec(s, &[0]), false);
    let rest = ops::sub(s, total, taken);
    let (ddefault, _) = reduce_gradient_args(s, &default, &rest, Some(rest.clone()), None);
    Ok(std::iter::once(None).chain([Some(dvalues), ddefault]).chain(op.inputs[3..].iter().map(|_| None)).collect())
}

pub(super) fn ragged_tensor_to_sparse_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let k = op.inputs.len() - 1;
    let values = input(op, k)?;
    let dv = ops::reshape(s, grad(op, g, 1)?, ops::shape(s, values, DataType::Int32));
    let mut out: Vec<Option<Output>> = vec![None; k];
    out.push(Some(dv));
    Ok(out)
}
