//! Math kernels: broadcasting binary arithmetic, comparisons and logic, unary functions
//! and their gradient helpers, AddN, Select/SelectV2, Cast, BroadcastGradientArgs,
//! reductions and ArgMax/ArgMin.
//!
//! [`bcast`] (NumPy broadcasting with collapsed dimensions and parallel runs) and [`elem`]
//! (TensorFlow scalar semantics) are public for reuse by other kernel families.

mod addn;
mod argminmax;
pub mod bcast;
hidden_mods! { bcast_args, bessel, cast, cast_wide, histogram_fixed_width, qr, special }
mod betainc;
mod binary;
mod binary_ext;
mod check_numerics;
mod common;
mod compare;
mod cross;
mod dtypes;
pub mod elem;
mod euclidean_norm;
mod grad;
mod l2_loss;
mod reduce;
mod reduce_bool;
pub mod reduce_loops;
mod select;
pub mod special_fns;
mod unary;
mod unary_ext;
pub mod vmath;

use crate::KernelRegistry;

/// Registers this family's kernels.
pub(crate) fn register(r: &mut KernelRegistry) {
    ferroflow_core::register_modules! {
        r: addn, argminmax, bcast_args, bessel, betainc, binary, binary_ext, cast, check_numerics, compare, cross, euclidean_norm, grad, histogram_fixed_width,
        l2_loss, qr, reduce, reduce_bool, select, special_fns, unary, unary_ext
    }
}

pub use bcast_args::broadcast_gradient_args;
