//! Image ops (TensorFlow's `image_ops.cc`): resizing, crop-and-resize, colour
//! adjustments, non-max suppression (NHWC).

mod codec;
mod color;
mod crop;
mod detection;
mod morphology;
mod nms;
mod resize;
mod transform;

pub use codec::*;
pub use color::*;
pub use crop::*;
pub use detection::*;
pub use morphology::*;
pub use nms::*;
pub use resize::*;
pub use transform::*;

use crate::registry::OpRegistry;
use crate::shape_fn::{Dims, ShapeCtx};
use ferroflow_core::Status;

pub(crate) fn register(r: &mut OpRegistry) {
    ferroflow_core::register_modules! { r: resize, crop, color, nms, transform, codec, detection, morphology }
}

/// Checks a known shape has rank `r`; returns the dims or all-unknown.
fn with_rank(c: &ShapeCtx, d: &Dims, r: usize, what: &str) -> Result<Vec<i64>, Status> {
    match d {
        Some(v) if v.len() != r => Err(c.error(format!("{what} must be {r}-dimensional, got shape {v:?}"))),
        Some(v) => Ok(v.clone()),
        None => Ok(vec![-1; r]),
    }
}

/// `[batch, size[0], size[1], channels of image]`: `image` (4-D dims) resized to the two
/// values of constant input `size` (-1 while unknown).
fn resized_to(c: &ShapeCtx, batch: i64, image: &[i64], size: usize) -> Result<Vec<Dims>, Status> {
    let s = const_vec(c, size, 2)?;
    Ok(vec![Some(vec![batch, s[0], s[1], image[3]])])
}

/// The values of constant input `i` (a 1-D int tensor of `n` entries), or all -1.
fn const_vec(c: &ShapeCtx, i: usize, n: usize) -> Result<Vec<i64>, Status> {
    match c.const_input(i) {
        Some(t) => {
            if t.rank() != 1 || t.num_elements() != n {
                return Err(c.error(format!("input {i} must be a vector of {n} elements, got shape {}", t.shape())));
            }
            Ok(t.to_f64_vec()?.into_iter().map(|x| x as i64).collect())
        }
        None => Ok(vec![-1; n]),
    }
}
