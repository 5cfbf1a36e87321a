//! Momentum: `accum = accum * momentum + grad; var -= lr * accum` (or Nesterov).

use ferroflow_core::Status;
use ferroflow_graph::{Operation, Output, Scope, Variable};

use super::{apply_op, hyper, slot, LearningRate};

/// `tf.compat.v1.train.MomentumOptimizer`.
#[derive(Clone, Debug)]
pub struct Momentum {
    /// Learning rate.
    pub learning_rate: LearningRate,
    /// Momentum.
    pub momentum: f64,
    /// Nesterov momentum.
    pub use_nesterov: bool,
}

impl Momentum {
    /// With learning rate and momentum.
    pub fn new(learning_rate: impl Into<LearningRate>, momentum: f64) -> Momentum {
        Momentum { learning_rate: learning_rate.into(), momentum, use_nesterov: false }
    }
}

impl Momentum {
    fn build(&self, s: &Scope, var: &Variable, grad: Output, indices: Option<Output>) -> Result<Operation, Status> {
        let accum = slot(s, var, "Momentum", 0.0)?;
        let lr = self.learning_rate.output(s, "learning_rate", var.dtype());
        let m = hyper(s, "momentum", self.momentum, var.dtype());
        let op = if indices.is_some() { "SparseApplyMomentum" } else { "ApplyMomentum" };
        let mut inputs = vec![accum.handle(), lr, grad];
        inputs.extend(indices);
        inputs.push(m);
        Ok(apply_op(s, op, var, inputs, &[("use_locking", false), ("use_nesterov", self.use_nesterov)]))
    }
}

super::dense_and_sparse_optimizer!(Momentum, "Momentum");
