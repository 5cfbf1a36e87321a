//! Random kernels: TensorFlow's Philox4x32-10 generator and distributions, and the
//! stateful random ops built on them (`RandomUniform`, `RandomStandardNormal`,
//! `TruncatedNormal`, `RandomUniformInt`, `RandomShuffle`, `Multinomial`) and the stateless ones.

pub mod distributions;
pub mod guarded;
mod multinomial;
mod ops;
pub mod philox;
mod shuffle;
mod stateless;

pub use guarded::GuardedPhilox;
pub use ops::shape_from_tensor;
pub use philox::Philox;
pub use stateless::key_counter_from_seed;

use crate::KernelRegistry;

/// Registers this family's kernels.
pub(crate) fn register(r: &mut KernelRegistry) {
    multinomial::register(r);
    ops::register(r);
    shuffle::register(r);
    stateless::register(r);
}
