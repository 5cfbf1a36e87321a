//! `Conv2D`, `Conv2DBackpropInput`, `Conv2DBackpropFilter` (NHWC input, HWIO filter).

use ferroflow_core::Status;

use super::window::{const_shape, is_nhwc, out_size, padding, spatial, with_rank};
use super::window_builders::{conv_backprop_builders, conv_op};
use crate::op_def::op;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{Dims, ShapeCtx};

fn conv2d_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let x = with_rank(c, &c.input(0), 4, "input")?;
    let f = with_rank(c, &c.input(1), 4, "filter")?;
    let (sr, sc) = spatial(c, "strides")?;
    let Some(same) = padding(c)? else { return Ok(vec![Some(vec![x[0], -1, -1, f[3]])]) };
    if !is_nhwc(c)? {
        return Ok(vec![Some(vec![-1; 4])]);
    }
    if x[3] >= 0 && f[2] > 0 && x[3] % f[2] != 0 {
        return Err(c.error(format!("input depth must be evenly divisible by filter depth: {} vs {}", x[3], f[2])));
    }
    let oh = out_size(c, x[1], f[0], sr, same)?;
    let ow = out_size(c, x[2], f[1], sc, same)?;
    Ok(vec![Some(vec![x[0], oh, ow, f[3]])])
}

/// Output 0 is the shape held by constant input `i` (rank 4), if known.
fn shape_from_input(c: &ShapeCtx, i: usize) -> Result<Vec<Dims>, Status> {
    match const_shape(c, i) {
        Some(v) if v.len() == 4 => Ok(vec![Some(v)]),
        Some(v) if v.len() == 2 && i == 0 => {
            // Conv2DBackpropInput also takes [rows, cols]; batch and depth come from the others.
            let dy = with_rank(c, &c.input(2), 4, "out_backprop")?;
            let f = with_rank(c, &c.input(1), 4, "filter")?;
            Ok(vec![Some(vec![dy[0], v[0], v[1], f[2]])])
        }
        Some(v) => Err(c.error(format!("sizes must contain 4 values, got {v:?}"))),
        None => Ok(vec![Some(vec![-1; 4])]),
    }
}

fn backprop_input_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    shape_from_input(c, 0)
}

fn backprop_filter_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    shape_from_input(c, 1)
}

pub(super) fn register(r: &mut OpRegistry) {
    let common = |b: crate::op_def::OpDefBuilder| {
        b.attr("strides: list(int)")
            .attr("use_cudnn_on_gpu: bool = true")
            .attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
            .attr("explicit_paddings: list(int) = []")
            .attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
            .attr("dilations: list(int) = [1, 1, 1, 1]")
    };
    r.add(
        common(
            op("Conv2D")
                .input("input: T")
                .input("filter: T")
                .output("output: T")
                .attr("T: {half, bfloat16, float, double, int32}"),
        )
        .shape_fn(conv2d_shape)
        .build(),
    );
    // Grappler's fused form (Conv2D + BiasAdd [+ Relu]), built when a graph is prepared.
    r.add(
        op("_FusedConv2D")
            .input("input: T")
            .input("filter: T")
            .input("args: num_args * T")
            .input("host_args: num_host_args * float")
            .output("output: T")
            .attr("T: {half, float, double, int8}")
            .attr("num_args: int >= 0")
            .attr("num_host_args: int >= 0 = 0")
            .attr("strides: list(int)")
            .attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
            .attr("explicit_paddings: list(int) = []")
            .attr("data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'")
            .attr("filter_format: {'HWIO', 'OIHW', 'OIHW_VECT_I'} = 'HWIO'")
            .attr("dilations: list(int) = [1, 1, 1, 1]")
            .attr("use_cudnn_on_gpu: bool = true")
            .attr("fused_ops: list(string) = []")
            .attr("epsilon: float = 0.0001")
            .attr("leakyrelu_alpha: float = 0.2")
            .shape_fn(conv2d_shape)
            .build(),
    );
    r.add(
        common(
            op("Conv2DBackpropInput")
                .input("input_sizes: int32")
                .input("filter: T")
                .input("out_backprop: T")
                .output("output: T")
                .attr("T: {half, bfloat16, float, double, int32}"),
        )
        .shape_fn(backprop_input_shape)
        .build(),
    );
    r.add(
        common(
            op("Conv2DBackpropFilter")
                .input("input: T")
                .input("filter_sizes: int32")
                .input("out_backprop: T")
                .output("output: T")
                .attr("T: {half, bfloat16, float, double}"),
        )
        .shape_fn(backprop_filter_shape)
        .build(),
    );
}

/// `Conv2D`: NHWC `input` [batch, rows, cols, in_depth] convolved with an HWIO `filter`
/// [rows, cols, in_depth, out_depth]; `strides` has 4 entries (batch and depth 1), `padding`
/// is "SAME" or "VALID".
///
/// ```
/// use ferroflow_graph::{ops, DataType, Scope};
/// let s = Scope::new_root();
/// let x = ops::placeholder(&s, DataType::Float, Some(&[-1, 28, 28, 1]));
/// let w = ops::placeholder(&s, DataType::Float, Some(&[5, 5, 1, 32]));
/// let y = ops::conv2d(&s, x, w, &[1, 1, 1, 1], "SAME");
/// assert_eq!(s.graph().shape_of(&y), Some(vec![-1, 28, 28, 32]));
/// ```
pub fn conv2d(s: &Scope, input: Output, filter: Output, strides: &[i64], padding: &str) -> Output {
    conv_op(s, "Conv2D", [input, filter], strides, padding)
}

conv_backprop_builders! {
    /// `Conv2DBackpropInput`: the gradient of `Conv2D` with respect to its input, whose shape
    /// `input_sizes` (int32 [4]) gives.
    conv2d_backprop_input => "Conv2DBackpropInput"(input_sizes, filter);
    /// `Conv2DBackpropFilter`: the gradient of `Conv2D` with respect to its filter, whose shape
    /// `filter_sizes` (int32 [4]) gives.
    conv2d_backprop_filter => "Conv2DBackpropFilter"(input, filter_sizes);
}
