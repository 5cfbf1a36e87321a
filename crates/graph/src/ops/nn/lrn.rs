//! LRN and LRNGrad (local response normalization over depth), InTopKV2 and InTopK
//! (whether targets are among the k largest predictions), and Cross (3-vector cross
//! products): definitions and builders.

use ferroflow_core::{attr, Status};

use super::REAL_TYPES;
use crate::op_def::op;
use crate::ops::op_output;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{unchanged, Dims, ShapeCtx};

fn in_top_k_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let batch =
        c.input(0).filter(|d| d.len() == 2).map(|d| d[0]).or_else(|| c.input(1).filter(|d| d.len() == 1).map(|d| d[0]));
    Ok(vec![Some(vec![batch.unwrap_or(-1)])])
}

pub(crate) fn register(r: &mut OpRegistry) {
    let lrn_attrs = |b: crate::op_def::OpDefBuilder| {
        b.attr("depth_radius: int = 5")
            .attr("bias: float = 1")
            .attr("alpha: float = 1")
            .attr("beta: float = 0.5")
            .attr("T: {half, bfloat16, float} = DT_FLOAT")
    };
    r.add(lrn_attrs(op("LRN").input("input: T").output("output: T")).shape_fn(unchanged).build());
    r.add(
        lrn_attrs(
            op("LRNGrad").input("input_grads: T").input("input_image: T").input("output_image: T").output("output: T"),
        )
        .shape_fn(unchanged)
        .build(),
    );
    r.add(
        op("InTopKV2")
            .input("predictions: float")
            .input("targets: T")
            .input("k: T")
            .output("precision: bool")
            .attr("T: {int32, int64} = DT_INT32")
            .shape_fn(in_top_k_shape)
            .build(),
    );
    r.add(
        op("InTopK")
            .input("predictions: float")
            .input("targets: T")
            .output("precision: bool")
            .attr("k: int")
            .attr("T: {int32, int64} = DT_INT32")
            .shape_fn(in_top_k_shape)
            .build(),
    );
    r.add(
        op("Cross")
            .input("a: T")
            .input("b: T")
            .output("product: T")
            .attr(&format!("T: {REAL_TYPES}"))
            .shape_fn(unchanged)
            .build(),
    );
}

fn lrn_op(s: &Scope, op: &str, inputs: Vec<Output>, depth_radius: i64, bias: f32, alpha: f32, beta: f32) -> Output {
    let attrs = [
        ("depth_radius", attr::int(depth_radius)),
        ("bias", attr::float(bias)),
        ("alpha", attr::float(alpha)),
        ("beta", attr::float(beta)),
    ];
    op_output(s, op, inputs, attrs)
}

/// `LRN` of 4-D `x` over its depth window of `depth_radius` either side.
pub fn lrn(s: &Scope, x: Output, depth_radius: i64, bias: f32, alpha: f32, beta: f32) -> Output {
    lrn_op(s, "LRN", vec![x], depth_radius, bias, alpha, beta)
}

/// `LRNGrad`: the gradient of [`lrn`] given its input `x`, output `y` and output grad `dy`.
#[allow(clippy::too_many_arguments)]
pub fn lrn_grad(
    s: &Scope,
    dy: Output,
    x: Output,
    y: Output,
    depth_radius: i64,
    bias: f32,
    alpha: f32,
    beta: f32,
) -> Output {
    lrn_op(s, "LRNGrad", vec![dy, x, y], depth_radius, bias, alpha, beta)
}

/// `InTopKV2`: whether each row's `targets` entry is among its `k` largest `predictions`.
pub fn in_top_k_v2(s: &Scope, predictions: Output, targets: Output, k: Output) -> Output {
    s.op("InTopKV2").input(predictions).input(targets).input(k).build().output(0)
}

/// `Cross`: cross products of the 3-vectors in the last dimension of `a` and `b`.
pub fn cross(s: &Scope, a: Output, b: Output) -> Output {
    s.op("Cross").input(a).input(b).build().output(0)
}
