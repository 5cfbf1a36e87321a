//! Gradients of the image ops (TensorFlow's `image_grad.py`): the resizes,
//! `ScaleAndTranslate`, `CropAndResize` and `AdjustContrastv2`. Every gradient op carries the forward op's `align_corners` /
//! `half_pixel_centers` (or `method`).

use ferroflow_core::{attr, DataType, NodeAttrs};

use super::array_grad::shape_of;
use super::nn_grad::{copy_attrs, grad, grad_op, input, slice_1d};
use super::registry::Grads;
use crate::gradients::GradOp;
use crate::ops;
use crate::scope::{Output, Scope};

const RESIZE_ATTRS: [&str; 2] = ["align_corners", "half_pixel_centers"];

/// ResizeBilinear(images, size): `ResizeBilinearGrad(dy, images)`; none for `size`.
pub(super) fn resize_bilinear_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    Ok(vec![Some(grad_op(s, "ResizeBilinearGrad", op, g, &[0], &RESIZE_ATTRS)?.output(0)), None])
}

/// ResizeBicubic(images, size): `ResizeBicubicGrad(dy, images)` for float and double
/// images (TensorFlow gives other types no gradient).
pub(super) fn resize_bicubic_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let x = input(op, 0)?;
    if !matches!(x.dtype, DataType::Float | DataType::Double) {
        return Ok(vec![None, None]);
    }
    Ok(vec![Some(grad_op(s, "ResizeBicubicGrad", op, g, &[0], &RESIZE_ATTRS)?.output(0)), None])
}

/// ResizeNearestNeighbor(images, size): `ResizeNearestNeighborGrad(dy, shape(images)[1:3])`.
pub(super) fn resize_nearest_neighbor_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let x = input(op, 0)?;
    let hw = image_hw(s, &x);
    let b = s.op("ResizeNearestNeighborGrad").input(grad(op, g, 0)?).input(hw);
    Ok(vec![Some(copy_attrs(b, &op.node, &RESIZE_ATTRS).build().output(0)), None])
}

/// `[height, width]` of an NHWC image (int32): a constant when statically known.
fn image_hw(s: &Scope, x: &Output) -> Output {
    match s.graph().shape_of(x) {
        Some(d) if d.len() == 4 && d[1] >= 0 && d[2] >= 0 && d[1] <= i32::MAX as i64 && d[2] <= i32::MAX as i64 => {
            ops::constant(s, vec![d[1] as i32, d[2] as i32])
        }
        _ => slice_1d(s, shape_of(s, x, DataType::Int32), Some(1), Some(3)),
    }
}

/// CropAndResize(image, boxes, box_ind, crop_size): `CropAndResizeGradImage` for half,
/// float and double images, and `CropAndResizeGradBoxes` (bilinear, even for nearest
/// crops, as TensorFlow approximates); none for the indices and the crop size.
pub(super) fn crop_and_resize_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (x, boxes, ind, dy) = (input(op, 0)?, input(op, 1)?, input(op, 2)?, grad(op, g, 0)?);
    let method = op.node.attr_string("method").unwrap_or_else(|_| "bilinear".into());
    let dx = if matches!(x.dtype, DataType::Half | DataType::Float | DataType::Double) {
        let size = shape_of(s, &x, DataType::Int32);
        let b = s
            .op("CropAndResizeGradImage")
            .input(dy.clone())
            .input(boxes.clone())
            .input(ind.clone())
            .input(size)
            .attr("T", attr::ty(x.dtype))
            .attr("method", attr::string(&method));
        Some(b.build().output(0))
    } else {
        None
    };
    let db = s
        .op("CropAndResizeGradBoxes")
        .input(dy)
        .input(x)
        .input(boxes)
        .input(ind)
        .attr("method", attr::string("bilinear"))
        .build()
        .output(0);
    Ok(vec![dx, Some(db), None, None])
}

/// ScaleAndTranslate(images, size, scale, translation):
/// `ScaleAndTranslateGrad(dy, images, scale, translation)`; none for the others.
pub(super) fn scale_and_translate_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let o = grad_op(s, "ScaleAndTranslateGrad", op, g, &[0, 2, 3], &["kernel_type", "antialias"])?;
    Ok(vec![Some(o.output(0)), None, None, None])
}

/// AdjustContrastv2(images, factor) = `(x - mean) * factor + mean` (means over height and
/// width): `dy * factor + (1 - factor) * mean(dy)` for the images and
/// `sum(dy * (x - mean(x)))` (in float) for the factor.
pub(super) fn adjust_contrast_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (x, factor, dy) = (input(op, 0)?, input(op, 1)?, grad(op, g, 0)?);
    let to = |t: Output, d: DataType| if t.dtype == d { t } else { ops::cast(s, t, d) };
    let spatial = || ops::constant(s, vec![-3i32, -2]);
    let f = to(factor, x.dtype);
    let one = to(ops::constant(s, 1.0f32), x.dtype);
    let dy_mean = ops::mean(s, dy.clone(), spatial(), true);
    let dx = ops::add_v2(s, ops::mul(s, dy.clone(), f.clone()), ops::mul(s, ops::sub(s, one, f), dy_mean));
    let x_mean = ops::mean(s, x.clone(), spatial(), true);
    let centered = ops::sub(s, to(x, DataType::Float), to(x_mean, DataType::Float));
    let prod = ops::mul(s, to(dy, DataType::Float), centered);
    let all = ops::range(s, ops::constant(s, 0i32), ops::rank(s, prod.clone()), ops::constant(s, 1i32));
    let df = ops::sum(s, prod, all, false);
    Ok(vec![Some(dx), Some(df)])
}
