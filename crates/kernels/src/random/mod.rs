//! random kernels.

use crate::KernelRegistry;

/// Registers this family's kernels.
pub(crate) fn register(_r: &mut KernelRegistry) {}
