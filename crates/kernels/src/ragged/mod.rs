//! Ragged-tensor kernels: `RaggedTensorToTensor`, `RaggedTensorToSparse`, `RaggedTensorToVariant` and
//! `RaggedTensorFromVariant`.

mod to_sparse;
mod to_tensor;
mod variant;

use crate::KernelRegistry;

/// Registers this family's kernels.
pub(crate) fn register(r: &mut KernelRegistry) {
    to_tensor::register(r);
    to_sparse::register(r);
    variant::register(r);
}
