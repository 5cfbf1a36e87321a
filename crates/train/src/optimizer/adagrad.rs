//! Adagrad: `accum += grad²; var -= lr * grad / sqrt(accum)`.

use ferroflow_core::Status;
use ferroflow_graph::{Operation, Output, Scope, Variable};

use super::{apply_op, deduplicate, hyper, slot, Optimizer};

/// `tf.compat.v1.train.AdagradOptimizer`.
#[derive(Clone, Debug)]
pub struct Adagrad {
    /// Learning rate.
    pub learning_rate: f64,
    /// Starting value of the accumulators (TensorFlow: 0.1).
    pub initial_accumulator_value: f64,
}

impl Adagrad {
    /// With the given learning rate and TensorFlow's initial accumulator 0.1.
    pub fn new(learning_rate: f64) -> Adagrad {
        Adagrad { learning_rate, initial_accumulator_value: 0.1 }
    }
}

impl Optimizer for Adagrad {
    fn name(&self) -> &str {
        "Adagrad"
    }
    fn apply_one(&self, s: &Scope, grad: &Output, var: &Variable) -> Result<Operation, Status> {
        let accum = slot(s, var, "Adagrad", self.initial_accumulator_value)?;
        let lr = hyper(s, "learning_rate", self.learning_rate, var.dtype());
        Ok(apply_op(
            s,
            "ApplyAdagrad",
            var,
            vec![accum.handle(), lr, grad.clone()],
            &[("use_locking", false), ("update_slots", true)],
        ))
    }
    fn apply_sparse_one(
        &self,
        s: &Scope,
        values: &Output,
        indices: &Output,
        var: &Variable,
    ) -> Result<Option<Operation>, Status> {
        let accum = slot(s, var, "Adagrad", self.initial_accumulator_value)?;
        let lr = hyper(s, "learning_rate", self.learning_rate, var.dtype());
        let (grad, indices) = deduplicate(s, values, indices);
        Ok(Some(apply_op(
            s,
            "SparseApplyAdagrad",
            var,
            vec![accum.handle(), lr, grad, indices],
            &[("use_locking", false), ("update_slots", true)],
        )))
    }
}
