//! The 3-D (NDHWC) convolution and pooling ops: `Conv3D`, `Conv3DBackpropInputV2`,
//! `Conv3DBackpropFilterV2`, `MaxPool3D`, `AvgPool3D`, `MaxPool3DGrad`, `AvgPool3DGrad`,
//! `MaxPool3DGradGrad`. Definitions, shape functions and builders.

use ferroflow_core::{NodeAttrs, Status};

use super::window::{const_shape, out_size, padding, with_rank};
use super::window_builders::{conv_op, window_attrs};
use super::{FLOAT_TYPES, REAL_TYPES};
use crate::op_def::{op, OpDefBuilder};
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{unchanged, Dims, ShapeCtx};

type R = Result<Vec<Dims>, Status>;

/// The (planes, rows, cols) entries of a 5-element window attr.
fn attr3(c: &ShapeCtx, name: &str) -> Result<[i64; 3], Status> {
    let v = c.node.attr_list_int(name)?;
    if v.len() != 5 {
        return Err(c.error(format!("{name} must specify 5 dimensions, got {v:?}")));
    }
    if v.iter().any(|&x| x <= 0) {
        return Err(c.error(format!("{name} entries must be > 0, got {v:?}")));
    }
    Ok([v[1], v[2], v[3]])
}

fn is_ndhwc(c: &ShapeCtx) -> Result<bool, Status> {
    Ok(!c.node.has_attr("data_format") || c.node.attr_string("data_format")? == "NDHWC")
}

/// `[n, planes, rows, cols, depth]` of input `x` under windows `k`.
fn windowed(c: &ShapeCtx, x: &[i64], k: [i64; 3], depth: i64) -> R {
    let s = attr3(c, "strides")?;
    let Some(same) = padding(c)? else { return Ok(vec![Some(vec![x[0], -1, -1, -1, depth])]) };
    if !is_ndhwc(c)? {
        return Ok(vec![Some(vec![-1; 5])]);
    }
    let mut out = vec![x[0]];
    for i in 0..3 {
        out.push(out_size(c, x[1 + i], k[i], s[i], same)?);
    }
    out.push(depth);
    Ok(vec![Some(out)])
}

fn conv3d_shape(c: &ShapeCtx) -> R {
    let x = with_rank(c, &c.input(0), 5, "input")?;
    let f = with_rank(c, &c.input(1), 5, "filter")?;
    if x[4] >= 0 && f[3] >= 0 && x[4] != f[3] {
        return Err(c.error(format!("input depth must be equal to filter depth: {} vs {}", x[4], f[3])));
    }
    windowed(c, &x, [f[0], f[1], f[2]], f[4])
}

fn pool3d_shape(c: &ShapeCtx) -> R {
    let x = with_rank(c, &c.input(0), 5, "input")?;
    windowed(c, &x, attr3(c, "ksize")?, x[4])
}

/// Output 0 is the 5-element shape held by constant input `i`, if known.
fn shape_from_input(c: &ShapeCtx, i: usize) -> R {
    match const_shape(c, i) {
        Some(v) if v.len() == 5 => Ok(vec![Some(v)]),
        Some(v) => Err(c.error(format!("shape input must contain 5 values, got {v:?}"))),
        None => Ok(vec![Some(vec![-1; 5])]),
    }
}

const FORMATS: &str = "data_format: {'NDHWC', 'NCDHW'} = 'NDHWC'";

fn conv_def(name: &str) -> OpDefBuilder {
    op(name)
        .attr(&format!("T: {FLOAT_TYPES}"))
        .attr("strides: list(int) >= 5")
        .attr("padding: {'SAME', 'VALID'}")
        .attr(FORMATS)
        .attr("dilations: list(int) = [1, 1, 1, 1, 1]")
}

fn pool_op(name: &str) -> OpDefBuilder {
    op(name)
        .attr("ksize: list(int) >= 5")
        .attr("strides: list(int) >= 5")
        .attr("padding: {'SAME', 'VALID'}")
        .attr(FORMATS)
}

pub(super) fn register(r: &mut OpRegistry) {
    r.add(conv_def("Conv3D").input("input: T").input("filter: T").output("output: T").shape_fn(conv3d_shape).build());
    r.add(
        conv_def("Conv3DBackpropInputV2")
            .input("input_sizes: Tshape")
            .input("filter: T")
            .input("out_backprop: T")
            .output("output: T")
            .attr("Tshape: {int32, int64} = DT_INT32")
            .shape_fn(|c| shape_from_input(c, 0))
            .build(),
    );
    r.add(
        conv_def("Conv3DBackpropFilterV2")
            .input("input: T")
            .input("filter_sizes: int32")
            .input("out_backprop: T")
            .output("output: T")
            .shape_fn(|c| shape_from_input(c, 1))
            .build(),
    );
    r.add(
        pool_op("MaxPool3D")
            .input("input: T")
            .output("output: T")
            // double too (TensorFlow's kernel has float types only; ferroflow's numeric
            // gradient checks run in double).
            .attr("T: {half, bfloat16, float, double}")
            .shape_fn(pool3d_shape)
            .build(),
    );
    r.add(
        pool_op("AvgPool3D")
            .input("input: T")
            .output("output: T")
            .attr(&format!("T: {FLOAT_TYPES}"))
            .shape_fn(pool3d_shape)
            .build(),
    );
    r.add(
        pool_op("MaxPool3DGrad")
            .input("orig_input: TInput")
            .input("orig_output: TInput")
            .input("grad: T")
            .output("output: T")
            .attr("T: {half, bfloat16, float, double} = DT_FLOAT")
            .attr("TInput: {half, bfloat16, float, double} = DT_FLOAT")
            .shape_fn(unchanged)
            .build(),
    );
    r.add(
        pool_op("AvgPool3DGrad")
            .input("orig_input_shape: int32")
            .input("grad: T")
            .output("output: T")
            .attr(&format!("T: {FLOAT_TYPES}"))
            .shape_fn(|c| shape_from_input(c, 0))
            .build(),
    );
    r.add(
        pool_op("MaxPool3DGradGrad")
            .input("orig_input: T")
            .input("orig_output: T")
            .input("grad: T")
            .output("output: T")
            .attr(&format!("T: {REAL_TYPES}"))
            .shape_fn(pool3d_shape)
            .build(),
    );
}

/// `Conv3D`: NDHWC `input` [batch, planes, rows, cols, in_depth] convolved with a DHWIO
/// `filter` [planes, rows, cols, in_depth, out_depth]; `strides` has 5 entries (batch and
/// depth 1), `padding` is "SAME" or "VALID".
pub fn conv3d(s: &Scope, input: Output, filter: Output, strides: &[i64], padding: &str) -> Output {
    conv_op(s, "Conv3D", [input, filter], strides, padding)
}

/// `MaxPool3D` (NDHWC): the maximum of each window; `ksize` and `strides` have 5 entries.
pub fn max_pool3d(s: &Scope, x: Output, ksize: &[i64], strides: &[i64], padding: &str) -> Output {
    window_attrs(s.op("MaxPool3D").input(x), ksize, strides, padding).build().output(0)
}

/// `AvgPool3D` (NDHWC): the mean of each window over the input cells it covers.
pub fn avg_pool3d(s: &Scope, x: Output, ksize: &[i64], strides: &[i64], padding: &str) -> Output {
    window_attrs(s.op("AvgPool3D").input(x), ksize, strides, padding).build().output(0)
}
