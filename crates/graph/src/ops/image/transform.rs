//! `ImageProjectiveTransformV2`, `ImageProjectiveTransformV3` and `ExtractImagePatches`.

use ferroflow_core::{attr, Status};

use super::{resized_to, with_rank};
use crate::op_def::op;
use crate::ops::op_output;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{Dims, ShapeCtx};

/// [batch, output_shape[0], output_shape[1], channels].
fn transformed(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let x = with_rank(c, &c.input(0), 4, "images")?;
    with_rank(c, &c.input(1), 2, "transforms")?;
    resized_to(c, x[0], &x, 2)
}

pub(super) fn register(r: &mut OpRegistry) {
    register_patches(r);
    for name in ["ImageProjectiveTransformV2", "ImageProjectiveTransformV3"] {
        let b = op(name).input("images: dtype").input("transforms: float").input("output_shape: int32");
        r.add(
            b.when(name.ends_with("V3"), |b| b.input("fill_value: float"))
                .output("transformed_images: dtype")
                .attr("dtype: {uint8, int32, int64, half, bfloat16, float, double}")
                .attr("interpolation: string")
                .attr("fill_mode: string = 'CONSTANT'")
                .shape_fn(transformed)
                .build(),
        );
    }
}

/// `ImageProjectiveTransformV3`: `transforms` [1 or batch, 8] maps output to input
/// points; `interpolation` NEAREST or BILINEAR, `fill_mode` REFLECT, WRAP, CONSTANT or
/// NEAREST, `fill_value` (float scalar) outside the image.
pub fn image_projective_transform_v3(
    s: &Scope,
    images: Output,
    transforms: Output,
    output_shape: Output,
    fill_value: Output,
    interpolation: &str,
    fill_mode: &str,
) -> Output {
    let attrs = [("interpolation", attr::string(interpolation)), ("fill_mode", attr::string(fill_mode))];
    op_output(s, "ImageProjectiveTransformV3", [images, transforms, output_shape, fill_value], attrs)
}

/// [batch, out_rows, out_cols, ksize_rows * ksize_cols * depth] of ExtractImagePatches.
fn patches_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    use ferroflow_core::NodeAttrs;
    let x = with_rank(c, &c.input(0), 4, "images")?;
    let attr4 = |n: &str| -> Result<Vec<i64>, Status> {
        let v = c.node.attr_list_int(n)?;
        if v.len() != 4 || v[0] != 1 || v[3] != 1 || v.iter().any(|&d| d <= 0) {
            return Err(c.error(format!("{n} must be [1, rows, cols, 1] with positive entries, got {v:?}")));
        }
        Ok(v)
    };
    let (k, s, r) = (attr4("ksizes")?, attr4("strides")?, attr4("rates")?);
    let same = c.node.attr_string("padding")? == "SAME";
    let out = |i: usize| {
        if x[i] < 0 {
            return -1;
        }
        let eff = (k[i] - 1) * r[i] + 1;
        if same {
            (x[i] + s[i] - 1) / s[i]
        } else if x[i] >= eff {
            (x[i] - eff) / s[i] + 1
        } else {
            0
        }
    };
    let depth = if x[3] < 0 { -1 } else { k[1] * k[2] * x[3] };
    Ok(vec![Some(vec![x[0], out(1), out(2), depth])])
}

pub(super) fn register_patches(r: &mut OpRegistry) {
    r.add(
        op("ExtractImagePatches")
            .input("images: T")
            .output("patches: T")
            .attr("ksizes: list(int) >= 4")
            .attr("strides: list(int) >= 4")
            .attr("rates: list(int) >= 4")
            .attr("T: {bfloat16, half, float, double, int8, int16, int32, int64, uint8, uint16, uint32, uint64, complex64, complex128, bool}")
            .attr("padding: {'SAME', 'VALID'}")
            .shape_fn(patches_shape)
            .build(),
    );
}

/// `ExtractImagePatches` (attrs are 4-entry NHWC lists).
pub fn extract_image_patches(
    s: &Scope,
    images: Output,
    ksizes: &[i64],
    strides: &[i64],
    rates: &[i64],
    padding: &str,
) -> Output {
    let attrs = [
        ("ksizes", attr::list_int(ksizes)),
        ("strides", attr::list_int(strides)),
        ("rates", attr::list_int(rates)),
        ("padding", attr::string(padding)),
    ];
    op_output(s, "ExtractImagePatches", [images], attrs)
}
