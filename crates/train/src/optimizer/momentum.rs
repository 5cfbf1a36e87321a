//! Momentum: `accum = accum * momentum + grad; var -= lr * accum` (or Nesterov).

use ferroflow_core::Status;
use ferroflow_graph::{Operation, Output, Scope, Variable};

use super::{apply_op, deduplicate, hyper, slot, Optimizer};

/// `tf.compat.v1.train.MomentumOptimizer`.
#[derive(Clone, Debug)]
pub struct Momentum {
    /// Learning rate.
    pub learning_rate: f64,
    /// Momentum.
    pub momentum: f64,
    /// Nesterov momentum.
    pub use_nesterov: bool,
}

impl Momentum {
    /// With learning rate and momentum.
    pub fn new(learning_rate: f64, momentum: f64) -> Momentum {
        Momentum { learning_rate, momentum, use_nesterov: false }
    }
}

impl Optimizer for Momentum {
    fn name(&self) -> &str {
        "Momentum"
    }
    fn apply_one(&self, s: &Scope, grad: &Output, var: &Variable) -> Result<Operation, Status> {
        let accum = slot(s, var, "Momentum", 0.0)?;
        let lr = hyper(s, "learning_rate", self.learning_rate, var.dtype());
        let m = hyper(s, "momentum", self.momentum, var.dtype());
        Ok(apply_op(
            s,
            "ApplyMomentum",
            var,
            vec![accum.handle(), lr, grad.clone(), m],
            &[("use_locking", false), ("use_nesterov", self.use_nesterov)],
        ))
    }
    fn apply_sparse_one(
        &self,
        s: &Scope,
        values: &Output,
        indices: &Output,
        var: &Variable,
    ) -> Result<Option<Operation>, Status> {
        let accum = slot(s, var, "Momentum", 0.0)?;
        let lr = hyper(s, "learning_rate", self.learning_rate, var.dtype());
        let m = hyper(s, "momentum", self.momentum, var.dtype());
        let (grad, indices) = deduplicate(s, values, indices);
        Ok(Some(apply_op(
            s,
            "SparseApplyMomentum",
            var,
            vec![accum.handle(), lr, grad, indices, m],
            &[("use_locking", false), ("use_nesterov", self.use_nesterov)],
        )))
    }
}
