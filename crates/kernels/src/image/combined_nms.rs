//! `CombinedNonMaxSuppression` (`tf.image.combined_non_max_suppression`): for each image of a
//! batch, greedy non-max suppression per class (boxes shared by all classes, `q = 1`, or one
//! per class), then the best `max_total_size` detections over all classes, padded with zeros.
//! TensorFlow keeps each class's candidates in a `std::priority_queue` and merges the classes
//! with `std::sort`, both comparing scores only; equal scores come out in the order those
//! libstdc++ algorithms give (`stl_order`), so ties match TensorFlow's outputs.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Status, Tensor};

use super::stl_order::{heap_pop, heap_push, sort};
use crate::{KernelRegistry, OpContext, OpKernel};

/// Intersection over union of two `[y1, x1, y2, x2]` boxes (corners in any order; 0 when
/// either is empty), in f32 as TensorFlow's `IOU`.
fn iou(a: &[f32], b: &[f32]) -> f32 {
    let (ay0, ax0, ay1, ax1) = (a[0].min(a[2]), a[1].min(a[3]), a[0].max(a[2]), a[1].max(a[3]));
    let (by0, bx0, by1, bx1) = (b[0].min(b[2]), b[1].min(b[3]), b[0].max(b[2]), b[1].max(b[3]));
    let area_a = (ay1 - ay0) * (ax1 - ax0);
    let area_b = (by1 - by0) * (bx1 - bx0);
    if area_a <= 0.0 || area_b <= 0.0 {
        return 0.0;
    }
    let inter = (ay1.min(by1) - ay0.max(by0)).max(0.0) * (ax1.min(bx1) - ax0.max(bx0)).max(0.0);
    inter / (area_a + area_b - inter)
}

/// One selected detection (`index < 0`: an empty slot).
#[derive(Clone, Copy, Debug)]
struct Detection {
    index: i32,
    score: f32,
    class: i32,
    bbox: [f32; 4],
}

const EMPTY: Detection = Detection { index: -1, score: f32::NEG_INFINITY, class: -1, bbox: [0.0; 4] };

/// The sizes of one run.
struct Dims {
    boxes: usize,
    q: usize,
    classes: usize,
    per_class: usize,
}

/// Greedy NMS of class `class` of one image: its selections fill
/// `out[class * per_class..]` in order.
fn nms_class(boxes: &[f32], scores: &[f32], d: &Dims, class: usize, iou_t: f32, score_t: f32, out: &mut [Detection]) {
    let less = |a: &(usize, f32), b: &(usize, f32)| a.1 < b.1;
    let mut heap = Vec::new();
    for i in 0..d.boxes {
        let s = scores[i * d.classes + class];
        if s > score_t {
            heap_push(&mut heap, (i, s), &less);
        }
    }
    let col = if d.q > 1 { class } else { 0 };
    let bbox = |i: usize| &boxes[(i * d.q + col) * 4..(i * d.q + col) * 4 + 4];
    let mut selected: Vec<usize> = Vec::new();
    while selected.len() < d.per_class {
        let Some((i, score)) = heap_pop(&mut heap, &less) else { break };
        if selected.iter().rev().any(|&j| iou(bbox(i), bbox(j)) > iou_t) {
            continue;
        }
        let b = bbox(i);
        out[class * d.per_class + selected.len()] =
            Detection { index: i as i32, score, class: class as i32, bbox: [b[0], b[1], b[2], b[3]] };
        selected.push(i);
    }
}

/// `std::max(std::min(v, 1.0f), 0.0f)` (NaN stays NaN).
fn clip(v: f32) -> f32 {
    let v = if 1.0 < v { 1.0 } else { v };
    if v < 0.0 {
        0.0
    } else {
        v
    }
}

struct CombinedNms {
    pad_per_class: bool,
    clip_boxes: bool,
}

fn scalar_input(ctx: &OpContext, i: usize, what: &str) -> Result<Tensor, Status> {
    let t = ctx.input(i)?;
    if t.rank() != 0 {
        return Err(ctx.error(format!("{what} must be 0-D, got shape {}", t.shape())));
    }
    Ok(t)
}

impl OpKernel for CombinedNms {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let (boxes, scores) = (ctx.input(0)?, ctx.input(1)?);
        if boxes.rank() != 4 {
            return Err(ctx.error(format!("boxes must be 4-D [batch, num_boxes, q, 4], got shape {}", boxes.shape())));
        }
        if scores.rank() != 3 {
            return Err(
                ctx.error(format!("scores must be 3-D [batch, num_boxes, num_classes], got shape {}", scores.shape()))
            );
        }
        let (bd, sd) = (boxes.dims(), scores.dims());
        let (num_boxes, q, classes) = (bd[1], bd[2], sd[2]);
        if q != 1 && q != classes {
            return Err(ctx.error("third dimension of boxes must be either 1 or num classes"));
        }
        if bd[3] != 4 {
            return Err(ctx.error("boxes must have 4 columns"));
        }
        if sd[1] != num_boxes {
            return Err(ctx.error("scores has incompatible shape"));
        }
        if bd[0] != sd[0] {
            return Err(ctx.error("boxes and scores must have same batch size"));
        }
        let max_per_class = scalar_input(ctx, 2, "max_size_per_class")?.scalar_value::<i32>()?;
        if max_per_class <= 0 {
            return Err(ctx.error("max_size_per_class must be positive"));
        }
        let max_total = scalar_input(ctx, 3, "max_total_size")?.scalar_value::<i32>()?;
        if max_total <= 0 {
            return Err(ctx.error("max_total_size must be > 0"));
        }
        let iou_t = scalar_input(ctx, 4, "iou_threshold")?.scalar_value::<f32>()?;
        let score_t = scalar_input(ctx, 5, "score_threshold")?.scalar_value::<f32>()?;
        if !(0.0..=1.0).contains(&iou_t) {
            return Err(ctx.error("iou_threshold must be in [0, 1]"));
        }
        let per_class = (max_per_class as usize).min(num_boxes);
        let slots = per_class.checked_mul(classes).filter(|&n| n <= i32::MAX as usize);
        let Some(slots) = slots else {
            return Err(ctx.error("size_per_class * num_classes causes overflow"));
        };
        let d = Dims { boxes: num_boxes, q, classes, per_class };
        let batch = bd[0];
        // Every class of max_size_per_class detections, capped at int32.
        let all_classes = (max_per_class as i64 * classes as i64).min(i32::MAX as i64) as usize;
        let out_size = if self.pad_per_class { (max_total as usize).min(all_classes) } else { max_total as usize };
        let mut out_boxes = ferroflow_core::alloc::zeroed::<f32>(&[batch, out_size, 4])?;
        let mut out_scores = ferroflow_core::alloc::zeroed::<f32>(&[batch, out_size])?;
        let mut out_classes = ferroflow_core::alloc::zeroed::<f32>(&[batch, out_size])?;
        let mut valid = Vec::with_capacity(batch);
        let (b, s) = (boxes.as_slice::<f32>()?, scores.as_slice::<f32>()?);
        let mut found = vec![EMPTY; slots];
        for img in 0..batch {
            found.fill(EMPTY);
            let ib = &b[img * num_boxes * q * 4..(img + 1) * num_boxes * q * 4];
            let is = &s[img * num_boxes * classes..(img + 1) * num_boxes * classes];
            for class in 0..classes {
                nms_class(ib, is, &d, class, iou_t, score_t, &mut found);
            }
            sort(&mut found, &|a: &Detection, b: &Detection| b.score < a.score);
            let count = found.iter().filter(|r| r.index > -1).count();
            let n = count.min(out_size);
            valid.push(n as i32);
            for (k, r) in found.iter().take(n).enumerate() {
                let at = img * out_size + k;
                let bbox = if self.clip_boxes { r.bbox.map(clip) } else { r.bbox };
                out_boxes[at * 4..at * 4 + 4].copy_from_slice(&bbox);
                out_scores[at] = r.score;
                out_classes[at] = r.class as f32;
            }
        }
        ctx.set_output(0, Tensor::new(vec![batch, out_size, 4], out_boxes)?)?;
        ctx.set_output(1, Tensor::new(vec![batch, out_size], out_scores)?)?;
        ctx.set_output(2, Tensor::new(vec![batch, out_size], out_classes)?)?;
        ctx.set_output(3, Tensor::vec(valid))
    }
}

fn make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(CombinedNms { pad_per_class: n.attr_bool("pad_per_class")?, clip_boxes: n.attr_bool("clip_boxes")? }))
}

/// Registers the kernel.
pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("CombinedNonMaxSuppression", make);
}

#[cfg(test)]
#[path = "combined_nms_tests.rs"]
mod tests;
