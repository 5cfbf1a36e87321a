//! RMSProp: `ms = rho*ms + (1-rho)*grad²; mom = momentum*mom + lr*grad/sqrt(ms+eps); var -= mom`.

use ferroflow_core::Status;
use ferroflow_graph::{Operation, Output, Scope, Variable};

use super::{apply_op, deduplicate, hyper, slot, Optimizer};

/// `tf.compat.v1.train.RMSPropOptimizer` (not centered).
#[derive(Clone, Debug)]
pub struct RmsProp {
    /// Learning rate.
    pub learning_rate: f64,
    /// Discount (TensorFlow's `decay`, default 0.9).
    pub decay: f64,
    /// Momentum (default 0).
    pub momentum: f64,
    /// Epsilon (default 1e-10).
    pub epsilon: f64,
}

impl RmsProp {
    /// With TensorFlow's defaults: decay 0.9, momentum 0, epsilon 1e-10.
    pub fn new(learning_rate: f64) -> RmsProp {
        RmsProp { learning_rate, decay: 0.9, momentum: 0.0, epsilon: 1e-10 }
    }
}

impl Optimizer for RmsProp {
    fn name(&self) -> &str {
        "RMSProp"
    }
    fn apply_one(&self, s: &Scope, grad: &Output, var: &Variable) -> Result<Operation, Status> {
        // TensorFlow initializes the mean square slot "RMSProp" to ones and "RMSProp_1" to zeros.
        let ms = slot(s, var, "RMSProp", 1.0)?;
        let mom = slot(s, var, "RMSProp_1", 0.0)?;
        let d = var.dtype();
        let inputs = vec![
            ms.handle(),
            mom.handle(),
            hyper(s, "learning_rate", self.learning_rate, d),
            hyper(s, "decay", self.decay, d),
            hyper(s, "momentum", self.momentum, d),
            hyper(s, "epsilon", self.epsilon, d),
            grad.clone(),
        ];
        Ok(apply_op(s, "ApplyRMSProp", var, inputs, &[("use_locking", false)]))
    }
    fn apply_sparse_one(
        &self,
        s: &Scope,
        values: &Output,
        indices: &Output,
        var: &Variable,
    ) -> Result<Option<Operation>, Status> {
        let ms = slot(s, var, "RMSProp", 1.0)?;
        let mom = slot(s, var, "RMSProp_1", 0.0)?;
        let d = var.dtype();
        let (grad, indices) = deduplicate(s, values, indices);
        let inputs = vec![
            ms.handle(),
            mom.handle(),
            hyper(s, "learning_rate", self.learning_rate, d),
            hyper(s, "decay", self.decay, d),
            hyper(s, "momentum", self.momentum, d),
            hyper(s, "epsilon", self.epsilon, d),
            grad,
            indices,
        ];
        Ok(Some(apply_op(s, "SparseApplyRMSProp", var, inputs, &[("use_locking", false)])))
    }
}
