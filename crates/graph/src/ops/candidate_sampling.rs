//! Candidate sampling ops (TensorFlow's definitions and builders): the samplers
//! `LogUniformCandidateSampler` (what `tf.nn.sampled_softmax_loss` and `tf.nn.nce_loss`
//! build by default), `UniformCandidateSampler`, `LearnedUnigramCandidateSampler`,
//! `ThreadUnsafeUnigramCandidateSampler`, `FixedUnigramCandidateSampler` and
//! `AllCandidateSampler`, and `ComputeAccidentalHits`.

use ferroflow_core::{attr, NodeAttrs};

use crate::op_def::{op, OpDefBuilder};
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{Dims, ShapeCtx};

type R = Result<Vec<Dims>, ferroflow_core::Status>;

fn sampler_shape(c: &ShapeCtx) -> R {
    let n = c.node.attr_int("num_sampled").unwrap_or(-1);
    let t = c.input(0);
    if let Some(d) = t.as_ref().filter(|d| d.len() != 2) {
        return Err(c.error(format!("Shape must be rank 2 but is rank {}", d.len())));
    }
    let rows = t.and_then(|d| d.first().copied()).unwrap_or(-1);
    let num_true = c.node.attr_int("num_true").unwrap_or(-1);
    Ok(vec![Some(vec![n]), Some(vec![rows, num_true]), Some(vec![n])])
}

/// The inputs, outputs and common attrs of a sampler op.
fn sampler(name: &str) -> OpDefBuilder {
    op(name)
        .input("true_classes: int64")
        .output("sampled_candidates: int64")
        .output("true_expected_count: float")
        .output("sampled_expected_count: float")
        .attr("num_true: int >= 1")
        .attr("num_sampled: int >= 1")
        .attr("unique: bool")
        .stateful()
        .shape_fn(sampler_shape)
}

pub(crate) fn register(r: &mut OpRegistry) {
    for name in [
        "UniformCandidateSampler",
        "LogUniformCandidateSampler",
        "LearnedUnigramCandidateSampler",
        "ThreadUnsafeUnigramCandidateSampler",
    ] {
        r.add(sampler(name).attr("range_max: int >= 1").attr("seed: int = 0").attr("seed2: int = 0").build());
    }
    r.add(
        sampler("FixedUnigramCandidateSampler")
            .attr("range_max: int >= 1")
            .attr("vocab_file: string = ''")
            .attr("distortion: float = 1.0")
            .attr("num_reserved_ids: int = 0")
            .attr("num_shards: int >= 1 = 1")
            .attr("shard: int >= 0 = 0")
            .attr("unigrams: list(float) = []")
            .attr("seed: int = 0")
            .attr("seed2: int = 0")
            .build(),
    );
    r.add(sampler("AllCandidateSampler").attr("seed: int = 0").attr("seed2: int = 0").build());
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

/// What every sampler takes: the true classes (`[batch, num_true]` int64), how many
/// classes to sample and whether without replacement.
#[derive(Clone, Debug)]
pub struct Sampling {
    /// The true classes of each row, `[batch, num_true]` int64.
    pub true_classes: Output,
    /// The true classes per row.
    pub num_true: i64,
    /// The classes to sample.
    pub num_sampled: i64,
    /// Sample without replacement.
    pub unique: bool,
}

/// A sampler node of type `op` with the input and attrs every sampler has.
fn sampler_node(s: &Scope, op: &str, a: Sampling) -> crate::scope::OpBuilder {
    s.op(op)
        .input(a.true_classes)
        .attr("num_true", attr::int(a.num_true))
        .attr("num_sampled", attr::int(a.num_sampled))
        .attr("unique", attr::bool(a.unique))
}

/// `LogUniformCandidateSampler`: `num_sampled` classes of `[0, range_max)` drawn with
/// probability log((c + 2) / (c + 1)) / log(range_max + 1), and the expected counts of the
/// true and the sampled classes.
pub fn log_uniform_candidate_sampler(s: &Scope, a: Sampling, range_max: i64, seed: (i64, i64)) -> [Output; 3] {
    candidate_sampler(s, "LogUniformCandidateSampler", a, range_max, seed)
}

/// `UniformCandidateSampler`, `LearnedUnigramCandidateSampler` or
/// `ThreadUnsafeUnigramCandidateSampler` (`op`), as [`log_uniform_candidate_sampler`]
/// builds its op.
pub fn candidate_sampler(s: &Scope, op: &str, a: Sampling, range_max: i64, seed: (i64, i64)) -> [Output; 3] {
    sampler_node(s, op, a)
        .attr("range_max", attr::int(range_max))
        .attr("seed", attr::int(seed.0))
        .attr("seed2", attr::int(seed.1))
        .build()
        .first_outputs()
}

/// Where `FixedUnigramCandidateSampler` takes its weights from and how it shapes them.
#[derive(Clone, Debug, Default)]
pub struct FixedUnigrams {
    /// The weights (or, when empty, `vocab_file`'s).
    pub unigrams: Vec<f32>,
    /// A CSV file whose lines' last fields are the weights.
    pub vocab_file: String,
    /// The power the weights are raised to (TensorFlow's default 1).
    pub distortion: f32,
    /// Leading classes of weight 0.
    pub num_reserved_ids: i64,
    /// The shards the classes are dealt to (1) and this sampler's (0).
    pub num_shards: i64,
    /// This sampler's shard.
    pub shard: i64,
}

/// `FixedUnigramCandidateSampler` over `range_max` classes weighted by `w`.
pub fn fixed_unigram_candidate_sampler(
    s: &Scope,
    a: Sampling,
    range_max: i64,
    w: &FixedUnigrams,
    seed: (i64, i64),
) -> [Output; 3] {
    sampler_node(s, "FixedUnigramCandidateSampler", a)
        .attr("range_max", attr::int(range_max))
        .attr("vocab_file", attr::string(&w.vocab_file))
        .attr("distortion", attr::float(w.distortion))
        .attr("num_reserved_ids", attr::int(w.num_reserved_ids))
        .attr("num_shards", attr::int(w.num_shards.max(1)))
        .attr("shard", attr::int(w.shard))
        .attr("unigrams", attr::list_float(&w.unigrams))
        .attr("seed", attr::int(seed.0))
        .attr("seed2", attr::int(seed.1))
        .build()
        .first_outputs()
}

/// `AllCandidateSampler`: the classes `0..num_sampled`, each with expected count 1.
pub fn all_candidate_sampler(s: &Scope, a: Sampling) -> [Output; 3] {
    sampler_node(s, "AllCandidateSampler", a).build().first_outputs()
}

/// `ComputeAccidentalHits`: (row, sampled position, −FLT_MAX) for each sampled class that is
/// one of the row's `num_true` true classes.
pub fn compute_accidental_hits(s: &Scope, true_classes: Output, sampled: Output, num_true: i64) -> [Output; 3] {
    let o =
        s.op("ComputeAccidentalHits").input(true_classes).input(sampled).attr("num_true", attr::int(num_true)).build();
    o.first_outputs()
}

#[cfg(test)]
mod tests {
    use ferroflow_core::DataType;

    use super::*;
    use crate::ops::placeholder;

    #[test]
    fn sampler_shapes_follow_tensorflow() {
        let s = Scope::new_root();
        let t = placeholder(&s, DataType::Int64, Some(&[-1, 2]));
        let of = |true_classes: &Output, num_sampled: i64, unique: bool| Sampling {
            true_classes: true_classes.clone(),
            num_true: 2,
            num_sampled,
            unique,
        };
        for op in ["UniformCandidateSampler", "LearnedUnigramCandidateSampler", "ThreadUnsafeUnigramCandidateSampler"] {
            let [c, te, se] = candidate_sampler(&s, op, of(&t, 5, true), 10, (1, 2));
            assert_eq!(s.graph().shape_of(&c), Some(vec![5]));
            assert_eq!(s.graph().shape_of(&te), Some(vec![-1, 2]));
            assert_eq!(s.graph().shape_of(&se), Some(vec![5]));
        }
        let w = FixedUnigrams { unigrams: vec![1.0, 2.0, 3.0], distortion: 1.0, num_shards: 1, ..Default::default() };
        let [c, te, _] = fixed_unigram_candidate_sampler(&s, of(&t, 4, false), 3, &w, (1, 2));
        assert_eq!((s.graph().shape_of(&c), s.graph().shape_of(&te)), (Some(vec![4]), Some(vec![-1, 2])));
        let [c, _, _] = all_candidate_sampler(&s, of(&t, 7, true));
        assert_eq!(s.graph().shape_of(&c), Some(vec![7]));
        s.status().unwrap();
        let s = Scope::new_root();
        let rank1 = placeholder(&s, DataType::Int64, Some(&[4]));
        candidate_sampler(&s, "UniformCandidateSampler", of(&rank1, 5, true), 10, (1, 2));
        let e = s.status().unwrap_err();
        assert!(e.message.contains("Shape must be rank 2 but is rank 1"), "{e}");
    }
}
