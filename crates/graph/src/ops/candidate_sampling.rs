//! Candidate sampling ops (TensorFlow's definitions and builders): `LogUniformCandidateSampler`
//! and `ComputeAccidentalHits`, what `tf.nn.sampled_softmax_loss` and `tf.nn.nce_loss` build.

use ferroflow_core::{attr, NodeAttrs};

use crate::op_def::op;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{Dims, ShapeCtx};

type R = Result<Vec<Dims>, ferroflow_core::Status>;

fn sampler_shape(c: &ShapeCtx) -> R {
    let n = c.node.attr_int("num_sampled").unwrap_or(-1);
    let rows = c.input(0).and_then(|d| d.first().copied()).unwrap_or(-1);
    let num_true = c.node.attr_int("num_true").unwrap_or(-1);
    Ok(vec![Some(vec![n]), Some(vec![rows, num_true]), Some(vec![n])])
}

pub(crate) fn register(r: &mut OpRegistry) {
    r.add(
        op("LogUniformCandidateSampler")
            .input("true_classes: int64")
            .output("sampled_candidates: int64")
            .output("true_expected_count: float")
            .output("sampled_expected_count: float")
            .attr("num_true: int >= 1")
            .attr("num_sampled: int >= 1")
            .attr("unique: bool")
            .attr("range_max: int >= 1")
            .attr("seed: int = 0")
            .attr("seed2: int = 0")
            .stateful()
            .shape_fn(sampler_shape)
            .build(),
    );
    r.add(
        op("ComputeAccidentalHits")
            .input("true_classes: int64")
            .input("sampled_candidates: int64")
            .output("indices: int32")
            .output("ids: int64")
            .output("weights: float")
            .attr("num_true: int")
            .attr("seed: int = 0")
            .attr("seed2: int = 0")
            .shape_fn(|_| Ok(vec![Some(vec![-1]); 3]))
            .build(),
    );
}

/// `LogUniformCandidateSampler`: `num_sampled` classes of `[0, range_max)` drawn with
/// probability log((c + 2) / (c + 1)) / log(range_max + 1), and the expected counts of the
/// true and the sampled classes.
pub fn log_uniform_candidate_sampler(
    s: &Scope,
    true_classes: Output,
    num_true: i64,
    num_sampled: i64,
    unique: bool,
    range_max: i64,
    seed: (i64, i64),
) -> [Output; 3] {
    let o = s
        .op("LogUniformCandidateSampler")
        .input(true_classes)
        .attr("num_true", attr::int(num_true))
        .attr("num_sampled", attr::int(num_sampled))
        .attr("unique", attr::bool(unique))
        .attr("range_max", attr::int(range_max))
        .attr("seed", attr::int(seed.0))
        .attr("seed2", attr::int(seed.1))
        .build();
    [o.output(0), o.output(1), o.output(2)]
}

/// `ComputeAccidentalHits`: (row, sampled position, −FLT_MAX) for each sampled class that is
/// one of the row's `num_true` true classes.
pub fn compute_accidental_hits(s: &Scope, true_classes: Output, sampled: Output, num_true: i64) -> [Output; 3] {
    let o =
        s.op("ComputeAccidentalHits").input(true_classes).input(sampled).attr("num_true", attr::int(num_true)).build();
    [o.output(0), o.output(1), o.output(2)]
}
