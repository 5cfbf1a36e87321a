//! Gamma samples: `RandomGamma` (`tf.random.gamma`; output `shape + alpha.shape`) and the
//! stateless `StatelessRandomGammaV2` (a seed) and `StatelessRandomGammaV3` (key, counter
//! and algorithm: `tf.random.stateless_gamma`), whose `shape` must end with `alpha`'s.
//!
//! TensorFlow's numbers: Marsaglia and Tsang's transformation-rejection ("A simple method
//! for generating gamma variables", 2000) in f64 from normal and uniform doubles, with
//! `d = alpha - 1/3` (`alpha + 2/3` and a final factor `u^(1/alpha)` for `alpha < 1`), the
//! squeeze `u < 1 - 0.0331 x^4` before the logarithmic test, and `-log1p(-u)` for
//! `alpha == 1`. Each output element has 256 Philox calls of its own (see `rejection`).

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, Status};

use super::guarded::GuardedPhilox;
use super::philox::Philox;
use super::rejection::{check_type, draw_sample_major, stream_at, Buffered, MAX_TRIES, RESERVED_PER_OUTPUT};
use super::sampler::{sample_stateful, sample_stateless, Sampled};
use crate::{KernelRegistry, OpKernel};

/// The alpha (and output) types of the gamma samplers.
const GAMMA_TYPES: [DataType; 3] = [DataType::Half, DataType::Float, DataType::Double];

/// One gamma(alpha, 1) sample drawn from `gen` (the element's own stream).
pub(crate) fn gamma_sample(alpha: f64, gen: &mut Philox) -> f64 {
    if alpha == 1.0 {
        // Exponential.
        return -(-Buffered::default().uniform(gen)).ln_1p();
    }
    let below_one = alpha < 1.0;
    let d = alpha + if below_one { 2.0 / 3.0 } else { -1.0 / 3.0 };
    let c = 1.0 / 3.0 / d.sqrt();
    // Normals and uniforms come from separate buffers over the same stream.
    let (mut normals, mut uniforms) = (Buffered::default(), Buffered::default());
    for _ in 0..MAX_TRIES {
        let x = normals.normal(gen);
        let mut v = 1.0 + c * x;
        if v <= 0.0 {
            continue;
        }
        v = v * v * v;
        let u = uniforms.uniform(gen);
        if u < 1.0 - 0.0331 * (x * x) * (x * x) || u.ln() < 0.5 * x * x + d * (1.0 - v + v.ln()) {
            let mut res = d * v;
            if below_one {
                res *= uniforms.uniform(gen).powf(1.0 / alpha);
            }
            return res;
        }
    }
    f64::NAN
}

/// `per_alpha` samples of every alpha from `base`, sample-major (`[per_alpha, alphas]`).
pub(crate) fn draw_gamma(alphas: &[f64], per_alpha: usize, base: Philox) -> Vec<f64> {
    draw_sample_major(alphas.len(), per_alpha, |i| {
        let mut gen = stream_at(base, RESERVED_PER_OUTPUT, i);
        gamma_sample(alphas[i / per_alpha], &mut gen)
    })
}

/// What the gamma samplers draw: `shape` samples per alpha, of `dtype`.
fn gamma_of(dtype: DataType) -> Sampled<'static> {
    Sampled { what: "alpha", shape_what: "alpha", param: dtype, out: dtype }
}

op_kernel! {
    /// `RandomGamma`: stateful, seeded by the `seed`/`seed2` attrs.
    struct RandomGamma { dtype: DataType, gen: GuardedPhilox }
    fn compute(&self, ctx) {
        sample_stateful(ctx, &self.gen, &gamma_of(self.dtype), draw_gamma)
    }
}

op_kernel! {
    /// `StatelessRandomGammaV2` (`v3: false`: a seed) and `StatelessRandomGammaV3` (a key,
    /// counter and algorithm).
    struct StatelessGamma { dtype: DataType, v3: bool }
    fn compute(&self, ctx) {
        sample_stateless(ctx, self.v3, &gamma_of(self.dtype), draw_gamma)
    }
}

fn make_stateful(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let dtype = check_type(n, "T", &GAMMA_TYPES)?;
    Ok(Box::new(RandomGamma { dtype, gen: GuardedPhilox::from_node(n)? }))
}

fn make_stateless(n: &NodeDef, v3: bool) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(StatelessGamma { dtype: check_type(n, "dtype", &GAMMA_TYPES)?, v3 }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("RandomGamma", make_stateful);
    r.add("StatelessRandomGammaV2", |n| make_stateless(n, false));
    r.add("StatelessRandomGammaV3", |n| make_stateless(n, true));
}
