//! Candidate sampling for sampled losses (`tf.nn.sampled_softmax_loss`, `tf.nn.nce_loss`):
//! the kernel every `*CandidateSampler` op shares (TensorFlow's `BaseCandidateSamplerOp`:
//! checks, the Philox stream reservation, the draws with the `unique` rejection of repeats,
//! the expected counts, then the sampler's update from the true classes), the log-uniform
//! (Zipfian) sampler of `LogUniformCandidateSampler`, and `ComputeAccidentalHits` (the
//! sampled classes that are a row's true classes, to be masked out of its logits). The
//! other samplers are in `candidate_samplers`.

use std::collections::{HashMap, HashSet};

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use super::guarded::GuardedPhilox;
use super::philox::{u32_to_f32, u64_to_f64, Philox, SingleSample};
use crate::{KernelRegistry, OpContext, OpKernel};

/// TensorFlow's `SimplePhilox`: 32-bit samples one at a time, and the numbers made of them.
pub(super) struct SimplePhilox<'a>(SingleSample<'a>);

impl<'a> SimplePhilox<'a> {
    pub(super) fn new(gen: &'a mut Philox) -> SimplePhilox<'a> {
        SimplePhilox(SingleSample::new(gen))
    }

    pub(super) fn rand32(&mut self) -> u32 {
        self.0.next_u32()
    }

    /// 64 bits, the first sample low.
    pub(super) fn rand64(&mut self) -> u64 {
        let lo = self.rand32();
        u64::from(lo) | (u64::from(self.rand32()) << 32)
    }

    /// A float in [0, 1) from one sample.
    pub(super) fn rand_float(&mut self) -> f32 {
        u32_to_f32(self.rand32())
    }

    /// A double in [0, 1) from two samples.
    pub(super) fn rand_double(&mut self) -> f64 {
        let x0 = self.rand32();
        u64_to_f64(x0, self.rand32())
    }

    /// An exactly uniform integer in [0, n) (`ExactUniformInt`: masked for powers of two,
    /// else samples below `2^32 mod n` rejected).
    pub(super) fn uniform(&mut self, n: u32) -> u32 {
        // The result is below `n`, so it fits.
        exact_uniform(u64::from(n), u64::from(u32::MAX), || u64::from(self.rand32())) as u32
    }

    /// [`SimplePhilox::uniform`] on 64 bits.
    pub(super) fn uniform64(&mut self, n: u64) -> u64 {
        exact_uniform(n, u64::MAX, || self.rand64())
    }
}

/// An exactly uniform integer in [0, n) from `draw`, whose samples are uniform in
/// [0, max]: one sample masked when `n` is a power of two (one drawn and dropped for 0),
/// else samples below `(max mod n) + 1` rejected and the first other one taken mod `n`.
fn exact_uniform(n: u64, max: u64, mut draw: impl FnMut() -> u64) -> u64 {
    if n == 0 {
        let _ = draw();
        0
    } else if n & (n - 1) == 0 {
        draw() & (n - 1)
    } else {
        let rem = (max % n) + 1;
        loop {
            let r = draw();
            if r >= rem {
                return r % n;
            }
        }
    }
}

/// The draws of one run and the expected counts of the sampled and the true classes.
pub(super) struct Drawn {
    pub sampled: Vec<i64>,
    pub sampled_expected: Vec<f32>,
    pub true_expected: Vec<f32>,
}

/// A distribution over `[0, range)` (TensorFlow's `RangeSampler`).
pub(super) trait RangeSampler: Send + Sync {
    /// The number of classes.
    fn range(&self) -> i64;
    /// `n` draws (distinct when `unique`) and the expected counts of them and of `truth`.
    fn draw(&self, rnd: &mut SimplePhilox, unique: bool, n: usize, truth: &[i64]) -> Result<Drawn, String>;
    /// Learns from a run's true classes (the learned unigram samplers).
    fn update(&self, _truth: &[i64]) {}
}

/// The expected count of a class of probability `p` among `batch` draws that took `tries`
/// tries (TensorFlow's `ExpectedCountHelper`: `1 - (1 - p)^tries` when repeats were
/// rejected).
fn expected_count(p: f32, batch: usize, tries: usize) -> f32 {
    if tries == batch {
        p * batch as f32
    } else {
        -((tries as f32) * (-p).ln_1p()).exp_m1()
    }
}

/// TensorFlow's `SampleBatchGetExpectedCount`: `n` calls of `sample` (with `unique`, as many
/// as it takes to get `n` distinct classes; TensorFlow gives up at 2^31 - 1 tries) and the
/// expected counts from `probability`.
pub(super) fn draw_with(
    rnd: &mut SimplePhilox,
    unique: bool,
    n: usize,
    truth: &[i64],
    mut sample: impl FnMut(&mut SimplePhilox) -> i64,
    probability: impl Fn(i64) -> f32,
) -> Result<Drawn, String> {
    let mut sampled = Vec::with_capacity(n);
    let tries = if unique {
        let mut used = HashSet::with_capacity(n);
        let mut tries = 0usize;
        while sampled.len() < n {
            tries += 1;
            if tries >= i32::MAX as usize {
                return Err(format!("gave up drawing {n} distinct classes after {tries} tries"));
            }
            let v = sample(rnd);
            if used.insert(v) {
                sampled.push(v);
            }
        }
        tries
    } else {
        sampled.extend((0..n).map(|_| sample(rnd)));
        n
    };
    let sampled_expected = sampled.iter().map(|&v| expected_count(probability(v), n, tries)).collect();
    let true_expected = truth.iter().map(|&v| expected_count(probability(v), n, tries)).collect();
    Ok(Drawn { sampled, sampled_expected, true_expected })
}

/// The kernel of every candidate sampler op (TensorFlow's `BaseCandidateSamplerOp`).
pub(super) struct CandidateSampler {
    num_true: usize,
    num_sampled: usize,
    unique: bool,
    sampler: Box<dyn RangeSampler>,
    gen: GuardedPhilox,
}

/// The kernel of node `n` drawing from `sampler`.
pub(super) fn sampler_kernel(n: &NodeDef, sampler: Box<dyn RangeSampler>) -> Result<Box<dyn OpKernel>, Status> {
    let (num_true, num_sampled) = (n.attr_int("num_true")?, n.attr_int("num_sampled")?);
    if num_true < 1 || num_sampled < 1 {
        return Err(n.node_error(format!("num_true ({num_true}) and num_sampled ({num_sampled}) must be at least 1")));
    }
    Ok(Box::new(CandidateSampler {
        num_true: num_true as usize,
        num_sampled: num_sampled as usize,
        unique: n.attr_bool("unique")?,
        sampler,
        gen: GuardedPhilox::from_node(n)?,
    }))
}

/// `range_max`, which must be positive.
pub(super) fn range_max(n: &NodeDef) -> Result<i64, Status> {
    let range = n.attr_int("range_max")?;
    if range <= 0 {
        return Err(n.node_error("range_max must be positive"));
    }
    Ok(range)
}

impl OpKernel for CandidateSampler {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let t = ctx.input(0)?;
        if t.rank() != 2 {
            return Err(ctx.error("true_classes must be a matrix"));
        }
        if t.dims()[1] != self.num_true {
            return Err(ctx.error(format!(
                "true_classes must have num_true columns, expected: {} was: {}",
                t.dims()[1],
                self.num_true
            )));
        }
        if t.dtype() != DataType::Int64 {
            return Err(ctx.error(format!("true_classes must be int64, got {}", t.dtype())));
        }
        let range = self.sampler.range();
        if self.unique && self.num_sampled as i64 > range {
            return Err(ctx.error("Sampler's range is too small."));
        }
        let truth = t.as_slice::<i64>()?;
        if let Some(&c) = truth.iter().find(|&&c| c < 0 || c >= range) {
            return Err(ctx.error(format!("`true_candidate` out of range [0, {range}), received {c}")));
        }
        // TensorFlow reserves 2048 32-bit samples per sampled class.
        let mut local = self.gen.reserve128((2048 * self.num_sampled as u64).div_ceil(4));
        let mut rnd = SimplePhilox::new(&mut local);
        let d = self.sampler.draw(&mut rnd, self.unique, self.num_sampled, truth).map_err(|e| ctx.error(e))?;
        self.sampler.update(truth);
        ctx.set_output(0, Tensor::new(vec![self.num_sampled], d.sampled)?)?;
        ctx.set_output(1, Tensor::new(t.dims().to_vec(), d.true_expected)?)?;
        ctx.set_output(2, Tensor::new(vec![self.num_sampled], d.sampled_expected)?)
    }
}

/// Class `c` with probability log((c + 2) / (c + 1)) / log(range + 1).
struct LogUniform {
    range: i64,
    log_range: f64,
}

impl RangeSampler for LogUniform {
    fn range(&self) -> i64 {
        self.range
    }

    fn draw(&self, rnd: &mut SimplePhilox, unique: bool, n: usize, truth: &[i64]) -> Result<Drawn, String> {
        let sample = |rnd: &mut SimplePhilox| ((rnd.rand_double() * self.log_range).exp() as i64 - 1) % self.range;
        let probability = |v: i64| (((v as f64 + 2.0) / (v as f64 + 1.0)).ln() / self.log_range) as f32;
        draw_with(rnd, unique, n, truth, sample, probability)
    }
}

fn make_log_uniform(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let range = range_max(n)?;
    sampler_kernel(n, Box::new(LogUniform { range, log_range: (range as f64).ln_1p() }))
}

struct AccidentalHits {
    num_true: usize,
}

fn make_hits(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(AccidentalHits { num_true: n.attr_int("num_true")?.max(0) as usize }))
}

impl OpKernel for AccidentalHits {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let t = ctx.input(0)?;
        if t.rank() != 2 || t.dims()[1] != self.num_true || t.dtype() != DataType::Int64 {
            return Err(ctx.error("true_candidates must be a batch_size * num_true matrix"));
        }
        let s = ctx.input(1)?;
        if s.rank() != 1 || s.dtype() != DataType::Int64 {
            return Err(
                ctx.error("sampled_candidates must be a vector, which is typically an output from CandidateSampler")
            );
        }
        // The last position of each sampled class.
        let pos: HashMap<i64, i64> = s.as_slice::<i64>()?.iter().enumerate().map(|(i, &c)| (c, i as i64)).collect();
        let (mut rows, mut ids) = (Vec::new(), Vec::new());
        for (k, c) in t.as_slice::<i64>()?.iter().enumerate() {
            if let Some(&p) = pos.get(c) {
                rows.push((k / self.num_true.max(1)) as i32);
                ids.push(p);
            }
        }
        let n = rows.len();
        ctx.set_output(0, Tensor::new(vec![n], rows)?)?;
        ctx.set_output(1, Tensor::new(vec![n], ids)?)?;
        ctx.set_output(2, Tensor::new(vec![n], vec![-f32::MAX; n])?)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("LogUniformCandidateSampler", make_log_uniform);
    r.add("ComputeAccidentalHits", make_hits);
}

#[cfg(test)]
mod tests {
    use ferroflow_core::{attr, Code, Tensor};

    use super::{expected_count, Philox, SimplePhilox};
    use crate::testutil::{node, run_kernel};

    fn sampler(num_sampled: i64, unique: bool, range: i64) -> ferroflow_core::proto::NodeDef {
        node(
            "LogUniformCandidateSampler",
            &[
                ("num_true", attr::int(1)),
                ("num_sampled", attr::int(num_sampled)),
                ("unique", attr::bool(unique)),
                ("range_max", attr::int(range)),
                ("seed", attr::int(3)),
                ("seed2", attr::int(4)),
            ],
        )
    }

    fn truth(v: &[i64]) -> Tensor {
        Tensor::new(vec![v.len(), 1], v.to_vec()).unwrap()
    }

    #[test]
    fn unique_draws_are_distinct_and_in_range() {
        let out = run_kernel(sampler(20, true, 20), vec![truth(&[0, 19])], 3).unwrap();
        let mut s = out[0].as_slice::<i64>().unwrap().to_vec();
        s.sort_unstable();
        assert_eq!(s, (0..20).collect::<Vec<i64>>());
        // Drawing all 20 classes takes more than 20 tries: each expected count is below 1.
        assert!(out[2].as_slice::<f32>().unwrap().iter().all(|&c| c > 0.0 && c <= 1.0));
        assert_eq!(out[1].dims(), &[2, 1]);
    }

    #[test]
    fn bad_inputs_are_invalid_arguments() {
        let e = run_kernel(sampler(3, false, 10), vec![truth(&[10])], 3).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument);
        assert!(e.message.contains("`true_candidate` out of range [0, 10), received 10"), "{e}");
        let e = run_kernel(sampler(11, true, 10), vec![truth(&[1])], 3).unwrap_err();
        assert!(e.message.contains("Sampler's range is too small."), "{e}");
        let e = run_kernel(sampler(3, false, 10), vec![Tensor::new(vec![2], vec![1i64, 2]).unwrap()], 3).unwrap_err();
        assert!(e.message.contains("true_classes must be a matrix"), "{e}");
    }

    #[test]
    fn exact_uniform_integers_reject_the_biased_low_samples() {
        // A power of two masks the sample; 3 rejects samples below 2^32 mod 3 + 1 = 2.
        let mut g = Philox::new(1, 2);
        let raw: Vec<u32> = {
            let mut r = SimplePhilox::new(&mut g);
            (0..8).map(|_| r.rand32()).collect()
        };
        let mut g = Philox::new(1, 2);
        let mut r = SimplePhilox::new(&mut g);
        assert_eq!(r.uniform(8), raw[0] & 7);
        let want = raw[1..].iter().find(|&&x| x >= 2).map(|&x| x % 3).unwrap();
        assert_eq!(r.uniform(3), want);
        // 64 bits: the first sample is the low half.
        let mut g = Philox::new(1, 2);
        let mut r = SimplePhilox::new(&mut g);
        assert_eq!(r.rand64(), u64::from(raw[0]) | (u64::from(raw[1]) << 32));
    }

    #[test]
    fn expected_counts_follow_tensorflow() {
        assert_eq!(expected_count(0.25, 4, 4), 1.0);
        // With rejections: 1 - (1 - p)^tries.
        let c = expected_count(0.5, 2, 3);
        assert!((c - 0.875).abs() < 1e-6, "{c}");
    }
}
