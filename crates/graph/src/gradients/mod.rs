//! Symbolic gradients: `gradients(ys, xs, grad_ys)` adds the gradient subgraph the way
//! `tf.gradients` does — summing over multiple paths, stopping at `StopGradient` and at
//! non-differentiable ops — using one registered gradient function per op type.

mod array_grad;
mod builder;
mod math_grad;
mod nn_grad;
mod registry;

pub use builder::{gradients, gradients_with_options, GradOptions};
pub use registry::{grad_registry, GradFn, GradOp, GradRegistry};
