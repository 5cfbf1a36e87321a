//! Plain gradient descent: `var -= lr * grad` (`ApplyGradientDescent`).

use ferroflow_core::Status;
use ferroflow_graph::{Operation, Output, Scope, Variable};

use super::{apply_op, hyper, Optimizer};

/// `tf.compat.v1.train.GradientDescentOptimizer`.
#[derive(Clone, Debug)]
pub struct GradientDescent {
    /// Learning rate.
    pub learning_rate: f64,
}

impl GradientDescent {
    /// With the given learning rate.
    pub fn new(learning_rate: f64) -> GradientDescent {
        GradientDescent { learning_rate }
    }
}

impl Optimizer for GradientDescent {
    fn name(&self) -> &str {
        "GradientDescent"
    }
    fn apply_one(&self, s: &Scope, grad: &Output, var: &Variable) -> Result<Operation, Status> {
        let lr = hyper(s, "learning_rate", self.learning_rate, var.dtype());
        Ok(apply_op(s, "ApplyGradientDescent", var, vec![lr, grad.clone()], &[("use_locking", false)]))
    }
}
