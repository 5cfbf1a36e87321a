//! `BiasAdd`, `BiasAddGrad`, rectifiers (`Relu`, `Relu6`, `Elu` and gradients), `Softmax`,
//! `LogSoftmax` and the two softmax cross-entropy ops.

use ferroflow_core::{attr, NodeAttrs, Status};

use super::{activation_def, activation_grad_def, FLOAT_TYPES, NUMBER_TYPES, REAL_TYPES};
use crate::op_def::op;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{broadcast_dims, unchanged, Dims, ShapeCtx};

/// Index of the channel dim of a rank-`r` value under the node's data_format.
fn channel_dim(c: &ShapeCtx, r: usize) -> Result<usize, Status> {
    Ok(if c.node.attr_string("data_format")? == "NCHW" { 1 } else { r - 1 })
}

fn bias_add_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let Some(mut v) = c.input(0) else { return Ok(vec![None]) };
    if v.len() < 2 {
        return Err(c.error(format!("Input tensor must be at least 2D: {v:?}")));
    }
    let cd = channel_dim(c, v.len())?;
    if let Some(b) = c.input(1) {
        if b.len() != 1 {
            return Err(c.error(format!("Biases must be 1D: {b:?}")));
        }
        match (v[cd], b[0]) {
            (x, y) if x >= 0 && y >= 0 && x != y => {
                return Err(c.error(format!("Must provide as many biases as the channel dimension: {b:?} vs. {v:?}")))
            }
            (-1, y) => v[cd] = y,
            _ => {}
        }
    }
    Ok(vec![Some(v)])
}

fn bias_add_grad_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let Some(v) = c.input(0) else { return Ok(vec![Some(vec![-1])]) };
    if v.len() < 2 {
        return Err(c.error(format!("Input tensor must be at least 2D: {v:?}")));
    }
    Ok(vec![Some(vec![v[channel_dim(c, v.len())?]])])
}

fn softmax_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    if c.input(0).is_some_and(|v| v.is_empty()) {
        return Err(c.error("logits must have >= 1 dimension, got a scalar"));
    }
    unchanged(c)
}

fn xent_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let b = broadcast_dims(c, &c.input(0), &c.input(1))?;
    match b {
        Some(v) if v.len() != 2 => {
            Err(c.error("logits and labels must be either 2-dimensional, or broadcasted to be 2-dimensional"))
        }
        Some(v) => Ok(vec![Some(vec![v[0]]), Some(v)]),
        None => Ok(vec![Some(vec![-1]), Some(vec![-1, -1])]),
    }
}

fn sparse_xent_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let logits = c.input(0).unwrap_or(vec![-1, -1]);
    if logits.len() != 2 {
        return Err(c.error(format!("logits must be 2-D, but got shape {logits:?}")));
    }
    let mut batch = logits[0];
    if let Some(l) = c.input(1) {
        if l.len() != 1 {
            return Err(c.error(format!("labels must be 1-D, but got shape {l:?}")));
        }
        if batch >= 0 && l[0] >= 0 && batch != l[0] {
            return Err(c.error(format!(
                "logits and labels must have the same first dimension, got logits shape {logits:?} and labels shape {l:?}"
            )));
        }
        batch = batch.max(l[0]);
    }
    Ok(vec![Some(vec![batch]), Some(vec![batch, logits[1]])])
}

pub(super) fn register(r: &mut OpRegistry) {
    let data_format = "data_format: {'NHWC', 'NCHW'} = 'NHWC'";
    r.add(
        op("BiasAdd")
            .attr(&format!("T: {NUMBER_TYPES}"))
            .input("value: T")
            .input("bias: T")
            .attr(data_format)
            .output("output: T")
            .shape_fn(bias_add_shape)
            .build(),
    );
    r.add(
        op("BiasAddGrad")
            .attr(&format!("T: {NUMBER_TYPES}"))
            .input("out_backprop: T")
            .attr(data_format)
            .output("output: T")
            .shape_fn(bias_add_grad_shape)
            .build(),
    );
    // The rectifiers and their gradient ops (which take the forward input, or Elu's result).
    for (name, second, types) in
        [("Relu", "features", REAL_TYPES), ("Relu6", "features", REAL_TYPES), ("Elu", "outputs", FLOAT_TYPES)]
    {
        let t = format!("T: {types}");
        r.add(activation_def(name, &t));
        r.add(activation_grad_def(&format!("{name}Grad"), second, &t));
    }
    for (name, out) in [("Softmax", "softmax"), ("LogSoftmax", "logsoftmax")] {
        r.add(
            op(name)
                .input("logits: T")
                .output(&format!("{out}: T"))
                .attr(&format!("T: {FLOAT_TYPES}"))
                .shape_fn(softmax_shape)
                .build(),
        );
    }
    r.add(
        op("SoftmaxCrossEntropyWithLogits")
            .input("features: T")
            .input("labels: T")
            .output("loss: T")
            .output("backprop: T")
            .attr(&format!("T: {FLOAT_TYPES}"))
            .shape_fn(xent_shape)
            .build(),
    );
    r.add(
        op("SparseSoftmaxCrossEntropyWithLogits")
            .input("features: T")
            .input("labels: Tlabels")
            .output("loss: T")
            .output("backprop: T")
            .attr(&format!("T: {FLOAT_TYPES}"))
            .attr("Tlabels: {int32, int64} = DT_INT64")
            .shape_fn(sparse_xent_shape)
            .build(),
    );
}

one_output_builders! {
    /// `BiasAdd` (NHWC): adds the 1-D `bias` along the last dim of `value`.
    bias_add => "BiasAdd"(value, bias);
    /// `BiasAddGrad` (NHWC): sums `out_backprop` over every dim but the last.
    bias_add_grad => "BiasAddGrad"(out_backprop);
    /// `Softmax` over the last dim.
    softmax => "Softmax"(logits);
    /// `LogSoftmax` over the last dim.
    log_softmax => "LogSoftmax"(logits);
}

/// `BiasAdd` with an explicit `data_format` ("NHWC" or "NCHW").
pub fn bias_add_with_format(s: &Scope, value: Output, bias: Output, data_format: &str) -> Output {
    s.op("BiasAdd").input(value).input(bias).attr("data_format", attr::string(data_format)).build().output(0)
}

activation_builders! {
    relu, relu_grad => "Relu"(features): "`max(features, 0)`", ": `gradients * (features > 0)`";
    relu6, relu6_grad => "Relu6"(features): "`min(max(features, 0), 6)`", ": `gradients * (0 < features < 6)`";
    elu, elu_grad => "Elu"(outputs): "`features < 0 ? exp(features) - 1 : features`",
        " from the Elu `outputs`: `outputs < 0 ? gradients * (outputs + 1) : gradients`";
}

two_output_builders! {
    /// `SoftmaxCrossEntropyWithLogits`: returns `(loss [batch], backprop [batch, classes])` for
    /// 2-D logits and label distributions (broadcast to 2-D).
    softmax_cross_entropy_with_logits => "SoftmaxCrossEntropyWithLogits"(logits, labels);
    /// `SparseSoftmaxCrossEntropyWithLogits`: returns `(loss [batch], backprop [batch, classes])`
    /// for 2-D logits and int32/int64 class indices.
    sparse_softmax_cross_entropy_with_logits => "SparseSoftmaxCrossEntropyWithLogits"(logits, labels);
}
