//! Adagrad: `accum += grad²; var -= lr * grad / sqrt(accum)`.

use ferroflow_core::Status;
use ferroflow_graph::{Operation, Output, Scope, Variable};

use super::{apply_op, slot, LearningRate};

/// `tf.compat.v1.train.AdagradOptimizer`.
#[derive(Clone, Debug)]
pub struct Adagrad {
    /// Learning rate.
    pub learning_rate: LearningRate,
    /// Starting value of the accumulators (TensorFlow: 0.1).
    pub initial_accumulator_value: f64,
}

impl Adagrad {
    /// With the given learning rate and TensorFlow's initial accumulator 0.1.
    pub fn new(learning_rate: impl Into<LearningRate>) -> Adagrad {
        Adagrad { learning_rate: learning_rate.into(), initial_accumulator_value: 0.1 }
    }
}

impl Adagrad {
    fn build(&self, s: &Scope, var: &Variable, grad: Output, indices: Option<Output>) -> Result<Operation, Status> {
        let accum = slot(s, var, "Adagrad", self.initial_accumulator_value)?;
        let lr = self.learning_rate.output(s, "learning_rate", var.dtype());
        let op = if indices.is_some() { "SparseApplyAdagrad" } else { "ApplyAdagrad" };
        let mut inputs = vec![accum.handle(), lr, grad];
        inputs.extend(indices);
        Ok(apply_op(s, op, var, inputs, &[("use_locking", false), ("update_slots", true)]))
    }
}

super::dense_and_sparse_optimizer!(Adagrad, "Adagrad");
