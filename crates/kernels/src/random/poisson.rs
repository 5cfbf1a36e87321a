//! Poisson samples: `RandomPoissonV2` (`tf.random.poisson`; output `shape + rate.shape`), the
//! deprecated `RandomPoisson` (rate and output of one type) and `StatelessRandomPoisson`
//! (`tf.random.stateless_poisson`; `shape` must end with `lam`'s).
//!
//! TensorFlow's numbers, in f64: for a rate below 10, Knuth's method (multiply uniforms until
//! the product falls to `e^-rate`); otherwise Hörmann's transformed rejection ("The
//! transformed rejection method for generating Poisson random variables", 1993) with
//! `b = 0.931 + 2.53 sqrt(rate)`, `a = -0.059 + 0.02483 b`, the box `|u| <= 0.43`,
//! `v <= 0.9277 - 3.6224 / (b - 2)`, draws above the output type's largest value retried;
//! an infinite rate gives the output type's infinity (0 for integers). Each output element
//! has 256 Philox calls of its own.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, Status};

use super::guarded::GuardedPhilox;
use super::philox::Philox;
use super::rejection::{
    check_type, draw_sample_major, highest, infinity, stream_at, Buffered, MAX_TRIES, RESERVED_PER_OUTPUT,
};
use super::sampler::{sample_stateful, sample_stateless, Sampled};
use crate::math::special::lgamma;
use crate::{KernelRegistry, OpKernel};

/// Rate and output types of `RandomPoissonV2` and `StatelessRandomPoisson`.
const TYPES: [DataType; 5] = [DataType::Half, DataType::Float, DataType::Double, DataType::Int32, DataType::Int64];
/// Rate (and output) types of the deprecated `RandomPoisson`.
const V1_TYPES: [DataType; 3] = [DataType::Half, DataType::Float, DataType::Double];

/// The output type's limits: its largest value and what an infinite rate gives.
#[derive(Clone, Copy)]
pub(crate) struct Limits {
    top: f64,
    inf: f64,
}

impl Limits {
    pub(crate) fn of(dtype: DataType) -> Limits {
        Limits { top: highest(dtype), inf: infinity(dtype) }
    }
}

/// One Poisson(rate) sample drawn from `gen`.
pub(crate) fn poisson_sample(rate: f64, lim: Limits, gen: &mut Philox) -> f64 {
    let top = lim.top;
    if rate == f64::INFINITY {
        // TensorFlow's special case: the output type's infinity (0 for integers).
        return lim.inf;
    }
    let mut uniforms = Buffered::default();
    if rate < 10.0 {
        // Knuth: the number of exponential(rate) gaps that fit in 1.
        let exp_neg_rate = (-rate).exp();
        let (mut prod, mut x) = (1.0, 0.0);
        for _ in 0..MAX_TRIES {
            prod *= uniforms.uniform(gen);
            if prod <= exp_neg_rate && x <= top {
                return x;
            }
            x += 1.0;
        }
        return f64::NAN;
    }
    if rate.is_nan() {
        // TensorFlow's loop never ends.
        return f64::NAN;
    }
    let log_rate = rate.ln();
    let b = 0.931 + 2.53 * rate.sqrt();
    let a = -0.059 + 0.02483 * b;
    let inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
    for _ in 0..MAX_TRIES {
        let u = uniforms.uniform(gen) - 0.5;
        let v = uniforms.uniform(gen);
        let u_shifted = 0.5 - u.abs();
        let k = ((2.0 * a / u_shifted + b) * u + rate + 0.43).floor();
        if k > top {
            continue;
        }
        if u_shifted >= 0.07 && v <= 0.9277 - 3.6224 / (b - 2.0) {
            return k;
        }
        if k < 0.0 || (u_shifted < 0.013 && v > u_shifted) {
            continue;
        }
        let s = (v * inv_alpha / (a / (u_shifted * u_shifted) + b)).ln();
        let t = -rate + k * log_rate - lgamma(k + 1.0);
        if s <= t {
            return k;
        }
    }
    f64::NAN
}

/// `per_rate` samples of every rate from `base`, sample-major (`[per_rate, rates]`).
pub(crate) fn draw_poisson(rates: &[f64], per_rate: usize, out: DataType, base: Philox) -> Vec<f64> {
    let lim = Limits::of(out);
    draw_sample_major(rates.len(), per_rate, |i| {
        let mut gen = stream_at(base, RESERVED_PER_OUTPUT, i);
        poisson_sample(rates[i / per_rate], lim, &mut gen)
    })
}

/// What the Poisson samplers draw: `rate` rates, `out` outputs.
fn poisson_of(rate: DataType, out: DataType) -> Sampled<'static> {
    Sampled { what: "rate", shape_what: "lam", param: rate, out }
}

op_kernel! {
    /// `RandomPoissonV2` and `RandomPoisson`: stateful, seeded by the `seed`/`seed2` attrs.
    struct RandomPoisson { rate: DataType, out: DataType, gen: GuardedPhilox }
    fn compute(&self, ctx) {
        let out = self.out;
        sample_stateful(ctx, &self.gen, &poisson_of(self.rate, out), |r, per, base| draw_poisson(r, per, out, base))
    }
}

op_kernel! {
    /// `StatelessRandomPoisson`: a function of `seed` only.
    struct StatelessPoisson { rate: DataType, out: DataType }
    fn compute(&self, ctx) {
        let out = self.out;
        sample_stateless(ctx, false, &poisson_of(self.rate, out), |r, per, base| draw_poisson(r, per, out, base))
    }
}

fn make_v2(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let (rate, out) = (check_type(n, "R", &TYPES)?, check_type(n, "dtype", &TYPES)?);
    Ok(Box::new(RandomPoisson { rate, out, gen: GuardedPhilox::from_node(n)? }))
}

fn make_v1(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let t = check_type(n, "dtype", &V1_TYPES)?;
    Ok(Box::new(RandomPoisson { rate: t, out: t, gen: GuardedPhilox::from_node(n)? }))
}

fn make_stateless(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let (rate, out) = (check_type(n, "Rtype", &TYPES)?, check_type(n, "dtype", &TYPES)?);
    Ok(Box::new(StatelessPoisson { rate, out }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("RandomPoissonV2", make_v2);
    r.add("RandomPoisson", make_v1);
    r.add("StatelessRandomPoisson", make_stateless);
}
