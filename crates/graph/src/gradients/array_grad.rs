//! Gradient functions of the array ops, with TensorFlow's `array_grad.py` semantics:
//! reshapes (Reshape, ExpandDims, Squeeze, Snapshot), Transpose, ConcatV2, Pack, Unpack,
//! Fill and PreventGradient here; slicing, padding, tiling and broadcasting in
//! `array_grad_slice.rs`; gathers in `array_grad_gather.rs`. Also marks the shape, random
//! and variable-update ops as not differentiable.
//!
//! Shapes the gradients need are constants when the forward op's static shape is fully
//! known (as `tf.shape` is in graph mode) and `Shape` ops otherwise, so unknown batch dims
//! work.

use ferroflow_core::{DataType, NodeAttrs, Status};

use crate::gradients::GradOp;
use crate::ops;
use crate::scope::{Output, Scope};

/// What a gradient function returns.
pub(super) use super::registry::Grads;

/// The optimizer apply ops (reference and resource forms).
pub(super) const APPLY_OPS: [&str; 12] = [
    "ApplyGradientDescent",
    "ResourceApplyGradientDescent",
    "ApplyMomentum",
    "ResourceApplyMomentum",
    "ApplyAdagrad",
    "ResourceApplyAdagrad",
    "ApplyAdagradV2",
    "ResourceApplyAdagradV2",
    "ApplyAdam",
    "ResourceApplyAdam",
    "ApplyRMSProp",
    "ResourceApplyRMSProp",
];

/// An int32 vector constant.
pub(super) fn ints(s: &Scope, v: &[i32]) -> Output {
    ops::constant(s, v.to_vec())
}

/// An int32 scalar constant.
pub(super) fn int(s: &Scope, v: i32) -> Output {
    ops::constant(s, v)
}

/// `x` as int32 (shape and axis arithmetic is done in int32, like TensorFlow's).
pub(super) fn to_i32(s: &Scope, x: &Output) -> Output {
    if x.dtype == DataType::Int32 {
        x.clone()
    } else {
        ops::cast(s, x.clone(), DataType::Int32)
    }
}

/// The static shape of `x` when every dim is known.
pub(super) fn static_shape(s: &Scope, x: &Output) -> Option<Vec<i64>> {
    s.graph().shape_of(x).filter(|d| d.iter().all(|&v| v >= 0))
}

/// The shape of `x` as an `out_type` (int32 or int64) vector: a constant when statically
/// known, else a `Shape` op.
pub(super) fn shape_of(s: &Scope, x: &Output, out_type: DataType) -> Output {
    if let Some(d) = static_shape(s, x) {
        match out_type {
            DataType::Int64 => return ops::constant(s, d),
            _ => {
                if let Ok(v) = d.iter().map(|&v| i32::try_from(v)).collect::<Result<Vec<i32>, _>>() {
                    return ops::constant(s, v);
                }
            }
        }
    }
    ops::shape(s, x.clone(), out_type)
}

/// The static rank of `x`, if known.
pub(super) fn static_rank(s: &Scope, x: &Output) -> Option<usize> {
    s.graph().shape_of(x).map(|d| d.len())
}

/// The rank of `x` as an int32 scalar (a constant when statically known).
pub(super) fn rank_of(s: &Scope, x: &Output) -> Output {
    match static_rank(s, x) {
        Some(r) => int(s, r as i32),
        None => ops::rank(s, x.clone()),
    }
}

/// `[0, 1, …, rank(x) - 1]` as int32 (all axes of `x`).
pub(super) fn all_axes(s: &Scope, x: &Output) -> Output {
    match static_rank(s, x) {
        Some(r) => ints(s, &(0..r as i32).collect::<Vec<_>>()),
        None => ops::range(s, int(s, 0), ops::rank(s, x.clone()), int(s, 1)),
    }
}

/// Input `i` of the forward op, or an internal error.
pub(super) fn input(op: &GradOp, i: usize) -> Result<&Output, Status> {
    op.inputs
        .get(i)
        .ok_or_else(|| Status::internal(format!("node '{}' ({}) has no input {i}", op.node.name, op.node.op)))
}

/// The first output gradient, or an internal error.
pub(super) fn grad0(op: &GradOp, g: &[Output]) -> Result<Output, Status> {
    g.first()
        .cloned()
        .ok_or_else(|| Status::internal(format!("no output gradient for node '{}' ({})", op.node.name, op.node.op)))
}

/// Reshape, ExpandDims, Squeeze: the gradient reshaped to the input's shape.
pub(super) fn reshape_to_input_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let x = input(op, 0)?;
    let dx = ops::reshape(s, grad0(op, g)?, shape_of(s, x, DataType::Int32));
    let mut out = vec![Some(dx)];
    out.resize(op.inputs.len(), None);
    Ok(out)
}

/// PreventGradient: differentiating it is an error carrying the op's `message`.
pub(super) fn prevent_gradient_grad(_: &Scope, op: &GradOp, _: &[Output]) -> Grads {
    let msg = op.node.attr_string("message").unwrap_or_default();
    Err(Status::invalid_argument(format!(
        "node '{}' (PreventGradient): Gradient explicitly disabled. Reason: {msg}",
        op.node.name
    )))
}

/// Transpose: the gradient transposed by the inverse permutation.
pub(super) fn transpose_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let perm = input(op, 1)?;
    let inv = ops::invert_permutation(s, perm.clone());
    Ok(vec![Some(ops::transpose(s, grad0(op, g)?, inv)), None])
}

/// ConcatV2: the gradient sliced at each input's offset (`ConcatOffset` + `Slice`).
pub(super) fn concat_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let grad = grad0(op, g)?;
    let n = op.inputs.len().saturating_sub(1);
    if n == 0 {
        return Err(Status::internal(format!("ConcatV2 node '{}' has no axis input", op.node.name)));
    }
    if n == 1 {
        return Ok(vec![Some(grad), None]);
    }
    let values = &op.inputs[..n];
    let axis = &op.inputs[n];
    // The non-negative concat dim: folded when the axis is a constant and the rank known.
    let const_axis =
        s.graph().const_value(&axis.node).and_then(|t| t.to_f64_vec().ok()).and_then(|v| v.first().copied());
    let non_neg = match (const_axis, static_rank(s, &values[0])) {
        (Some(a), Some(r)) if r > 0 => int(s, (a as i64).rem_euclid(r as i64) as i32),
        _ => ops::floor_mod(s, to_i32(s, axis), rank_of(s, &values[0])),
    };
    let all_static: Option<Vec<Vec<i64>>> = values.iter().map(|v| static_shape(s, v)).collect();
    let sizes = match all_static {
        Some(_) => values.iter().map(|v| shape_of(s, v, DataType::Int32)).collect(),
        None => ops::shape_n(s, values.to_vec(), DataType::Int32),
    };
    let offsets = ops::concat_offset(s, non_neg, sizes.clone());
    let mut out: Vec<Option<Output>> =
        offsets.into_iter().zip(sizes).map(|(b, size)| Some(ops::slice(s, grad.clone(), b, size))).collect();
    out.push(None);
    Ok(out)
}

/// Pack: the gradient unstacked along `axis`.
pub(super) fn pack_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let n = op.node.attr_int("N")?;
    let axis = op.node.attr_int("axis")?;
    Ok(ops::unstack(s, grad0(op, g)?, n, axis).into_iter().map(Some).collect())
}

/// Unpack: the output gradients stacked along `axis`.
pub(super) fn unpack_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let axis = op.node.attr_int("axis")?;
    Ok(vec![Some(ops::stack(s, g.to_vec(), axis))])
}

/// Fill: no gradient for `dims`; the value's gradient is the sum of the gradient.
pub(super) fn fill_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let grad = grad0(op, g)?;
    let axes = all_axes(s, &grad);
    Ok(vec![None, Some(ops::sum(s, grad, axes, false))])
}

#[cfg(test)]
#[path = "array_grad_tests.rs"]
mod tests;
