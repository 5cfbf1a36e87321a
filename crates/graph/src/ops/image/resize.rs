//! `ResizeBilinear`, `ResizeNearestNeighbor`, `ResizeBicubic`, `ResizeArea` and the
//! gradients `ResizeBilinearGrad`, `ResizeNearestNeighborGrad`, `ResizeBicubicGrad`; and
//! `ScaleAndTranslate` with `ScaleAndTranslateGrad`.

use ferroflow_core::{attr, Status};

use super::{resized_to, with_rank};
use crate::op_def::op;
use crate::ops::op_output;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{Dims, ShapeCtx};

/// TensorFlow's types of the resize ops' `images` (bilinear lists bfloat16 twice).
const RESIZE_TYPES: &str = "{int8, uint8, int16, uint16, int32, int64, half, float, double, bfloat16}";

/// [batch, size[0], size[1], channels] from the image (input 0) and size (input 1).
fn resized(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let x = with_rank(c, &c.input(0), 4, "input")?;
    with_rank(c, &c.input(1), 1, "size")?;
    resized_to(c, x[0], &x, 1)
}

/// Gradient shaped like `original_image` (input 1).
fn like_original(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    with_rank(c, &c.input(0), 4, "grads")?;
    Ok(vec![Some(with_rank(c, &c.input(1), 4, "original_image")?)])
}

pub(super) fn register(r: &mut OpRegistry) {
    for (name, out, hp) in [
        ("ResizeBilinear", "float", true),
        ("ResizeNearestNeighbor", "T", true),
        ("ResizeBicubic", "float", true),
        ("ResizeArea", "float", false),
    ] {
        let b = op(name)
            .input("images: T")
            .input("size: int32")
            .output(&format!("resized_images: {out}"))
            .attr(&format!("T: {RESIZE_TYPES}"))
            .attr("align_corners: bool = false");
        r.add(b.when(hp, |b| b.attr("half_pixel_centers: bool = false")).shape_fn(resized).build());
    }
    for (name, types) in
        [("ResizeBilinearGrad", "{float, bfloat16, half, double}"), ("ResizeBicubicGrad", "{float, double}")]
    {
        r.add(
            op(name)
                .input("grads: float")
                .input("original_image: T")
                .output("output: T")
                .attr(&format!("T: {types}"))
                .attr("align_corners: bool = false")
                .attr("half_pixel_centers: bool = false")
                .shape_fn(like_original)
                .build(),
        );
    }
    r.add(
        op("ScaleAndTranslate")
            .input("images: T")
            .input("size: int32")
            .input("scale: float")
            .input("translation: float")
            .output("resized_images: float")
            .attr("T: {int8, uint8, int16, uint16, int32, int64, bfloat16, half, float, double}")
            .attr("kernel_type: string = 'lanczos3'")
            .attr("antialias: bool = true")
            .shape_fn(resized)
            .build(),
    );
    r.add(
        op("ScaleAndTranslateGrad")
            .input("grads: T")
            .input("original_image: T")
            .input("scale: float")
            .input("translation: float")
            .output("output: T")
            .attr("T: {float}")
            .attr("kernel_type: string = 'lanczos3'")
            .attr("antialias: bool = true")
            .shape_fn(like_original)
            .build(),
    );
    r.add(
        op("ResizeNearestNeighborGrad")
            .input("grads: T")
            .input("size: int32")
            .output("output: T")
            .attr("T: {uint8, int8, int32, half, float, double, bfloat16}")
            .attr("align_corners: bool = false")
            .attr("half_pixel_centers: bool = false")
            .shape_fn(resized)
            .build(),
    );
}

/// The resize builders and the gradient builders: two inputs (`images` and `size` (int32 [2]),
/// or the float `grads` and the `original_image`), attrs `align_corners` and `half_pixel_centers`.
macro_rules! resize_builders {
    ($a:ident, $b:ident, $doc:literal: $($f:ident => $op:literal),* $(,)?) => {$(
        #[doc = concat!("`", $op, "`", $doc)]
        pub fn $f(s: &Scope, $a: Output, $b: Output, align_corners: bool, half_pixel_centers: bool) -> Output {
            let attrs = [("align_corners", attr::bool(align_corners)), ("half_pixel_centers", attr::bool(half_pixel_centers))];
            op_output(s, $op, [$a, $b], attrs)
        }
    )*};
}

resize_builders! {
    images, size, " of NHWC `images` to `size` = [height, width].":
    resize_bilinear => "ResizeBilinear",
    resize_nearest_neighbor => "ResizeNearestNeighbor",
    resize_bicubic => "ResizeBicubic",
    resize_nearest_neighbor_grad => "ResizeNearestNeighborGrad",
}

resize_builders! {
    grads, original_image, ": the gradient of the resize with respect to `original_image`.":
    resize_bilinear_grad => "ResizeBilinearGrad",
    resize_bicubic_grad => "ResizeBicubicGrad",
}

/// `ResizeArea` of NHWC `images` to `size` = [height, width].
pub fn resize_area(s: &Scope, images: Output, size: Output, align_corners: bool) -> Output {
    s.op("ResizeArea").input(images).input(size).attr("align_corners", attr::bool(align_corners)).build().output(0)
}

/// `ScaleAndTranslate`: resamples `images` to `size` with `kernel_type` (lanczos3,
/// gaussian, mitchellcubic, …), `scale` and `translation` (float [2], rows then columns).
pub fn scale_and_translate(
    s: &Scope,
    images: Output,
    size: Output,
    scale: Output,
    translation: Output,
    kernel_type: &str,
    antialias: bool,
) -> Output {
    let attrs = [("kernel_type", attr::string(kernel_type)), ("antialias", attr::bool(antialias))];
    op_output(s, "ScaleAndTranslate", [images, size, scale, translation], attrs)
}
