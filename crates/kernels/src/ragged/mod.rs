//! Ragged-tensor kernels: `RaggedTensorToTensor`, `RaggedTensorToSparse`.

mod to_sparse;
mod to_tensor;

use crate::KernelRegistry;

/// Registers this family's kernels.
pub(crate) fn register(r: &mut KernelRegistry) {
    to_tensor::register(r);
    to_sparse::register(r);
}
