//! `NonMaxSuppression` (V1), `V2`, `V3`, `V4`, `V5`, `NonMaxSuppressionWithOverlaps`,
//! `DrawBoundingBoxesV2`.

use ferroflow_core::{attr, Status};

use crate::op_def::{op, OpDefBuilder};
use crate::registry::OpRegistry;
use crate::scope::{OpBuilder, Output, Scope};
use crate::shape_fn::{Dims, ShapeCtx};

/// Selected indices: [max_output_size] when padded to a known size, else [-1].
fn selected(c: &ShapeCtx) -> Dims {
    let pad = matches!(c.node.op.as_str(), "NonMaxSuppressionV4" | "NonMaxSuppressionV5")
        && ferroflow_core::NodeAttrs::attr_bool(c.node, "pad_to_max_output_size").unwrap_or(false);
    let n = match c.const_input(2) {
        Some(t) if pad => t.to_f64_vec().ok().and_then(|v| v.first().copied()).map_or(-1, |v| v as i64),
        _ => -1,
    };
    Some(vec![n])
}

fn nms_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    if c.node.op == "NonMaxSuppressionWithOverlaps" {
        return Ok(vec![selected(c)]);
    }
    if let Some(b) = c.input(0) {
        if b.len() != 2 || (b[1] >= 0 && b[1] != 4) {
            return Err(c.error(format!("boxes must be 2-D with 4 columns, got shape {b:?}")));
        }
    }
    let sel = selected(c);
    Ok(match c.node.op.as_str() {
        "NonMaxSuppression" | "NonMaxSuppressionV2" | "NonMaxSuppressionV3" => vec![sel],
        "NonMaxSuppressionV4" => vec![sel, Some(vec![])],
        _ => vec![sel.clone(), sel, Some(vec![])],
    })
}

pub(super) fn register(r: &mut OpRegistry) {
    r.add(
        op("DrawBoundingBoxesV2")
            .input("images: T")
            .input("boxes: float")
            .input("colors: float")
            .output("output: T")
            .attr("T: {float, half} = DT_FLOAT")
            .shape_fn(crate::shape_fn::unchanged)
            .build(),
    );
    let v1 = op("NonMaxSuppression").input("boxes: float").input("scores: float").input("max_output_size: int32");
    let v1 = v1.output("selected_indices: int32").attr("iou_threshold: float = 0.5");
    r.add(v1.shape_fn(nms_shape).build());
    let v2 = op("NonMaxSuppressionV2").input("boxes: T").input("scores: T").input("max_output_size: int32");
    let v2 = v2.input("iou_threshold: T_threshold").output("selected_indices: int32");
    let v2 = v2.attr("T: {half, float} = DT_FLOAT").attr("T_threshold: {half, float} = DT_FLOAT");
    r.add(v2.shape_fn(nms_shape).build());
    let ov = op("NonMaxSuppressionWithOverlaps").input("overlaps: float").input("scores: float");
    let ov = ov.input("max_output_size: int32").input("overlap_threshold: float").input("score_threshold: float");
    r.add(ov.output("selected_indices: int32").shape_fn(nms_shape).build());
    for name in ["NonMaxSuppressionV3", "NonMaxSuppressionV4"] {
        let b = op(name)
            .input("boxes: T")
            .input("scores: T")
            .input("max_output_size: int32")
            .input("iou_threshold: T_threshold")
            .input("score_threshold: T_threshold")
            .output("selected_indices: int32")
            .attr("T: {half, float} = DT_FLOAT")
            .attr("T_threshold: {half, float} = DT_FLOAT");
        let v4 = |b: OpDefBuilder| b.output("valid_outputs: int32").attr("pad_to_max_output_size: bool = false");
        r.add(b.when(name == "NonMaxSuppressionV4", v4).shape_fn(nms_shape).build());
    }
    r.add(
        op("NonMaxSuppressionV5")
            .input("boxes: T")
            .input("scores: T")
            .input("max_output_size: int32")
            .input("iou_threshold: T")
            .input("score_threshold: T")
            .input("soft_nms_sigma: T")
            .output("selected_indices: int32")
            .output("selected_scores: T")
            .output("valid_outputs: int32")
            .attr("T: {half, float} = DT_FLOAT")
            .attr("pad_to_max_output_size: bool = false")
            .shape_fn(nms_shape)
            .build(),
    );
}

/// The inputs every `NonMaxSuppressionV*` op starts with.
#[derive(Clone, Debug)]
pub struct NmsInputs {
    /// [num_boxes, 4] corners.
    pub boxes: Output,
    /// [num_boxes] scores.
    pub scores: Output,
    /// int32 scalar: the most boxes selected.
    pub max_output_size: Output,
    /// Scalar: the overlap above which the lower-scored box is dropped.
    pub iou_threshold: Output,
    /// Scalar: boxes scored below it are never selected.
    pub score_threshold: Output,
}

impl NmsInputs {
    /// An `op_type` node on these inputs (the op's further inputs and attrs follow).
    fn op(self, s: &Scope, op_type: &str) -> OpBuilder {
        s.op(op_type)
            .input(self.boxes)
            .input(self.scores)
            .input(self.max_output_size)
            .input(self.iou_threshold)
            .input(self.score_threshold)
    }
}

/// `NonMaxSuppressionV3`: indices of the boxes kept, by decreasing score.
pub fn non_max_suppression_v3(s: &Scope, inputs: NmsInputs) -> Output {
    inputs.op(s, "NonMaxSuppressionV3").build().output(0)
}

/// `NonMaxSuppressionV5`: (selected_indices, selected_scores, valid_outputs).
pub fn non_max_suppression_v5(
    s: &Scope,
    inputs: NmsInputs,
    soft_nms_sigma: Output,
    pad_to_max_output_size: bool,
) -> Vec<Output> {
    inputs
        .op(s, "NonMaxSuppressionV5")
        .input(soft_nms_sigma)
        .attr("pad_to_max_output_size", attr::bool(pad_to_max_output_size))
        .build()
        .outputs()
}
