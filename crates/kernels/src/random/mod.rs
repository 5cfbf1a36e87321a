//! Random kernels: TensorFlow's Philox4x32-10 generator and distributions, and the
//! stateful random ops built on them (`RandomUniform`, `RandomStandardNormal`,
//! `TruncatedNormal`, `RandomUniformInt`, `RandomShuffle`, `Multinomial`, `RandomGamma`,
//! `RandomPoissonV2`) and the stateless ones (`StatelessRandom*`, among them the gamma,
//! Poisson and binomial samplers), with `RandomGammaGrad` for the gamma samplers' gradient.

mod binomial;
mod candidate_samplers;
mod candidates;
pub mod distributions;
mod gamma;
mod gamma_grad;
pub mod guarded;
mod multinomial;
mod non_deterministic;
mod ops;
mod param_truncated;
pub mod philox;
mod poisson;
mod rejection;
mod rng_state;
mod sampler;
mod shuffle;
mod stateful;
mod stateless;

pub use gamma_grad::{gamma_sample_der_alpha, gamma_sample_der_alpha_f32};
pub use guarded::GuardedPhilox;
pub use ops::shape_from_tensor;
pub use philox::Philox;
pub use stateless::key_counter_from_seed;

use crate::KernelRegistry;

/// Registers this family's kernels.
pub(crate) fn register(r: &mut KernelRegistry) {
    binomial::register(r);
    candidate_samplers::register(r);
    candidates::register(r);
    gamma::register(r);
    gamma_grad::register(r);
    multinomial::register(r);
    non_deterministic::register(r);
    param_truncated::register(r);
    ops::register(r);
    poisson::register(r);
    rng_state::register(r);
    shuffle::register(r);
    stateful::register(r);
    stateless::register(r);
}
