//! `NonMaxSuppression` (V1, the threshold an attr), `V2`, `V3`, `V4` and `V5`: greedy
//! selection of boxes by score, dropping those whose IoU with a selected box exceeds
//! `iou_threshold` (V1 and V2 keep every score); V5 adds Soft-NMS (scores decay by
//! `exp(-iou² / (2σ))`) and returns the selected scores. `NonMaxSuppressionWithOverlaps`
//! takes the pairwise overlaps instead of boxes.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use super::common::dtype_attr;
use crate::{OpContext, OpKernel};

#[derive(Clone, Copy, Debug)]
struct Candidate {
    index: usize,
    score: f32,
    begin: usize,
}

impl PartialEq for Candidate {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Candidate {}
impl PartialOrd for Candidate {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Candidate {
    /// Higher score first; among equal scores the lower index.
    fn cmp(&self, o: &Self) -> Ordering {
        self.score.partial_cmp(&o.score).unwrap_or(Ordering::Equal).then_with(|| o.index.cmp(&self.index))
    }
}

/// Intersection over union of boxes `i` and `j` (corners in any order; 0 for empty boxes).
fn iou(b: &[f32], i: usize, j: usize) -> f32 {
    let (bi, bj) = (&b[i * 4..i * 4 + 4], &b[j * 4..j * 4 + 4]);
    let (ymin_i, xmin_i, ymax_i, xmax_i) = (bi[0].min(bi[2]), bi[1].min(bi[3]), bi[0].max(bi[2]), bi[1].max(bi[3]));
    let (ymin_j, xmin_j, ymax_j, xmax_j) = (bj[0].min(bj[2]), bj[1].min(bj[3]), bj[0].max(bj[2]), bj[1].max(bj[3]));
    let area_i = (ymax_i - ymin_i) * (xmax_i - xmin_i);
    let area_j = (ymax_j - ymin_j) * (xmax_j - xmin_j);
    if area_i <= 0.0 || area_j <= 0.0 {
        return 0.0;
    }
    let ih = (ymax_i.min(ymax_j) - ymin_i.max(ymin_j)).max(0.0);
    let iw = (xmax_i.min(xmax_j) - xmin_i.max(xmin_j)).max(0.0);
    let inter = ih * iw;
    inter / (area_i + area_j - inter)
}

/// The selected indices and their (possibly soft-suppressed) scores.
fn suppress(
    similarity: impl Fn(usize, usize) -> f32,
    scores: &[f32],
    max_out: usize,
    iou_t: f32,
    score_t: f32,
    sigma: f32,
) -> (Vec<i32>, Vec<f32>) {
    let mut heap: BinaryHeap<Candidate> = scores
        .iter()
        .enumerate()
        .filter(|&(_, &s)| s > score_t)
        .map(|(index, &score)| Candidate { index, score, begin: 0 })
        .collect();
    // Soft-NMS (sigma > 0) only decays scores; plain NMS drops boxes above the threshold.
    let soft = sigma > 0.0;
    let scale = if soft { -0.5 / sigma } else { 0.0 };
    let weight = |sim: f32| if soft || sim <= iou_t { (scale * sim * sim).exp() } else { 0.0 };
    let (mut sel, mut sel_scores) = (Vec::<i32>::new(), Vec::new());
    while sel.len() < max_out {
        let Some(mut c) = heap.pop() else { break };
        let original = c.score;
        let mut hard = false;
        for j in (c.begin..sel.len()).rev() {
            let sim = similarity(c.index, sel[j] as usize);
            c.score *= weight(sim);
            if !soft && sim > iou_t {
                hard = true;
                break;
            }
            if c.score <= score_t {
                break;
            }
        }
        c.begin = sel.len();
        if hard {
            continue;
        }
        if c.score == original {
            sel.push(c.index as i32);
            sel_scores.push(c.score);
        } else if c.score > score_t {
            heap.push(c);
        }
    }
    (sel, sel_scores)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Version {
    V1,
    V2,
    Overlaps,
    V3,
    V4,
    V5,
}

struct Nms {
    version: Version,
    pad: bool,
    /// `NonMaxSuppression`'s `iou_threshold` attr.
    iou_attr: f32,
}

fn scalar(ctx: &OpContext, i: usize, what: &str) -> Result<Tensor, Status> {
    let t = ctx.input(i)?;
    if t.rank() != 0 {
        return Err(ctx.error(format!("{what} must be 0-D, got shape {}", t.shape())));
    }
    Ok(t)
}

fn scalar_f32(ctx: &OpContext, i: usize, what: &str) -> Result<f32, Status> {
    scalar(ctx, i, what)?.scalar_value::<f32>().map_err(|_| ctx.error(format!("{what} must be float")))
}

impl OpKernel for Nms {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let boxes = ctx.input(0)?;
        let scores = ctx.input(1)?;
        let overlaps = self.version == Version::Overlaps;
        if overlaps && (boxes.rank() != 2 || boxes.dims()[0] != boxes.dims()[1]) {
            return Err(ctx.error(format!("overlaps must be 2-D and square, got shape {}", boxes.shape())));
        }
        if !overlaps && (boxes.rank() != 2 || boxes.dims()[1] != 4) {
            return Err(ctx.error(format!("boxes must be 2-D with 4 columns, got shape {}", boxes.shape())));
        }
        let n = boxes.dims()[0];
        if scores.rank() != 1 {
            return Err(ctx.error(format!("scores must be 1-D, got shape {}", scores.shape())));
        }
        if scores.dims()[0] != n {
            return Err(ctx.error(format!(
                "scores has incompatible shape {} for boxes {}",
                scores.shape(),
                boxes.shape()
            )));
        }
        let max_out = scalar(ctx, 2, "max_output_size")?
            .scalar_value::<i32>()
            .map_err(|_| ctx.error("max_output_size must be int32"))?;
        if max_out < 0 {
            return Err(ctx.error(format!("max_output_size must be non-negative, got {max_out}")));
        }
        let iou_t = match self.version {
            Version::V1 => self.iou_attr,
            Version::Overlaps => scalar_f32(ctx, 3, "overlap_threshold")?,
            _ => scalar_f32(ctx, 3, "iou_threshold")?,
        };
        if !overlaps && !(0.0..=1.0).contains(&iou_t) {
            return Err(ctx.error(format!("iou_threshold must be in [0, 1], got {iou_t}")));
        }
        let score_t = match self.version {
            Version::V1 | Version::V2 => f32::MIN,
            _ => scalar_f32(ctx, 4, "score_threshold")?,
        };
        let sigma = if self.version == Version::V5 {
            let s = scalar_f32(ctx, 5, "soft_nms_sigma")?;
            if s.is_nan() || s < 0.0 {
                return Err(ctx.error(format!("soft_nms_sigma must be non-negative, got {s}")));
            }
            s
        } else {
            0.0
        };
        let b = boxes.as_slice::<f32>()?;
        let s = scores.as_slice::<f32>()?;
        let n = s.len();
        let (mut sel, mut sel_scores) = if overlaps {
            suppress(|i, j| b[i * n + j], s, max_out as usize, iou_t, score_t, sigma)
        } else {
            suppress(|i, j| iou(b, i, j), s, max_out as usize, iou_t, score_t, sigma)
        };
        let valid = sel.len() as i32;
        if self.pad {
            // Padded to `max_output_size` (a value input): from the fallible path.
            let mut padded = ferroflow_core::alloc::zeroed::<i32>(&[max_out as usize])?;
            padded[..sel.len()].copy_from_slice(&sel);
            sel = padded;
            if self.version == Version::V5 {
                let mut padded = ferroflow_core::alloc::zeroed::<f32>(&[max_out as usize])?;
                padded[..sel_scores.len()].copy_from_slice(&sel_scores);
                sel_scores = padded;
            }
        }
        ctx.set_output(0, Tensor::vec(sel))?;
        match self.version {
            Version::V1 | Version::V2 | Version::Overlaps | Version::V3 => Ok(()),
            Version::V4 => ctx.set_output(1, Tensor::scalar(valid)),
            Version::V5 => {
                ctx.set_output(1, Tensor::vec(sel_scores))?;
                ctx.set_output(2, Tensor::scalar(valid))
            }
        }
    }
}

fn factory(node: &NodeDef, version: Version) -> Result<Box<dyn OpKernel>, Status> {
    if matches!(version, Version::V2 | Version::V3 | Version::V4 | Version::V5) {
        dtype_attr(node, "T", |d| d == DataType::Float)?;
    }
    if matches!(version, Version::V2 | Version::V3 | Version::V4) {
        dtype_attr(node, "T_threshold", |d| d == DataType::Float)?;
    }
    let pad = matches!(version, Version::V4 | Version::V5) && node.attr_bool("pad_to_max_output_size")?;
    let iou_attr = if version == Version::V1 { node.attr_float("iou_threshold")? } else { 0.0 };
    Ok(Box::new(Nms { version, pad, iou_attr }))
}

/// Registers the kernels.
pub(crate) fn register(r: &mut crate::KernelRegistry) {
    r.add("NonMaxSuppression", |n| factory(n, Version::V1));
    r.add("NonMaxSuppressionV2", |n| factory(n, Version::V2));
    r.add("NonMaxSuppressionWithOverlaps", |n| factory(n, Version::Overlaps));
    r.add("NonMaxSuppressionV3", |n| factory(n, Version::V3));
    r.add("NonMaxSuppressionV4", |n| factory(n, Version::V4));
    r.add("NonMaxSuppressionV5", |n| factory(n, Version::V5));
}
