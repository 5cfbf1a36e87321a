//! The ops of object-detection and ImageNet input pipelines (TensorFlow's definitions and
//! builders): the random crop samplers `SampleDistortedBoundingBox`, `...V2` and
//! `StatelessSampleDistortedBoundingBox`, `CombinedNonMaxSuppression`, and `ExtractGlimpse` /
//! `ExtractGlimpseV2`.

use ferroflow_core::{attr, NodeAttrs, Status};

use super::{const_vec, with_rank};
use crate::op_def::op;
use crate::registry::OpRegistry;
use crate::scope::{OpBuilder, Output, Scope};
use crate::shape_fn::{Dims, ShapeCtx};

type R = Result<Vec<Dims>, Status>;

/// Checks that known dim `d` is `want`.
fn dim_is(c: &ShapeCtx, d: i64, want: i64, what: &str) -> Result<(), Status> {
    if d >= 0 && d != want {
        return Err(c.error(format!("Dimension must be {want} but is {d} ({what})")));
    }
    Ok(())
}

/// begin [3], size [3], bboxes [1, 1, 4], after the input checks.
fn sampler_shape(c: &ShapeCtx) -> R {
    let size = with_rank(c, &c.input(0), 1, "image_size")?;
    let boxes = with_rank(c, &c.input(1), 3, "bounding_boxes")?;
    if c.node.op != "SampleDistortedBoundingBox" {
        with_rank(c, &c.input(2), 0, "min_object_covered")?;
    }
    if c.node.op == "StatelessSampleDistortedBoundingBox" {
        let seed = with_rank(c, &c.input(3), 1, "seed")?;
        dim_is(c, seed[0], 2, "seed")?;
    }
    dim_is(c, size[0], 3, "image_size")?;
    dim_is(c, boxes[2], 4, "bounding_boxes")?;
    Ok(vec![Some(vec![3]), Some(vec![3]), Some(vec![1, 1, 4])])
}

/// Merges two dims (-1 unknown).
fn merge(c: &ShapeCtx, a: i64, b: i64, what: &str) -> Result<i64, Status> {
    match (a, b) {
        (-1, x) | (x, -1) => Ok(x),
        (x, y) if x == y => Ok(x),
        (x, y) => Err(c.error(format!("Dimensions must be equal, but are {x} and {y} ({what})"))),
    }
}

/// The value of constant int32 scalar input `i`, or -1.
fn const_scalar(c: &ShapeCtx, i: usize) -> i64 {
    c.const_input(i).and_then(|t| t.to_f64_vec().ok()).and_then(|v| v.first().copied()).map_or(-1, |v| v as i64)
}

fn combined_nms_shape(c: &ShapeCtx) -> R {
    let boxes = with_rank(c, &c.input(0), 4, "boxes")?;
    let scores = with_rank(c, &c.input(1), 3, "scores")?;
    for (i, what) in
        [(2, "max_output_size_per_class"), (3, "max_total_size"), (4, "iou_threshold"), (5, "score_threshold")]
    {
        with_rank(c, &c.input(i), 0, what)?;
    }
    let batch = merge(c, boxes[0], scores[0], "batch of boxes and scores")?;
    merge(c, boxes[1], scores[1], "boxes of boxes and scores")?;
    dim_is(c, boxes[3], 4, "boxes")?;
    let (q, classes) = (boxes[2], scores[2]);
    if q >= 0 && classes >= 0 && q != 1 && q != classes {
        return Err(c.error("third dimension of boxes must be either 1 or equal to the third dimension of scores"));
    }
    let total = const_scalar(c, 3);
    if total == 0 || total < -1 {
        return Err(c.error("max_total_size should be > 0 "));
    }
    let per_class = const_scalar(c, 2);
    let out = if !c.node.attr_bool("pad_per_class")? {
        total
    } else {
        if per_class == 0 || per_class < -1 {
            return Err(c.error("max_output_size_per_class must be > 0 if pad_per_class is set to true "));
        }
        if per_class >= 0 && classes >= 0 {
            total.min(per_class * classes)
        } else {
            -1
        }
    };
    Ok(vec![Some(vec![batch, out, 4]), Some(vec![batch, out]), Some(vec![batch, out]), Some(vec![batch])])
}

fn glimpse_shape(c: &ShapeCtx) -> R {
    let x = with_rank(c, &c.input(0), 4, "input")?;
    let offsets = with_rank(c, &c.input(2), 2, "offsets")?;
    let batch = merge(c, x[0], offsets[0], "batch of input and offsets")?;
    dim_is(c, offsets[1], 2, "offsets")?;
    let noise = c.node.attr_string("noise")?;
    if c.node.attr_bool("uniform_noise")? && !noise.is_empty() && noise != "uniform" {
        return Err(c.error("The uniform_noise and noise should not be specified at the same time"));
    }
    let size = with_rank(c, &c.input(1), 1, "size")?;
    dim_is(c, size[0], 2, "size")?;
    let s = const_vec(c, 1, 2)?;
    Ok(vec![Some(vec![batch, s[0], s[1], x[3]])])
}

const SAMPLER_ATTRS: [&str; 4] = [
    "aspect_ratio_range: list(float) = [0.75, 1.33]",
    "area_range: list(float) = [0.05, 1.0]",
    "max_attempts: int = 100",
    "use_image_if_no_bounding_boxes: bool = false",
];

pub(super) fn register(r: &mut OpRegistry) {
    for name in ["SampleDistortedBoundingBox", "SampleDistortedBoundingBoxV2", "StatelessSampleDistortedBoundingBox"] {
        let stateless = name == "StatelessSampleDistortedBoundingBox";
        let mut b = op(name)
            .input("image_size: T")
            .input("bounding_boxes: float")
            .when(name != "SampleDistortedBoundingBox", |b| b.input("min_object_covered: float"))
            .when(stateless, |b| b.input("seed: Tseed"))
            .output("begin: T")
            .output("size: T")
            .output("bboxes: float")
            .attr("T: {uint8, int8, int16, int32, int64}")
            .when(stateless, |b| b.attr("Tseed: {int32, int64}"))
            .when(!stateless, |b| b.attr("seed: int = 0").attr("seed2: int = 0"))
            .when(name == "SampleDistortedBoundingBox", |b| b.attr("min_object_covered: float = 0.1"));
        for a in SAMPLER_ATTRS {
            b = b.attr(a);
        }
        r.add(b.when(!stateless, |b| b.stateful()).shape_fn(sampler_shape).build());
    }
    r.add(
        op("CombinedNonMaxSuppression")
            .input("boxes: float")
            .input("scores: float")
            .input("max_output_size_per_class: int32")
            .input("max_total_size: int32")
            .input("iou_threshold: float")
            .input("score_threshold: float")
            .output("nmsed_boxes: float")
            .output("nmsed_scores: float")
            .output("nmsed_classes: float")
            .output("valid_detections: int32")
            .attr("pad_per_class: bool = false")
            .attr("clip_boxes: bool = true")
            .shape_fn(combined_nms_shape)
            .build(),
    );
    for name in ["ExtractGlimpse", "ExtractGlimpseV2"] {
        r.add(
            op(name)
                .input("input: float")
                .input("size: int32")
                .input("offsets: float")
                .output("glimpse: float")
                .attr("centered: bool = true")
                .attr("normalized: bool = true")
                .attr("uniform_noise: bool = true")
                .attr("noise: string = 'uniform'")
                .shape_fn(glimpse_shape)
                .build(),
        );
    }
}

/// The attrs the bounding-box samplers share (TensorFlow's defaults by `Default`).
#[derive(Clone, Debug)]
pub struct SampleBoxAttrs {
    /// The crop's width / height is drawn from this range.
    pub aspect_ratio_range: [f32; 2],
    /// The crop's area, as a fraction of the image's, lies in this range.
    pub area_range: [f32; 2],
    /// Draws before falling back to the whole image.
    pub max_attempts: i64,
    /// Whether no boxes means the whole image (else an error).
    pub use_image_if_no_bounding_boxes: bool,
}

impl Default for SampleBoxAttrs {
    fn default() -> Self {
        SampleBoxAttrs {
            aspect_ratio_range: [0.75, 1.33],
            area_range: [0.05, 1.0],
            max_attempts: 100,
            use_image_if_no_bounding_boxes: false,
        }
    }
}

impl SampleBoxAttrs {
    /// A node of the sampler `op` over `image_size`, `bounding_boxes` and
    /// `min_object_covered`, with these attrs.
    fn node(&self, s: &Scope, op: &str, [size, boxes, covered]: [Output; 3]) -> OpBuilder {
        s.op(op)
            .input(size)
            .input(boxes)
            .input(covered)
            .attr("aspect_ratio_range", attr::list_float(&self.aspect_ratio_range))
            .attr("area_range", attr::list_float(&self.area_range))
            .attr("max_attempts", attr::int(self.max_attempts))
            .attr("use_image_if_no_bounding_boxes", attr::bool(self.use_image_if_no_bounding_boxes))
    }
}

/// `SampleDistortedBoundingBoxV2` (what `tf.image.sample_distorted_bounding_box` builds):
/// (begin, size, bboxes) of a random crop of an image of `image_size` ([h, w, c]) covering
/// `min_object_covered` of one of `bounding_boxes` ([batch, n, 4] normalized).
pub fn sample_distorted_bounding_box_v2(
    s: &Scope,
    image_size: Output,
    bounding_boxes: Output,
    min_object_covered: Output,
    seed: (i64, i64),
    attrs: &SampleBoxAttrs,
) -> [Output; 3] {
    attrs
        .node(s, "SampleDistortedBoundingBoxV2", [image_size, bounding_boxes, min_object_covered])
        .attr("seed", attr::int(seed.0))
        .attr("seed2", attr::int(seed.1))
        .build()
        .first_outputs()
}

/// `StatelessSampleDistortedBoundingBox`: the same crop drawn from `seed` (int32 or int64 [2]).
pub fn stateless_sample_distorted_bounding_box(
    s: &Scope,
    image_size: Output,
    bounding_boxes: Output,
    min_object_covered: Output,
    seed: Output,
    attrs: &SampleBoxAttrs,
) -> [Output; 3] {
    let inputs = [image_size, bounding_boxes, min_object_covered];
    attrs.node(s, "StatelessSampleDistortedBoundingBox", inputs).input(seed).build().first_outputs()
}

/// The thresholds and sizes of [`combined_non_max_suppression`].
#[derive(Clone, Debug)]
pub struct CombinedNmsInputs {
    /// [batch, num_boxes, q, 4] corners (q = 1: shared by all classes).
    pub boxes: Output,
    /// [batch, num_boxes, num_classes].
    pub scores: Output,
    /// int32 scalar: the most boxes kept per class.
    pub max_output_size_per_class: Output,
    /// int32 scalar: the most boxes kept per image.
    pub max_total_size: Output,
    /// float scalar: the overlap above which a lower-scored box of the class is dropped.
    pub iou_threshold: Output,
    /// float scalar: boxes scored at or below it are never kept.
    pub score_threshold: Output,
}

/// `CombinedNonMaxSuppression`: [nmsed_boxes, nmsed_scores, nmsed_classes, valid_detections].
pub fn combined_non_max_suppression(
    s: &Scope,
    inputs: CombinedNmsInputs,
    pad_per_class: bool,
    clip_boxes: bool,
) -> [Output; 4] {
    let o = s
        .op("CombinedNonMaxSuppression")
        .input(inputs.boxes)
        .input(inputs.scores)
        .input(inputs.max_output_size_per_class)
        .input(inputs.max_total_size)
        .input(inputs.iou_threshold)
        .input(inputs.score_threshold)
        .attr("pad_per_class", attr::bool(pad_per_class))
        .attr("clip_boxes", attr::bool(clip_boxes))
        .build();
    o.first_outputs()
}

/// `ExtractGlimpseV2` as `tf.image.extract_glimpse` builds it: `size` ([h, w] int32) windows
/// at `offsets` ([batch, 2] y, x); `noise` is "uniform", "gaussian" or "zero".
pub fn extract_glimpse_v2(
    s: &Scope,
    input: Output,
    size: Output,
    offsets: Output,
    centered: bool,
    normalized: bool,
    noise: &str,
) -> Output {
    s.op("ExtractGlimpseV2")
        .input(input)
        .input(size)
        .input(offsets)
        .attr("centered", attr::bool(centered))
        .attr("normalized", attr::bool(normalized))
        .attr("uniform_noise", attr::bool(false))
        .attr("noise", attr::string(noise))
        .build()
        .output(0)
}

#[cfg(test)]
#[path = "detection_tests.rs"]
mod tests;
