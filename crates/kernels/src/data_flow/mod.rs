//! Data-flow kernels for synchronous training: conditional accumulators
//! (`ConditionalAccumulator`, `SparseConditionalAccumulator`, `AccumulatorApplyGradient`,
//! `SparseAccumulatorTakeGradient`, …)
//! and FIFO queues (`FIFOQueueV2`, `QueueEnqueueV2`, `QueueDequeueManyV2`, …), in both
//! the resource-handle and the ref-handle forms; TensorFlow's TensorList ops; lookup tables
//! (`HashTableV2`, `MutableHashTableV2`, `LookupTableFindV2`, …); TensorArrays
//! (`TensorArrayV3` and its ops) and stacks (`StackV2`, …) in the step's container. Blocking ops are asynchronous kernels:
//! a waiting op parks inside its resource and is completed by whoever satisfies it, by
//! the step's cancellation, or by a deadline.

mod accumulator;
mod accumulator_ops;
pub(crate) mod handles;
mod lookup_ops;
pub mod lookup_table;
mod lookup_text_init;
pub mod metrics;
mod mutex;
pub mod optional;
#[doc(hidden)]
pub mod queue;
mod queue_ops;
mod queue_pad;
pub mod queue_store;
mod sparse_accumulator;
mod stack;
pub mod tensor_array;
mod tensor_array_bulk;
mod tensor_array_ops;
pub(crate) mod tensor_list;
mod tensor_list_bulk;
mod waiters;

pub use accumulator::{stale_gradients_dropped_total, AccumulatorKind, ConditionalAccumulator};
pub use accumulator_ops::ACCUMULATOR_TYPE_NAME;
pub use queue::{FifoQueue, Tuple};
pub use queue_ops::QUEUE_TYPE_NAME;
pub use sparse_accumulator::SparseGradient;

use crate::KernelRegistry;

/// Registers this family's kernels.
pub(crate) fn register(r: &mut KernelRegistry) {
    ferroflow_core::register_modules! {
        r: accumulator_ops, mutex, queue_ops, lookup_ops, optional, stack, tensor_array_ops, tensor_list, tensor_list_bulk
    }
}
