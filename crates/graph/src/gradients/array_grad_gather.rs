//! Gradients of Gather and GatherV2 (TensorFlow's `array_grad.py`). TensorFlow returns an
//! `IndexedSlices` (the gradient rows and their indices); ferroflow has no IndexedSlices, so
//! the gradient is made dense the way TensorFlow converts one: `UnsortedSegmentSum` of the
//! rows by index (repeated indices add up). A gather along a non-zero axis (or with batch
//! dims) transposes the axis to the front of the non-batch dims, segment-sums, and
//! transposes back.

use ferroflow_core::{DataType, NodeAttrs, Status};

use super::array_grad::{grad0, input, int, ints, shape_of, static_rank, static_shape, to_i32, Grads};
use crate::gradients::GradOp;
use crate::ops::{self, SliceMasks};
use crate::scope::{Output, Scope};

/// `v[begin:]` of a 1-D int32 tensor.
fn tail(s: &Scope, v: Output, begin: Output) -> Output {
    let m = SliceMasks { end: 1, ..Default::default() };
    ops::strided_slice(s, v, begin, ints(s, &[0]), ints(s, &[1]), m)
}

/// `v[:end]` of a 1-D int32 tensor.
fn head(s: &Scope, v: Output, end: Output) -> Output {
    let m = SliceMasks { begin: 1, ..Default::default() };
    ops::strided_slice(s, v, ints(s, &[0]), end, ints(s, &[1]), m)
}

/// `v[i]` of a 1-D tensor (`i` a 1-element int32 vector; negative counts from the end).
fn at(s: &Scope, v: Output, i: Output) -> Output {
    let m = SliceMasks { shrink_axis: 1, ..Default::default() };
    let end = ops::add_v2(s, i.clone(), ints(s, &[1]));
    ops::strided_slice(s, v, i, end, ints(s, &[1]), m)
}

/// A scalar as a 1-element vector.
fn as_vec(s: &Scope, x: Output) -> Output {
    ops::reshape(s, x, ints(s, &[1]))
}

/// `[size(indices)]` as an int32 vector (a constant when the shape is known).
fn indices_size(s: &Scope, indices: &Output) -> Output {
    match static_shape(s, indices).and_then(|d| i32::try_from(d.iter().product::<i64>()).ok()) {
        Some(n) => ints(s, &[n]),
        None => as_vec(s, ops::size(s, indices.clone(), DataType::Int32)),
    }
}

/// The dense gradient of an axis-0 gather without batch dims: the gradient's rows
/// segment-summed into `params_shape[0]` rows, marked as an IndexedSlices
/// ([`super::indexed_slices`]).
pub(super) fn axis0_grad(s: &Scope, params_shape: Output, indices: &Output, grad: Output) -> Output {
    let size = indices_size(s, indices);
    let values_shape = ops::concat(s, vec![size.clone(), tail(s, params_shape.clone(), ints(s, &[1]))], int(s, 0));
    let values = ops::reshape(s, grad, values_shape);
    let flat = ops::reshape(s, indices.clone(), size);
    let rows = at(s, params_shape, ints(s, &[0]));
    // Marked: an optimizer may take the rows and indices instead (TensorFlow's IndexedSlices).
    s.op("UnsortedSegmentSum")
        .input(values)
        .input(flat)
        .input(rows)
        .attr(super::array_grad_sparse::INDEXED_SLICES_ATTR, ferroflow_core::attr::bool(true))
        .build()
        .output(0)
}

/// The shape of params as int32, computed beside params (which may be large and remote).
fn params_shape(s: &Scope, params: &Output) -> Output {
    shape_of(&s.colocate_with(params), params, DataType::Int32)
}

/// Gather (v1): always along axis 0.
pub(super) fn gather_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let params = input(op, 0)?;
    let indices = input(op, 1)?;
    let dx = axis0_grad(s, params_shape(s, params), indices, grad0(op, g)?);
    Ok(vec![Some(dx), None])
}

/// GatherV2 along any axis, with `batch_dims`.
pub(super) fn gather_v2_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let params = input(op, 0)?;
    let indices = input(op, 1)?;
    let axis = input(op, 2)?;
    let grad = grad0(op, g)?;
    let mut batch_dims = op.node.attr_int("batch_dims")?;
    if batch_dims < 0 {
        let Some(r) = static_rank(s, indices) else {
            return Err(Status::invalid_argument(format!(
                "cannot differentiate GatherV2 node '{}': batch_dims is {batch_dims} and the rank of the indices \
                 is unknown; pass a non-negative batch_dims",
                op.node.name
            )));
        };
        batch_dims += r as i64;
    }
    let batch_dims = i32::try_from(batch_dims)
        .map_err(|_| Status::invalid_argument(format!("GatherV2 node '{}': batch_dims out of range", op.node.name)))?;
    let pshape = params_shape(s, params);
    let axis_static =
        s.graph().const_value(&axis.node).and_then(|t| t.to_f64_vec().ok()).and_then(|v| v.first().copied());
    if axis_static == Some(0.0) && batch_dims == 0 {
        return Ok(vec![Some(axis0_grad(s, pshape, indices, grad)), None, None]);
    }
    // Move the gathered axis to just after the batch dims, gather-grad there, move it back.
    let axis = as_vec(s, to_i32(s, axis));
    let outer_shape = head(s, pshape.clone(), axis.clone());
    let inner_shape = tail(s, tail(s, pshape.clone(), axis.clone()), ints(s, &[1]));
    let values_shape = ops::concat(s, vec![outer_shape.clone(), ints(s, &[-1]), inner_shape], int(s, 0));
    let values_dims = ops::size(s, values_shape.clone(), DataType::Int32);
    let axis_dims = ops::size(s, outer_shape, DataType::Int32);
    let outer_batch = ints(s, &(0..batch_dims).collect::<Vec<_>>());
    let batch_axis = ops::range(s, int(s, batch_dims), axis_dims.clone(), int(s, 1));
    let inner_axes = ops::range(s, ops::add_v2(s, axis_dims.clone(), int(s, 1)), values_dims, int(s, 1));
    let values = ops::reshape(s, grad, values_shape);
    let perm = ops::concat(
        s,
        vec![outer_batch.clone(), as_vec(s, axis_dims), batch_axis.clone(), inner_axes.clone()],
        int(s, 0),
    );
    let values_t = ops::transpose(s, values, perm.clone());
    let pshape_t = ops::gather(s, pshape.clone(), perm);
    let gather_dim_size = at(s, pshape, axis);
    let dx = batch_gather_grad(s, pshape_t, values_t, indices, batch_dims, gather_dim_size);
    let inv = ops::concat(
        s,
        vec![outer_batch, ops::add_v2(s, batch_axis, int(s, 1)), ints(s, &[batch_dims]), inner_axes],
        int(s, 0),
    );
    Ok(vec![Some(ops::transpose(s, dx, inv)), None, None])
}

/// The gradient of a gather along the first non-batch dim of `values` (params' shape
/// `params_shape`, `gather_dim_size` rows in that dim).
fn batch_gather_grad(
    s: &Scope,
    params_shape: Output,
    values: Output,
    indices: &Output,
    batch_dims: i32,
    gather_dim_size: Output,
) -> Output {
    let size = indices_size(s, indices);
    if batch_dims == 0 {
        let flat = ops::reshape(s, indices.clone(), size);
        return ops::unsorted_segment_sum(s, values, flat, gather_dim_size);
    }
    let values_shape = ops::shape(s, values.clone(), DataType::Int32);
    let outer_shape = head(s, values_shape.clone(), ints(s, &[batch_dims]));
    let inner_shape = tail(s, values_shape, ints(s, &[batch_dims + 1]));
    let batch_size = ops::prod(s, outer_shape.clone(), ints(s, &[0]), false);
    let flat_values_shape = ops::concat(s, vec![ints(s, &[-1]), inner_shape], int(s, 0));
    let gather_dim_size = ops::mul(s, gather_dim_size, batch_size);
    let batch_indices = batch_offsets(s, &params_shape, indices, batch_dims);
    let values = ops::reshape(s, values, flat_values_shape.clone());
    let flat = ops::reshape(s, batch_indices, size);
    let dx = ops::unsorted_segment_sum(s, values, flat, gather_dim_size);
    ops::reshape(s, dx, ops::concat(s, vec![outer_shape, flat_values_shape], int(s, 0)))
}

/// `indices` plus the offset of each batch position in the flattened batch dims, so one
/// segment sum over `batch * gather_dim_size` rows does all batches.
fn batch_offsets(s: &Scope, params_shape: &Output, indices: &Output, batch_dims: i32) -> Output {
    let dt = if indices.dtype == DataType::Int64 { DataType::Int64 } else { DataType::Int32 };
    let shape = if dt == DataType::Int32 { params_shape.clone() } else { ops::cast(s, params_shape.clone(), dt) };
    let scalar = |v: i64| if dt == DataType::Int64 { ops::constant(s, v) } else { ops::constant(s, v as i32) };
    let indices_rank = match static_rank(s, indices) {
        Some(r) => int(s, r as i32),
        None => ops::rank(s, indices.clone()),
    };
    let mut out = if indices.dtype == dt { indices.clone() } else { ops::cast(s, indices.clone(), dt) };
    let mut accum = scalar(1);
    for dim in (1..=batch_dims).rev() {
        let dim_value = at(s, shape.clone(), ints(s, &[dim - 1]));
        accum = ops::mul(s, accum, at(s, shape.clone(), ints(s, &[dim])));
        let dim_indices = ops::mul(s, ops::range(s, scalar(0), dim_value.clone(), scalar(1)), accum.clone());
        let trailing = ops::sub(s, indices_rank.clone(), int(s, dim));
        let dim_shape = ops::concat(
            s,
            vec![
                ints(s, &vec![1; (dim - 1) as usize]),
                as_vec(s, to_i32(s, &dim_value)),
                ops::fill(s, as_vec(s, trailing), int(s, 1)),
            ],
            int(s, 0),
        );
        out = ops::add_v2(s, out, ops::reshape(s, dim_indices, dim_shape));
    }
    out
}
