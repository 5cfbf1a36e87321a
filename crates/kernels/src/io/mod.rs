//! Graph plumbing kernels (Const, Placeholder, Identity, NoOp …) and `_Send`/`_Recv`.

mod plumbing;
mod sendrecv;

pub use plumbing::partial_shape_str;

use crate::KernelRegistry;

/// Registers this family's kernels (one `register` call per file).
pub(crate) fn register(r: &mut KernelRegistry) {
    plumbing::register(r);
    sendrecv::register(r);
}
