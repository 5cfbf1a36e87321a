//! Plain gradient descent: `var -= lr * grad` (`ApplyGradientDescent`).

use ferroflow_core::Status;
use ferroflow_graph::{Operation, Output, Scope, Variable};

use super::{apply_op, LearningRate, Optimizer, SparseGrad};

/// `tf.compat.v1.train.GradientDescentOptimizer`.
#[derive(Clone, Debug)]
pub struct GradientDescent {
    /// Learning rate.
    pub learning_rate: LearningRate,
}

impl GradientDescent {
    /// With the given learning rate.
    pub fn new(learning_rate: impl Into<LearningRate>) -> GradientDescent {
        GradientDescent { learning_rate: learning_rate.into() }
    }
}

impl Optimizer for GradientDescent {
    fn name(&self) -> &str {
        "GradientDescent"
    }
    fn apply_one(&self, s: &Scope, grad: &Output, var: &Variable) -> Result<Operation, Status> {
        let lr = self.learning_rate.output(s, "learning_rate", var.dtype());
        Ok(apply_op(s, "ApplyGradientDescent", var, vec![lr, grad.clone()], &[("use_locking", false)]))
    }
    /// `var[indices] -= lr * values` by scatter (repeated indices add up), as TensorFlow's
    /// gradient descent updates an IndexedSlices.
    fn apply_sparse_one(&self, s: &Scope, grad: SparseGrad<'_>, var: &Variable) -> Result<Option<Operation>, Status> {
        let (values, indices) = (grad.values, grad.indices);
        let lr = self.learning_rate.output(s, "learning_rate", var.dtype());
        let delta = ferroflow_graph::ops::mul(s, values.clone(), lr);
        let op = if var.is_resource() {
            let neg = ferroflow_graph::ops::neg(s, delta);
            s.op("ResourceScatterAdd").input(var.handle()).input(indices.clone()).input(neg).build()
        } else {
            s.op("ScatterSub")
                .input(var.handle())
                .input(indices.clone())
                .input(delta)
                .attr("use_locking", ferroflow_core::attr::bool(false))
                .build()
        };
        Ok(Some(op))
    }
}
