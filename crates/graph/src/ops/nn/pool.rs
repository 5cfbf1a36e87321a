//! `MaxPool`, `MaxPoolGrad`, `MaxPoolGradGrad` (and their V2 forms, with `ksize` and
//! `strides` as inputs), `AvgPool`, `AvgPoolGrad` (NHWC), and the
//! internal `_MaxPoolWithIndex` / `_MaxPoolGradWithIndex`.

use ferroflow_core::Status;

use super::window::{const_shape, is_nhwc, out_size, padding, spatial, with_rank};
use super::window_builders::window_attrs;
use super::{FLOAT_TYPES, REAL_TYPES};
use crate::op_def::{op, OpDefBuilder};
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{unchanged, Dims, ShapeCtx, ShapeFn};

/// Pooled shape of a [batch, rows, cols, depth] input.
pub(super) fn pooled(c: &ShapeCtx, x: &Dims) -> Result<Dims, Status> {
    let x = with_rank(c, x, 4, "input")?;
    let (kr, kc) = spatial(c, "ksize")?;
    let (sr, sc) = spatial(c, "strides")?;
    let Some(same) = padding(c)? else { return Ok(Some(vec![x[0], -1, -1, x[3]])) };
    if !is_nhwc(c)? {
        return Ok(Some(vec![-1; 4]));
    }
    Ok(Some(vec![x[0], out_size(c, x[1], kr, sr, same)?, out_size(c, x[2], kc, sc, same)?, x[3]]))
}

fn pool_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![pooled(c, &c.input(0))?])
}

/// A V2 pooling's output: rank 4, its sizes known at run time (from the ksize and strides
/// inputs).
fn max_pool_v2_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    with_rank(c, &c.input(0), 4, "input")?;
    Ok(vec![Some(vec![-1; 4])])
}

fn avg_pool_grad_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    match const_shape(c, 0) {
        Some(v) if v.len() == 4 => Ok(vec![Some(v)]),
        Some(v) => Err(c.error(format!("orig_input_shape must have 4 elements, got {v:?}"))),
        None => Ok(vec![Some(vec![-1; 4])]),
    }
}

const SAME_VALID: &str = "'SAME', 'VALID'";
const SAME_VALID_EXPLICIT: &str = "'SAME', 'VALID', 'EXPLICIT'";
const NHWC_NCHW: &str = "'NHWC', 'NCHW'";

/// A pooling op's definition with its window attrs: `ksize`, `strides`, `padding` (one of
/// `paddings`; `EXPLICIT` brings `explicit_paddings`) and `data_format` (one of `formats`,
/// NHWC by default).
fn pool_op(name: &str, paddings: &str, formats: &str) -> OpDefBuilder {
    let b = op(name).attr("ksize: list(int) >= 4").attr("strides: list(int) >= 4");
    let b = b.attr(&format!("padding: {{{paddings}}}"));
    let b = if paddings.contains("EXPLICIT") { b.attr("explicit_paddings: list(int) = []") } else { b };
    b.attr(&format!("data_format: {{{formats}}} = 'NHWC'"))
}

pub(super) fn register(r: &mut OpRegistry) {
    r.add(
        pool_op("MaxPool", SAME_VALID_EXPLICIT, "'NHWC', 'NCHW', 'NCHW_VECT_C'")
            .attr("T: {half, bfloat16, float, double, int32, int64, uint8, int16, int8, uint16} = DT_FLOAT")
            .input("input: T")
            .output("output: T")
            .shape_fn(pool_shape)
            .build(),
    );
    // MaxPoolGrad is shaped like the input, MaxPoolGradGrad like the pooled output.
    let grads: [(&str, &str, &str, ShapeFn); 2] = [
        ("MaxPoolGrad", SAME_VALID_EXPLICIT, " = DT_FLOAT", unchanged),
        ("MaxPoolGradGrad", SAME_VALID, "", pool_shape),
    ];
    for (name, paddings, t_default, shape) in grads {
        r.add(
            pool_op(name, paddings, NHWC_NCHW)
                .input("orig_input: T")
                .input("orig_output: T")
                .input("grad: T")
                .output("output: T")
                .attr(&format!("T: {REAL_TYPES}{t_default}"))
                .shape_fn(shape)
                .build(),
        );
    }
    // The V2 forms take ksize and strides as int32 inputs (after the tensors).
    let v2 = |name: &str, tensors: &[&str], shape: ShapeFn| {
        let mut b = op(name);
        for t in tensors {
            b = b.input(&format!("{t}: T"));
        }
        b.input("ksize: int32")
            .input("strides: int32")
            .output("output: T")
            .attr(&format!("padding: {{{SAME_VALID}}}"))
            .shape_fn(shape)
    };
    r.add(
        v2("MaxPoolV2", &["input"], max_pool_v2_shape)
            .attr("T: {half, bfloat16, float, double, int32, int64, uint8, int16, int8, uint16} = DT_FLOAT")
            .attr("data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'")
            .build(),
    );
    for (name, t_default, shape) in
        [("MaxPoolGradV2", " = DT_FLOAT", unchanged as ShapeFn), ("MaxPoolGradGradV2", "", max_pool_v2_shape)]
    {
        r.add(
            v2(name, &["orig_input", "orig_output", "grad"], shape)
                .attr(&format!("data_format: {{{NHWC_NCHW}}} = 'NHWC'"))
                .attr(&format!("T: {REAL_TYPES}{t_default}"))
                .build(),
        );
    }
    // The runtime's rewrite of MaxPool + MaxPoolGrad (+ ReluGrad), built when a graph is
    // prepared: the pooling also records where each window's maximum was.
    r.add(
        pool_op("_MaxPoolWithIndex", SAME_VALID, "'NHWC'")
            .attr("T: {float, double} = DT_FLOAT")
            .input("input: T")
            .output("output: T")
            .output("index: uint8")
            .shape_fn(|c| {
                let p = pooled(c, &c.input(0))?;
                Ok(vec![p.clone(), p])
            })
            .build(),
    );
    r.add(
        pool_op("_MaxPoolGradWithIndex", SAME_VALID, "'NHWC'")
            .attr("T: {float, double} = DT_FLOAT")
            .attr("relu: bool = false")
            .input("orig_input: T")
            .input("index: uint8")
            .input("grad: T")
            .output("output: T")
            .shape_fn(unchanged)
            .build(),
    );
    r.add(
        pool_op("AvgPool", SAME_VALID, NHWC_NCHW)
            .input("value: T")
            .output("output: T")
            .attr(&format!("T: {FLOAT_TYPES}"))
            .shape_fn(pool_shape)
            .build(),
    );
    r.add(
        pool_op("AvgPoolGrad", SAME_VALID, NHWC_NCHW)
            .input("orig_input_shape: int32")
            .input("grad: T")
            .output("output: T")
            .attr(&format!("T: {FLOAT_TYPES}"))
            .shape_fn(avg_pool_grad_shape)
            .build(),
    );
}

/// `MaxPool` (NHWC): `ksize` and `strides` have 4 entries (batch and depth 1).
pub fn max_pool(s: &Scope, x: Output, ksize: &[i64], strides: &[i64], padding: &str) -> Output {
    window_attrs(s.op("MaxPool").input(x), ksize, strides, padding).build().output(0)
}

/// The max-pool gradient builders: inputs `orig_input`, `orig_output` and `grad`, and the
/// forward pool's window attrs.
macro_rules! max_pool_grad_builders {
    ($($f:ident => $op:literal: $doc:literal),* $(,)?) => {$(
        #[doc = concat!("`", $op, "`: ", $doc)]
        pub fn $f(
            s: &Scope,
            orig_input: Output,
            orig_output: Output,
            grad: Output,
            ksize: &[i64],
            strides: &[i64],
            padding: &str,
        ) -> Output {
            window_attrs(s.op($op).input(orig_input).input(orig_output).input(grad), ksize, strides, padding)
                .build()
                .output(0)
        }
    )*};
}

max_pool_grad_builders! {
    max_pool_grad => "MaxPoolGrad": "routes `grad` to the maximum of each window of `orig_input`.",
    max_pool_grad_grad => "MaxPoolGradGrad": "for each window of `orig_input`, the entry of `grad` (shaped like \
        `orig_input`) at the window's maximum; shaped like `orig_output`.",
}

/// `AvgPool` (NHWC): averages each window over the input pixels it covers.
pub fn avg_pool(s: &Scope, x: Output, ksize: &[i64], strides: &[i64], padding: &str) -> Output {
    window_attrs(s.op("AvgPool").input(x), ksize, strides, padding).build().output(0)
}

/// `AvgPoolGrad`: spreads `grad` evenly over each window of an input of shape
/// `orig_input_shape` (int32 [4]).
pub fn avg_pool_grad(
    s: &Scope,
    orig_input_shape: Output,
    grad: Output,
    ksize: &[i64],
    strides: &[i64],
    padding: &str,
) -> Output {
    window_attrs(s.op("AvgPoolGrad").input(orig_input_shape).input(grad), ksize, strides, padding).build().output(0)
}
