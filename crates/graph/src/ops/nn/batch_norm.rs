//! `FusedBatchNorm`, `FusedBatchNormV2`, `FusedBatchNormV3` and their gradients
//! `FusedBatchNormGrad`, `FusedBatchNormGradV2`, `FusedBatchNormGradV3` (TensorFlow's
//! definitions: V1 is float only, V2/V3 take `T` for x and y and `U` for the per-channel
//! tensors; V3 adds a third reserve space and the 5-D formats).

use ferroflow_core::{attr, NodeAttrs, Status};

use crate::op_def::{op, OpDefBuilder};
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{Dims, ShapeCtx};

/// The channel dim of `x` (-1 when unknown) after checking its rank is 4 or 5.
fn channels(c: &ShapeCtx, x: &Dims) -> Result<i64, Status> {
    let Some(x) = x else { return Ok(-1) };
    if x.len() != 4 && x.len() != 5 {
        return Err(c.error(format!("input must be 4 or 5-dimensional, got shape {x:?}")));
    }
    let fmt = c.node.attr_string("data_format").unwrap_or_else(|_| "NHWC".into());
    Ok(if fmt.starts_with("NC") { x[1] } else { x[x.len() - 1] })
}

/// Checks that input `i` (named `what`) is a vector of `depth` elements when both are known;
/// `may_be_empty` allows an empty vector (the running mean/variance in training).
fn check_vec(c: &ShapeCtx, i: usize, what: &str, depth: i64, may_be_empty: bool) -> Result<(), Status> {
    let Some(d) = c.input(i) else { return Ok(()) };
    if d.len() != 1 {
        return Err(c.error(format!("{what} must be 1-dimensional, got shape {d:?}")));
    }
    if depth >= 0 && d[0] >= 0 && d[0] != depth && !(may_be_empty && d[0] == 0) {
        return Err(c.error(format!(
            "{what} must have the same number of elements as the channels of x, got {} and {depth}",
            d[0]
        )));
    }
    Ok(())
}

pub(super) fn forward_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let x = c.input(0);
    let depth = channels(c, &x)?;
    let training = c.node.attr_bool("is_training").unwrap_or(true);
    let factor = c.node.attr_float("exponential_avg_factor").unwrap_or(1.0);
    check_vec(c, 1, "scale", depth, false)?;
    check_vec(c, 2, "offset", depth, false)?;
    check_vec(c, 3, "mean", depth, training && factor == 1.0)?;
    check_vec(c, 4, "variance", depth, training && factor == 1.0)?;
    let v = Some(vec![depth]);
    let mut out = vec![x, v.clone(), v.clone(), v.clone(), v];
    if matches!(c.node.op.as_str(), "FusedBatchNormV3" | "_FusedBatchNormEx") {
        out.push(Some(vec![]));
    }
    Ok(out)
}

pub(super) fn grad_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let (dy, x) = (c.input(0), c.input(1));
    let depth = channels(c, &x)?;
    if let (Some(a), Some(b)) = (&dy, &x) {
        let same = a.len() == b.len() && a.iter().zip(b).all(|(&p, &q)| p < 0 || q < 0 || p == q);
        if !same {
            return Err(c.error(format!(
                "x and y_backprop must have same shape, but x has shape {b:?} and y_backprop has shape {a:?}"
            )));
        }
    }
    check_vec(c, 2, "scale", depth, false)?;
    check_vec(c, 3, "reserve_space_1", depth, false)?;
    check_vec(c, 4, "reserve_space_2", depth, false)?;
    let v = Some(vec![depth]);
    Ok(vec![x, v.clone(), v, Some(vec![0]), Some(vec![0])])
}

/// The attrs of every version: epsilon, data_format (`formats`), is_training.
pub(super) fn common(b: OpDefBuilder, formats: &str) -> OpDefBuilder {
    b.attr("epsilon: float = 0.0001")
        .attr(&format!("data_format: {{{formats}}} = 'NHWC'"))
        .attr("is_training: bool = true")
}

pub(super) const FORMATS_4D: &str = "'NHWC', 'NCHW'";
pub(super) const FORMATS_5D: &str = "'NHWC', 'NCHW', 'NDHWC', 'NCDHW'";

pub(super) fn register(r: &mut OpRegistry) {
    let forward = |name: &str, u: &str, formats: &str| {
        let b = op(name).input("x: T");
        let b = ["scale", "offset", "mean", "variance"].iter().fold(b, |b, n| b.input(&format!("{n}: {u}")));
        let b = b.output("y: T").output(&format!("batch_mean: {u}")).output(&format!("batch_variance: {u}"));
        let b = b.output(&format!("reserve_space_1: {u}")).output(&format!("reserve_space_2: {u}"));
        let b = if name == "FusedBatchNormV3" { b.output("reserve_space_3: U") } else { b };
        let b = b.attr("exponential_avg_factor: float = 1");
        common(b, formats).shape_fn(forward_shape)
    };
    r.add(forward("FusedBatchNorm", "T", FORMATS_4D).attr("T: {float}").build());
    r.add(forward("FusedBatchNormV2", "U", FORMATS_4D).attr("T: {half, bfloat16, float}").attr("U: {float}").build());
    r.add(
        forward("FusedBatchNormV3", "U", FORMATS_5D)
            .attr("T: {half, bfloat16, float}")
            .attr("U: {bfloat16, float}")
            .build(),
    );
    let grad = |name: &str, u: &str, scale: &str, formats: &str, spaces: [&str; 2]| {
        let b = op(name).input("y_backprop: T").input("x: T").input(&format!("scale: {scale}"));
        let b = b.input(&format!("reserve_space_1: {u}")).input(&format!("reserve_space_2: {u}"));
        let b = if name == "FusedBatchNormGradV3" { b.input("reserve_space_3: U") } else { b };
        let b = b.output("x_backprop: T").output(&format!("scale_backprop: {u}"));
        let b = b.output(&format!("offset_backprop: {u}"));
        let b = spaces.iter().fold(b, |b, s| b.output(&format!("{s}: {u}")));
        common(b, formats).shape_fn(grad_shape)
    };
    let spaces34 = ["reserve_space_3", "reserve_space_4"];
    r.add(grad("FusedBatchNormGrad", "T", "T", FORMATS_4D, spaces34).attr("T: {float}").build());
    r.add(
        grad("FusedBatchNormGradV2", "U", "float", FORMATS_4D, spaces34)
            .attr("T: {half, bfloat16, float}")
            .attr("U: {float}")
            .build(),
    );
    r.add(
        grad("FusedBatchNormGradV3", "U", "float", FORMATS_5D, ["reserve_space_4", "reserve_space_5"])
            .attr("T: {half, bfloat16, float}")
            .attr("U: {float}")
            .build(),
    );
}

/// The outputs of [`fused_batch_norm`]: `y`, `batch_mean`, `batch_variance` and the reserve
/// spaces (two, or three for V3) that `FusedBatchNormGrad*` takes back.
#[derive(Clone, Debug)]
pub struct FusedBatchNormOutputs {
    /// The normalized, scaled and shifted input.
    pub y: Output,
    /// Training: the batch mean (blended into `mean` by `exponential_avg_factor`); inference: `mean`.
    pub batch_mean: Output,
    /// Training: the Bessel-corrected batch variance (blended likewise); inference: `variance`.
    pub batch_variance: Output,
    /// The reserve spaces, for the gradient op.
    pub reserve_spaces: Vec<Output>,
}

/// `FusedBatchNormV3` (NHWC, exponential_avg_factor 1): normalizes `x` per channel with the
/// batch statistics (`is_training`) or the given `mean` and `variance`, then scales and shifts.
///
/// ```
/// use ferroflow_graph::{ops, DataType, Scope};
/// let s = Scope::new_root();
/// let x = ops::placeholder(&s, DataType::Float, Some(&[-1, 8, 8, 3]));
/// let v = |s: &Scope| ops::placeholder(s, DataType::Float, Some(&[3]));
/// let bn = ops::fused_batch_norm(&s, x, v(&s), v(&s), v(&s), v(&s), 0.001, true);
/// assert_eq!(s.graph().shape_of(&bn.y), Some(vec![-1, 8, 8, 3]));
/// assert_eq!(bn.reserve_spaces.len(), 3);
/// ```
#[allow(clippy::too_many_arguments)]
pub fn fused_batch_norm(
    s: &Scope,
    x: Output,
    scale: Output,
    offset: Output,
    mean: Output,
    variance: Output,
    epsilon: f32,
    is_training: bool,
) -> FusedBatchNormOutputs {
    let o = s
        .op("FusedBatchNormV3")
        .inputs([x, scale, offset, mean, variance])
        .attr("epsilon", attr::float(epsilon))
        .attr("is_training", attr::bool(is_training))
        .build()
        .outputs();
    FusedBatchNormOutputs {
        y: o[0].clone(),
        batch_mean: o[1].clone(),
        batch_variance: o[2].clone(),
        reserve_spaces: o[3..].to_vec(),
    }
}

/// `FusedBatchNormGradV3` (NHWC): `[x_backprop, scale_backprop, offset_backprop, …]` from the
/// forward op's `x`, `scale` and its three reserve spaces (training), or the population
/// mean and variance and any third tensor (inference).
#[allow(clippy::too_many_arguments)]
pub fn fused_batch_norm_grad(
    s: &Scope,
    y_backprop: Output,
    x: Output,
    scale: Output,
    reserve_spaces: [Output; 3],
    epsilon: f32,
    is_training: bool,
) -> Vec<Output> {
    let [r1, r2, r3] = reserve_spaces;
    s.op("FusedBatchNormGradV3")
        .inputs([y_backprop, x, scale, r1, r2, r3])
        .attr("epsilon", attr::float(epsilon))
        .attr("is_training", attr::bool(is_training))
        .build()
        .outputs()
}
