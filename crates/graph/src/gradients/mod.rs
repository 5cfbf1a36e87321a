//! Symbolic gradients: `gradients(ys, xs, grad_ys)` adds the gradient subgraph the way
//! `tf.gradients` does — summing over multiple paths, stopping at `StopGradient` and at
//! non-differentiable ops — using one registered gradient function per op type.

mod array_grad;
mod array_grad_einsum;
mod array_grad_ext;
mod array_grad_gather;
mod array_grad_slice;
mod array_grad_space;
mod array_grad_sparse;
mod builder;
mod control_flow_grad;
mod ctc_grad;
mod decomposition_grad;
mod dilation_grad;
mod image_grad;
mod linalg_grad;
mod linalg_more_grad;
mod math_grad;
mod math_grad_binary;
mod math_grad_ext;
mod math_grad_reduce;
mod math_grad_unary;
mod nn_grad;
mod nn_grad_activation;
mod nn_grad_conv;
mod nn_grad_matmul;
mod nn_grad_norm;
mod nn_grad_volume;
mod qdq_grad;
mod quant_grad;
mod ragged_grad;
mod random_grad;
mod registry;
mod sparse_combine_grad;
mod sparse_cwise_grad;
mod sparse_grad;
mod special_grad;
mod table;
mod tensor_array_grad;

pub use array_grad_sparse::{indexed_slices, INDEXED_SLICES_ATTR};
pub use builder::{gradients, gradients_with_options, GradOptions};
pub use registry::{grad_registry, GradFn, GradOp, GradRegistry, Grads};
