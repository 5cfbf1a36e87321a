//! The extended array kernels: splits, scans, top-k (exact and `ApproxTopK`), reversal and rolls, mirror padding,
//! N-d gathers and scatters, band and diagonal parts, sorted searches, clipping, einsum.

mod approx_top_k;
mod band_diag;
mod einsum;
mod einsum_parse;
mod gather_nd;
mod matrix_diag;
mod mirror_pad;
mod misc;
mod resource_nd;
mod reverse_roll;
mod scan;
mod search;
mod split;
mod top_k;
pub(crate) mod util;

use crate::KernelRegistry;

/// Registers the extended array kernels.
pub(crate) fn register(r: &mut KernelRegistry) {
    ferroflow_core::register_modules! {
        r: approx_top_k, band_diag, einsum, gather_nd, matrix_diag, mirror_pad, misc, resource_nd, reverse_roll, scan, search, split, top_k
    }
}
