//! Graph plumbing kernels (Const, Placeholder, Identity, NoOp …) and `_Send`/`_Recv`.

use crate::KernelRegistry;

/// Registers this family's kernels.
pub(crate) fn register(_r: &mut KernelRegistry) {}
