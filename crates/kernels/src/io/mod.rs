//! Graph plumbing kernels (Const, Placeholder, Identity, NoOp …) and `_Send`/`_Recv`.

mod sendrecv;

use crate::KernelRegistry;

/// Registers this family's kernels.
pub(crate) fn register(r: &mut KernelRegistry) {
    sendrecv::register(r);
}
