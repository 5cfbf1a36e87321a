//! Ragged-tensor kernels: `RaggedTensorToTensor`.

mod to_tensor;

use crate::KernelRegistry;

/// Registers this family's kernels.
pub(crate) fn register(r: &mut KernelRegistry) {
    to_tensor::register(r);
}
