//! `FractionalMaxPool`, `FractionalAvgPool`, `FractionalMaxPoolGrad`,
//! `FractionalAvgPoolGrad` (TensorFlow's definitions; NHWC): pooling by a non-integer ratio
//! over random (or pseudo-random) cell boundaries, returned as the row and column pooling
//! sequences.

use ferroflow_core::proto::attr_value::Value as AttrKind;
use ferroflow_core::{attr, NodeAttrs, Status};

use super::window::{const_shape, with_rank};
use crate::op_def::{op, OpDef, OpDefBuilder};
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{unchanged, Dims, ShapeCtx, ShapeFn};

const TYPES: &str = "T: {float, double, int32, int64}";

fn pool_op(name: &str) -> OpDefBuilder {
    op(name)
        .input("value: T")
        .output("output: T")
        .output("row_pooling_sequence: int64")
        .output("col_pooling_sequence: int64")
        .attr("pooling_ratio: list(float) >= 4")
        .attr("pseudo_random: bool = false")
        .attr("overlapping: bool = false")
        .attr("deterministic: bool = false")
        .attr("seed: int = 0")
        .attr("seed2: int = 0")
        .attr(TYPES)
}

/// `[batch, floor(rows / ratio), floor(cols / ratio), depth]` (single-precision division),
/// and the two sequences one longer.
fn pool_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let x = with_rank(c, &c.input(0), 4, "value")?;
    let ratio = match c.node.attr_value("pooling_ratio").ok().and_then(|a| a.value.as_ref()) {
        Some(AttrKind::List(l)) if l.f.len() == 4 => l.f.clone(),
        _ => return Err(c.error("pooling_ratio must specify 4 dimensions")),
    };
    let mut out = vec![-1i64; 4];
    for i in 0..4 {
        if x[i] >= 0 {
            if ratio[i] < 1.0 {
                return Err(c.error(format!("pooling_ratio cannot be smaller than 1, got: {}", ratio[i])));
            }
            out[i] = (x[i] as f32 / ratio[i]).floor() as i64;
        }
    }
    let seq = |d: i64| Some(vec![if d < 0 { -1 } else { d + 1 }]);
    Ok(vec![Some(out.clone()), seq(out[1]), seq(out[2])])
}

fn avg_grad_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    match const_shape(c, 0) {
        Some(v) if v.len() == 4 => Ok(vec![Some(v)]),
        Some(v) => Err(c.error(format!("orig_input_tensor_shape must have 4 elements, got {v:?}"))),
        None => Ok(vec![Some(vec![-1; 4])]),
    }
}

/// A pooling gradient: the `forward` inputs (what it needs of the forward pass), then the
/// backprop and the two pooling sequences.
fn grad_op(name: &str, forward: &[&str], shape: ShapeFn) -> OpDef {
    forward
        .iter()
        .fold(op(name), |b, spec| b.input(spec))
        .input("out_backprop: T")
        .input("row_pooling_sequence: int64")
        .input("col_pooling_sequence: int64")
        .output("output: T")
        .attr("overlapping: bool = false")
        .attr(TYPES)
        .shape_fn(shape)
        .build()
}

pub(super) fn register(r: &mut OpRegistry) {
    r.add(pool_op("FractionalMaxPool").shape_fn(pool_shape).build());
    r.add(pool_op("FractionalAvgPool").shape_fn(pool_shape).build());
    r.add(grad_op("FractionalMaxPoolGrad", &["orig_input: T", "orig_output: T"], unchanged));
    r.add(grad_op("FractionalAvgPoolGrad", &["orig_input_tensor_shape: int64"], avg_grad_shape));
}

/// `FractionalMaxPool` (or `FractionalAvgPool` when `!max`) of `x` by `pooling_ratio`,
/// deterministic with `seed`/`seed2`: (pooled, row sequence, column sequence).
pub fn fractional_pool(
    s: &Scope,
    max: bool,
    x: Output,
    pooling_ratio: &[f32],
    pseudo_random: bool,
    overlapping: bool,
    seeds: (i64, i64),
) -> (Output, Output, Output) {
    let o = s
        .op(if max { "FractionalMaxPool" } else { "FractionalAvgPool" })
        .input(x)
        .attr("pooling_ratio", attr::list_float(pooling_ratio))
        .attr("pseudo_random", attr::bool(pseudo_random))
        .attr("overlapping", attr::bool(overlapping))
        .attr("deterministic", attr::bool(true))
        .attr("seed", attr::int(seeds.0))
        .attr("seed2", attr::int(seeds.1))
        .build();
    (o.output(0), o.output(1), o.output(2))
}
