//! Adadelta (`ApplyAdadelta`): per-element step sizes from running averages of squared
//! gradients and squared updates; sparse rows update through `SparseApplyAdadelta`.

use ferroflow_core::Status;
use ferroflow_graph::{Operation, Output, Scope, Variable};

use super::{apply_op, hyper, slot, LearningRate};

/// `tf.compat.v1.train.AdadeltaOptimizer`.
#[derive(Clone, Debug)]
pub struct Adadelta {
    /// Learning rate (TensorFlow's default 0.001).
    pub learning_rate: LearningRate,
    /// Decay rate (default 0.95).
    pub rho: f64,
    /// Epsilon (default 1e-8).
    pub epsilon: f64,
}

impl Adadelta {
    /// With TensorFlow's defaults for rho (0.95) and epsilon (1e-8).
    pub fn new(learning_rate: impl Into<LearningRate>) -> Adadelta {
        Adadelta { learning_rate: learning_rate.into(), rho: 0.95, epsilon: 1e-8 }
    }

    fn build(&self, s: &Scope, var: &Variable, grad: Output, indices: Option<Output>) -> Result<Operation, Status> {
        let accum = slot(s, var, "Adadelta", 0.0)?;
        let accum_update = slot(s, var, "Adadelta_1", 0.0)?;
        let d = var.dtype();
        let sparse = indices.is_some();
        let mut inputs = vec![
            accum.handle(),
            accum_update.handle(),
            self.learning_rate.output(s, "lr", d),
            hyper(s, "rho", self.rho, d),
            hyper(s, "epsilon", self.epsilon, d),
            grad,
        ];
        inputs.extend(indices);
        let op = if sparse { "SparseApplyAdadelta" } else { "ApplyAdadelta" };
        Ok(apply_op(s, op, var, inputs, &[("use_locking", false)]))
    }
}

super::dense_and_sparse_optimizer!(Adadelta, "Adadelta");
