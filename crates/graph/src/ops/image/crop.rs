//! `CropAndResize` and its gradients `CropAndResizeGradImage`, `CropAndResizeGradBoxes`.

use ferroflow_core::{attr, Status};

use super::{const_vec, resized_to, with_rank};
use crate::op_def::op;
use crate::ops::op_output;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{Dims, ShapeCtx};

const CROP_TYPES: &str = "{uint8, uint16, int8, int16, int32, int64, half, float, double}";

/// [num_boxes, crop_h, crop_w, depth].
fn crops_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let x = with_rank(c, &c.input(0), 4, "image")?;
    let b = with_rank(c, &c.input(1), 2, "boxes")?;
    with_rank(c, &c.input(2), 1, "box_ind")?;
    resized_to(c, b[0], &x, 3)
}

fn grad_image_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    with_rank(c, &c.input(0), 4, "grads")?;
    Ok(vec![Some(const_vec(c, 3, 4)?)])
}

fn grad_boxes_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    with_rank(c, &c.input(0), 4, "grads")?;
    let b = with_rank(c, &c.input(2), 2, "boxes")?;
    Ok(vec![Some(vec![b[0], 4])])
}

pub(super) fn register(r: &mut OpRegistry) {
    r.add(
        op("CropAndResize")
            .input("image: T")
            .input("boxes: float")
            .input("box_ind: int32")
            .input("crop_size: int32")
            .output("crops: float")
            .attr(&format!("T: {CROP_TYPES}"))
            .attr("method: {'bilinear', 'nearest'} = 'bilinear'")
            .attr("extrapolation_value: float = 0")
            .shape_fn(crops_shape)
            .build(),
    );
    r.add(
        op("CropAndResizeGradImage")
            .input("grads: float")
            .input("boxes: float")
            .input("box_ind: int32")
            .input("image_size: int32")
            .output("output: T")
            .attr("T: {float, half, double}")
            .attr("method: {'bilinear', 'nearest'} = 'bilinear'")
            .shape_fn(grad_image_shape)
            .build(),
    );
    r.add(
        op("CropAndResizeGradBoxes")
            .input("grads: float")
            .input("image: T")
            .input("boxes: float")
            .input("box_ind: int32")
            .output("output: float")
            .attr(&format!("T: {CROP_TYPES}"))
            .attr("method: {'bilinear'} = 'bilinear'")
            .shape_fn(grad_boxes_shape)
            .build(),
    );
}

/// `CropAndResize`: crops `boxes` ([n, 4] normalized `y1, x1, y2, x2`) from images
/// `box_ind` and resizes them to `crop_size` with `method` ("bilinear" or "nearest").
pub fn crop_and_resize(
    s: &Scope,
    image: Output,
    boxes: Output,
    box_ind: Output,
    crop_size: Output,
    method: &str,
    extrapolation_value: f32,
) -> Output {
    let attrs = [("method", attr::string(method)), ("extrapolation_value", attr::float(extrapolation_value))];
    op_output(s, "CropAndResize", [image, boxes, box_ind, crop_size], attrs)
}

/// `CropAndResizeGradImage`: the gradient with respect to an image of `image_size`
/// (int32 [4]), of type `dtype`.
pub fn crop_and_resize_grad_image(
    s: &Scope,
    grads: Output,
    boxes: Output,
    box_ind: Output,
    image_size: Output,
    dtype: ferroflow_core::DataType,
    method: &str,
) -> Output {
    let attrs = [("T", attr::ty(dtype)), ("method", attr::string(method))];
    op_output(s, "CropAndResizeGradImage", [grads, boxes, box_ind, image_size], attrs)
}

/// `CropAndResizeGradBoxes`: the gradient with respect to the boxes.
pub fn crop_and_resize_grad_boxes(s: &Scope, grads: Output, image: Output, boxes: Output, box_ind: Output) -> Output {
    s.op("CropAndResizeGradBoxes").input(grads).input(image).input(boxes).input(box_ind).build().output(0)
}
