//! `DepthwiseConv2dNative` and its gradients `DepthwiseConv2dNativeBackpropInput`,
//! `DepthwiseConv2dNativeBackpropFilter` (NHWC input, filter [rows, cols, in_depth,
//! channel_multiplier], output depth in_depth * channel_multiplier).

use ferroflow_core::{NodeAttrs, Status};

use super::window::{const_shape, is_nhwc, out_size, padding, spatial, with_rank};
use super::window_builders::{conv_backprop_builders, conv_op};
use crate::op_def::{op, OpDefBuilder};
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{Dims, ShapeCtx};

/// The output size of one dimension with EXPLICIT padding `(before, after)`.
fn explicit_out(input: i64, k: i64, stride: i64, before: i64, after: i64) -> i64 {
    if input < 0 || k < 0 {
        return -1;
    }
    (input + before + after - k + stride) / stride
}

fn depthwise_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let x = with_rank(c, &c.input(0), 4, "input")?;
    let f = with_rank(c, &c.input(1), 4, "filter")?;
    let (sr, sc) = spatial(c, "strides")?;
    if !is_nhwc(c)? {
        return Ok(vec![Some(vec![-1; 4])]);
    }
    if x[3] >= 0 && f[2] >= 0 && x[3] != f[2] {
        return Err(c.error(format!("input and filter must have the same depth: {} vs {}", x[3], f[2])));
    }
    let depth = if f[2] >= 0 && f[3] >= 0 { f[2] * f[3] } else { -1 };
    let (oh, ow) = match padding(c)? {
        Some(same) => (out_size(c, x[1], f[0], sr, same)?, out_size(c, x[2], f[1], sc, same)?),
        None => {
            let p = c.node.attr_list_int("explicit_paddings")?;
            if p.len() != 8 {
                return Ok(vec![Some(vec![x[0], -1, -1, depth])]);
            }
            (explicit_out(x[1], f[0], sr, p[2], p[3]), explicit_out(x[2], f[1], sc, p[4], p[5]))
        }
    };
    Ok(vec![Some(vec![x[0], oh, ow, depth])])
}

/// Output 0 is the rank-4 shape held by constant input `i`, if known.
fn sizes_shape(c: &ShapeCtx, i: usize) -> Result<Vec<Dims>, Status> {
    match const_shape(c, i) {
        Some(v) if v.len() == 4 => Ok(vec![Some(v)]),
        Some(v) => Err(c.error(format!("sizes must contain 4 values, got {v:?}"))),
        None => Ok(vec![Some(vec![-1; 4])]),
    }
}

fn common(b: OpDefBuilder) -> OpDefBuilder {
    b.attr("T: {half, bfloat16, float, double}")
        .attr("strides: list(int)")
        .attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
        .attr("explicit_paddings: list(int) = []")
        .attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
        .attr("dilations: list(int) = [1, 1, 1, 1]")
}

pub(super) fn register(r: &mut OpRegistry) {
    r.add(
        common(op("DepthwiseConv2dNative").input("input: T").input("filter: T").output("output: T"))
            .shape_fn(depthwise_shape)
            .build(),
    );
    r.add(
        common(
            op("DepthwiseConv2dNativeBackpropInput")
                .input("input_sizes: int32")
                .input("filter: T")
                .input("out_backprop: T")
                .output("output: T"),
        )
        .shape_fn(|c| sizes_shape(c, 0))
        .build(),
    );
    r.add(
        common(
            op("DepthwiseConv2dNativeBackpropFilter")
                .input("input: T")
                .input("filter_sizes: int32")
                .input("out_backprop: T")
                .output("output: T"),
        )
        .shape_fn(|c| sizes_shape(c, 1))
        .build(),
    );
}

/// `DepthwiseConv2dNative`: each input channel of the NHWC `input` convolved with its own
/// `channel_multiplier` filters (`filter` [rows, cols, in_depth, channel_multiplier]);
/// output channel `c * channel_multiplier + m`.
///
/// ```
/// use ferroflow_graph::{ops, DataType, Scope};
/// let s = Scope::new_root();
/// let x = ops::placeholder(&s, DataType::Float, Some(&[-1, 32, 32, 8]));
/// let w = ops::placeholder(&s, DataType::Float, Some(&[3, 3, 8, 2]));
/// let y = ops::depthwise_conv2d_native(&s, x, w, &[1, 2, 2, 1], "SAME");
/// assert_eq!(s.graph().shape_of(&y), Some(vec![-1, 16, 16, 16]));
/// ```
pub fn depthwise_conv2d_native(s: &Scope, input: Output, filter: Output, strides: &[i64], padding: &str) -> Output {
    conv_op(s, "DepthwiseConv2dNative", [input, filter], strides, padding)
}

conv_backprop_builders! {
    /// `DepthwiseConv2dNativeBackpropInput`: the gradient of [`depthwise_conv2d_native`] with
    /// respect to its input, whose shape `input_sizes` (int32 [4]) gives.
    depthwise_conv2d_native_backprop_input => "DepthwiseConv2dNativeBackpropInput"(input_sizes, filter);
    /// `DepthwiseConv2dNativeBackpropFilter`: the gradient of [`depthwise_conv2d_native`] with
    /// respect to its filter, whose shape `filter_sizes` (int32 [4]) gives.
    depthwise_conv2d_native_backprop_filter => "DepthwiseConv2dNativeBackpropFilter"(input, filter_sizes);
}
