//! `RGBToHSV`, `HSVToRGB`, `AdjustHue`, `AdjustSaturation`, `AdjustContrastv2`.

use ferroflow_core::Status;

use crate::op_def::op;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{Dims, ShapeCtx};

/// Shaped like input 0, whose last dim must be 3 (when known).
fn rgb_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let x = c.input(0);
    if let Some(d) = &x {
        match d.last() {
            None => return Err(c.error("input must be at least 1-D")),
            Some(&k) if k >= 0 && k != 3 => {
                return Err(c.error(format!("input must have 3 channels but input only has {k} channels")))
            }
            _ => {}
        }
    }
    Ok(vec![x])
}

pub(super) fn register(r: &mut OpRegistry) {
    for name in ["RGBToHSV", "HSVToRGB"] {
        r.add(
            op(name)
                .input("images: T")
                .output("output: T")
                .attr("T: {half, bfloat16, float, double} = DT_FLOAT")
                .shape_fn(rgb_shape)
                .build(),
        );
    }
    for (name, arg) in [("AdjustHue", "delta"), ("AdjustSaturation", "scale"), ("AdjustContrastv2", "contrast_factor")]
    {
        r.add(
            op(name)
                .input("images: T")
                .input(&format!("{arg}: float"))
                .output("output: T")
                .attr("T: {half, float} = DT_FLOAT")
                .shape_fn(rgb_or_any)
                .build(),
        );
    }
}

/// AdjustContrastv2 takes any channel count; the HSV adjustments need 3.
fn rgb_or_any(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    if c.node.op == "AdjustContrastv2" {
        Ok(vec![c.input(0)])
    } else {
        rgb_shape(c)
    }
}

one_output_builders! {
    /// `RGBToHSV` of `[..., 3]` images.
    rgb_to_hsv => "RGBToHSV"(images);
    /// `HSVToRGB` of `[..., 3]` images.
    hsv_to_rgb => "HSVToRGB"(images);
    /// `AdjustHue`: rotates the hue by `delta` (float scalar, in turns).
    adjust_hue => "AdjustHue"(images, delta);
    /// `AdjustSaturation`: scales the saturation by `scale` (clamped to [0, 1]).
    adjust_saturation => "AdjustSaturation"(images, scale);
}

/// `AdjustContrastv2`: `(x - mean) * contrast_factor + mean` per image and channel.
pub fn adjust_contrast(s: &Scope, images: Output, contrast_factor: Output) -> Output {
    s.op("AdjustContrastv2").input(images).input(contrast_factor).build().output(0)
}
