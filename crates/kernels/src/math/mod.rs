//! Math kernels: broadcasting binary arithmetic, comparisons and logic, unary functions
//! and their gradient helpers, AddN, Select/SelectV2, Cast, BroadcastGradientArgs,
//! reductions and ArgMax/ArgMin.
//!
//! [`bcast`] (NumPy broadcasting with collapsed dimensions and parallel runs) and [`elem`]
//! (TensorFlow scalar semantics) are public for reuse by other kernel families.

mod addn;
mod argminmax;
pub mod bcast;
mod bcast_args;
mod binary;
mod cast;
mod cast_wide;
mod check_numerics;
mod common;
mod compare;
mod dtypes;
pub mod elem;
mod grad;
mod qr;
mod reduce;
pub mod reduce_loops;
mod select;
mod unary;
pub mod vmath;

use crate::KernelRegistry;

/// Registers this family's kernels.
pub(crate) fn register(r: &mut KernelRegistry) {
    ferroflow_core::register_modules! {
        r: addn, argminmax, bcast_args, binary, cast, check_numerics, compare, grad, qr, reduce, select, unary
    }
}

pub use bcast_args::broadcast_gradient_args;
