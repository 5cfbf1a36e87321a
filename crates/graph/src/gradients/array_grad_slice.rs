//! Gradients of slicing, padding, tiling and broadcasting (TensorFlow's `array_grad.py`):
//! Slice (pad the gradient back), StridedSlice (`StridedSliceGrad`), StridedSliceGrad,
//! Pad / PadV2 (slice the gradient), Tile (sum over the tiles), BroadcastTo (sum over the
//! broadcast dims).

use ferroflow_core::{DataType, NodeAttrs, Status};

use super::array_grad::{grad0, input, int, ints, rank_of, shape_of, static_rank, Grads};
use crate::gradients::GradOp;
use crate::ops::{self, SliceMasks};
use crate::scope::{Output, Scope};

/// `[rank(x), 1]` as an int32 vector (the shape of one column of paddings).
fn rank_by_one(s: &Scope, x: &Output) -> Output {
    match static_rank(s, x) {
        Some(r) => ints(s, &[r as i32, 1]),
        None => ops::stack(s, vec![rank_of(s, x), int(s, 1)], 0),
    }
}

/// Slice: the gradient padded with `begin` zeros before and the rest after, per dim.
pub(super) fn slice_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let x = input(op, 0)?;
    let begin = input(op, 1)?;
    let out = op.outputs.first().ok_or_else(|| Status::internal("Slice has no output"))?;
    let index = begin.dtype;
    let slice_size = shape_of(s, out, index);
    let shape = rank_by_one(s, x);
    let before = ops::reshape(s, begin.clone(), shape.clone());
    let rest = ops::sub(s, ops::sub(s, shape_of(s, x, index), slice_size), begin.clone());
    let after = ops::reshape(s, rest, shape);
    let paddings = ops::concat(s, vec![before, after], int(s, 1));
    Ok(vec![Some(ops::pad(s, grad0(op, g)?, paddings)), None, None])
}

/// The five masks of a (forward or gradient) strided slice node.
fn masks_of(op: &GradOp) -> Result<SliceMasks, Status> {
    let n = &op.node;
    Ok(SliceMasks {
        begin: n.attr_int("begin_mask")?,
        end: n.attr_int("end_mask")?,
        ellipsis: n.attr_int("ellipsis_mask")?,
        new_axis: n.attr_int("new_axis_mask")?,
        shrink_axis: n.attr_int("shrink_axis_mask")?,
    })
}

/// StridedSlice: `StridedSliceGrad` scatters the gradient into zeros of the input's shape.
pub(super) fn strided_slice_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let x = input(op, 0)?;
    let mut spec = [input(op, 1)?.clone(), input(op, 2)?.clone(), input(op, 3)?.clone()];
    // StridedSliceGrad takes int32 or int64 (StridedSlice also int16).
    let index = match spec[0].dtype {
        DataType::Int64 => DataType::Int64,
        _ => DataType::Int32,
    };
    for v in spec.iter_mut() {
        if v.dtype != index {
            *v = ops::cast(s, v.clone(), index);
        }
    }
    let [begin, end, strides] = spec;
    let shape = shape_of(s, x, index);
    let dx = ops::strided_slice_grad(s, shape, begin, end, strides, grad0(op, g)?, masks_of(op)?);
    Ok(vec![Some(dx), None, None, None])
}

/// StridedSliceGrad: its `dy` gradient is the same strided slice of the gradient.
pub(super) fn strided_slice_grad_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (begin, end, strides) = (input(op, 1)?.clone(), input(op, 2)?.clone(), input(op, 3)?.clone());
    let ddy = ops::strided_slice(s, grad0(op, g)?, begin, end, strides, masks_of(op)?);
    Ok(vec![None, None, None, None, Some(ddy)])
}

/// Pad, PadV2: the gradient sliced at the leading paddings, with the input's shape.
pub(super) fn pad_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let x = input(op, 0)?;
    let paddings = input(op, 1)?;
    let before = ops::slice(s, paddings.clone(), ints(s, &[0, 0]), rank_by_one(s, x));
    let begin = ops::reshape(s, before, ints(s, &[-1]));
    let sizes = shape_of(s, x, paddings.dtype);
    let dx = ops::slice(s, grad0(op, g)?, begin, sizes);
    let mut out = vec![Some(dx)];
    out.resize(op.inputs.len(), None);
    Ok(out)
}

/// Tile: the gradient reshaped to interleaved `[multiple, dim, …]` and summed over the
/// multiples.
pub(super) fn tile_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let x = input(op, 0)?;
    let multiples = input(op, 1)?;
    let input_shape = shape_of(s, x, multiples.dtype);
    let stacked = ops::stack(s, vec![multiples.clone(), input_shape], 0);
    let split_shape = ops::reshape(s, ops::transpose(s, stacked, ints(s, &[1, 0])), ints(s, &[-1]));
    let axes = match static_rank(s, x) {
        Some(r) => ints(s, &(0..r as i32).map(|i| 2 * i).collect::<Vec<_>>()),
        None => ops::range(s, int(s, 0), ops::size(s, split_shape.clone(), DataType::Int32), int(s, 2)),
    };
    let dx = ops::sum(s, ops::reshape(s, grad0(op, g)?, split_shape), axes, false);
    Ok(vec![Some(dx), None])
}

/// BroadcastTo: the gradient summed over the broadcast dims, reshaped to the input's shape.
pub(super) fn broadcast_to_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let x = input(op, 0)?;
    let shape = input(op, 1)?;
    let x_shape = shape_of(s, x, shape.dtype);
    let (_, axes) = ops::broadcast_gradient_args(s, shape.clone(), x_shape.clone());
    let summed = ops::sum(s, grad0(op, g)?, axes, true);
    Ok(vec![Some(ops::reshape(s, summed, x_shape)), None])
}
