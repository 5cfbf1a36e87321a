//! `Multinomial` (`tf.random.categorical`) and `StatelessMultinomial`
//! (`tf.random.stateless_categorical`): `num_samples` class indices per row of `logits`
//! `[batch, classes]`, drawn with probabilities `softmax(logits)`.
//!
//! The numbers are TensorFlow's: per row, the unnormalized CDF of `exp(logit - max)` over the
//! finite logits (in f64; a non-finite logit is never drawn), then for each sample a double
//! `u` from two 32-bit Philox samples and the first class whose CDF exceeds
//! `u * total`. The stream is reserved as TensorFlow reserves it (`batch * 2 * ceil4(samples)`
//! outputs at 256 calls each), and rows consume it one after another, so outputs equal
//! TensorFlow's whenever TensorFlow runs the op in one shard (every input below ~10,000 units
//! of its cost estimate). Larger inputs are split across threads here at row boundaries
//! without changing the numbers, so ferroflow's result does not depend on the host's cores.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};
use rayon::prelude::*;

use super::guarded::GuardedPhilox;
use super::philox::{u64_to_f64, Philox, SingleSample};
use super::stateless::{key_counter_from_seed, seed_of};
use crate::{KernelRegistry, OpContext, OpKernel};

/// Samples per row above which rows are drawn in parallel.
const PAR_MIN_SAMPLES: usize = 1 << 14;

struct MultinomialOp {
    /// The stateful op's generator; `None` for the stateless op (seeded per run).
    gen: Option<GuardedPhilox>,
    out: DataType,
}

/// Where a run's stream comes from: the stateful op's shared generator, or the stateless
/// op's seed.
enum Source<'a> {
    Guarded(&'a GuardedPhilox),
    Seeded(Philox),
}

/// The class indices of one row: `samples` draws from `stream`, which starts where this
/// row's draws start.
fn sample_row(logits: &[f64], cdf: &mut [f64], samples: usize, mut stream: Philox, skip_u32: usize, out: &mut [i64]) {
    let max = logits.iter().filter(|x| x.is_finite()).fold(f64::MIN, |m, &x| m.max(x));
    let mut total = 0.0;
    for (c, &x) in cdf.iter_mut().zip(logits) {
        if x.is_finite() {
            total += (x - max).exp();
        }
        *c = total;
    }
    let mut single = SingleSample::new(&mut stream);
    for _ in 0..skip_u32 {
        single.next_u32();
    }
    for o in out.iter_mut().take(samples) {
        let x0 = single.next_u32();
        let x1 = single.next_u32();
        let find = u64_to_f64(x0, x1) * total;
        // The first class whose CDF is greater than `find` (`std::upper_bound`).
        *o = cdf.partition_point(|&c| c <= find) as i64;
    }
}

/// Draws `[batch, samples]` indices from `base`, the start of the reserved stream.
fn draw(logits: &[f64], batch: usize, classes: usize, samples: usize, base: Philox) -> Vec<i64> {
    let mut out = vec![0i64; batch * samples];
    // Row `b` starts at 32-bit sample `b * 2 * samples` of the stream: skip whole Philox
    // calls (four samples each), then the remainder.
    let row = |b: usize, out_row: &mut [i64], cdf: &mut Vec<f64>| {
        let start = b * 2 * samples;
        let mut stream = base;
        stream.skip((start / 4) as u64);
        sample_row(&logits[b * classes..(b + 1) * classes], cdf, samples, stream, start % 4, out_row);
    };
    if batch * samples >= PAR_MIN_SAMPLES && batch > 1 {
        out.par_chunks_mut(samples).enumerate().for_each_init(|| vec![0f64; classes], |cdf, (b, o)| row(b, o, cdf));
    } else {
        let mut cdf = vec![0f64; classes];
        for (b, o) in out.chunks_mut(samples.max(1)).enumerate().take(batch) {
            row(b, o, &mut cdf);
        }
    }
    out
}

impl OpKernel for MultinomialOp {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let logits = ctx.input(0)?;
        let num_samples = ctx.input(1)?;
        // The stateless op's stream is a function of its seed only (checked first, as in
        // TensorFlow).
        let source = match &self.gen {
            Some(g) => Source::Guarded(g),
            None => Source::Seeded(key_counter_from_seed(seed_of(ctx, &ctx.input(2)?)?)),
        };
        if logits.rank() != 2 {
            return Err(ctx.error(format!("logits should be a matrix, got shape {}", logits.shape())));
        }
        if num_samples.rank() != 0 {
            return Err(ctx.error(format!("num_samples should be a scalar, got shape {}", num_samples.shape())));
        }
        if !matches!(logits.dtype(), DataType::Float | DataType::Double | DataType::Half | DataType::BFloat16) {
            return Err(ctx.error(format!("logits must be a floating-point tensor, got {}", logits.dtype())));
        }
        let ns = num_samples.scalar_value::<i32>()?;
        if ns < 0 {
            return Err(ctx.error(format!("num_samples should be non-negative, got {ns}")));
        }
        let (batch, classes, samples) = (logits.dims()[0], logits.dims()[1], ns as usize);
        if classes == 0 {
            return Err(ctx.error("num_classes should be positive, got 0"));
        }
        let dims = [batch, samples];
        ferroflow_core::check_tensor_alloc(&dims, self.out).map_err(|e| ctx.error_with(e))?;
        let indices = if batch * samples == 0 {
            Vec::new()
        } else {
            // TensorFlow reserves two samples per draw, rounded up to four draws per row.
            let per_row = samples.div_ceil(4) * 4 * 2;
            let stream = match source {
                Source::Guarded(g) => g.reserve_outputs(batch * per_row, 256),
                Source::Seeded(s) => s,
            };
            draw(&logits.to_f64_vec()?, batch, classes, samples, stream)
        };
        let out = match self.out {
            DataType::Int32 => Tensor::new(dims.to_vec(), indices.into_iter().map(|i| i as i32).collect::<Vec<_>>())?,
            _ => Tensor::new(dims.to_vec(), indices)?,
        };
        ctx.set_output(0, out)
    }
}

fn make(node: &NodeDef, stateful: bool) -> Result<Box<dyn OpKernel>, Status> {
    let out = node.attr_type("output_dtype")?;
    if out != DataType::Int32 && out != DataType::Int64 {
        return Err(node.node_error(format!("output_dtype must be int32 or int64, got {out}")));
    }
    let gen = if stateful { Some(GuardedPhilox::from_node(node)?) } else { None };
    Ok(Box::new(MultinomialOp { gen, out }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("Multinomial", |n| make(n, true));
    r.add("StatelessMultinomial", |n| make(n, false));
}
