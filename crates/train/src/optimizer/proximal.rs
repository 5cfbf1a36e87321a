//! The proximal optimizers (FOBOS): `ProximalGradientDescent` and `ProximalAdagrad`, whose
//! L1 term sets small weights to exactly zero (`ApplyProximal*`, and `SparseApplyProximal*`
//! for sparse rows).

use ferroflow_core::{DataType, Status};
use ferroflow_graph::{Operation, Output, Scope, Variable};

use super::{apply_op, hyper, slot, LearningRate};

/// The learning rate and L1 / L2 strengths as TensorFlow names them, of `dtype` (shared by
/// the proximal optimizers and AdagradDA).
pub(super) fn rate_and_regularization(s: &Scope, lr: &LearningRate, l1: f64, l2: f64, dtype: DataType) -> [Output; 3] {
    [
        lr.output(s, "learning_rate", dtype),
        hyper(s, "l1_regularization_strength", l1, dtype),
        hyper(s, "l2_regularization_strength", l2, dtype),
    ]
}

/// `tf.compat.v1.train.ProximalGradientDescentOptimizer`.
#[derive(Clone, Debug)]
pub struct ProximalGradientDescent {
    /// Learning rate.
    pub learning_rate: LearningRate,
    /// L1 regularization strength (default 0).
    pub l1: f64,
    /// L2 regularization strength (default 0).
    pub l2: f64,
}

impl ProximalGradientDescent {
    /// Without regularization (TensorFlow's defaults).
    pub fn new(learning_rate: impl Into<LearningRate>) -> ProximalGradientDescent {
        ProximalGradientDescent { learning_rate: learning_rate.into(), l1: 0.0, l2: 0.0 }
    }

    fn build(&self, s: &Scope, var: &Variable, grad: Output, indices: Option<Output>) -> Result<Operation, Status> {
        let d = var.dtype();
        let sparse = indices.is_some();
        let mut inputs = rate_and_regularization(s, &self.learning_rate, self.l1, self.l2, d).to_vec();
        inputs.push(grad);
        inputs.extend(indices);
        let op = if sparse { "SparseApplyProximalGradientDescent" } else { "ApplyProximalGradientDescent" };
        Ok(apply_op(s, op, var, inputs, &[("use_locking", false)]))
    }
}

super::dense_and_sparse_optimizer!(ProximalGradientDescent, "ProximalGradientDescent");

/// `tf.compat.v1.train.ProximalAdagradOptimizer`: Adagrad's per-element rates with the
/// proximal step. Slot `<var>/ProximalAdagrad` (the accumulator).
#[derive(Clone, Debug)]
pub struct ProximalAdagrad {
    /// Learning rate.
    pub learning_rate: LearningRate,
    /// Starting value of the accumulators (default 0.1).
    pub initial_accumulator_value: f64,
    /// L1 regularization strength (default 0).
    pub l1: f64,
    /// L2 regularization strength (default 0).
    pub l2: f64,
}

impl ProximalAdagrad {
    /// With TensorFlow's defaults: accumulators start at 0.1, no regularization.
    pub fn new(learning_rate: impl Into<LearningRate>) -> ProximalAdagrad {
        ProximalAdagrad { learning_rate: learning_rate.into(), initial_accumulator_value: 0.1, l1: 0.0, l2: 0.0 }
    }

    fn build(&self, s: &Scope, var: &Variable, grad: Output, indices: Option<Output>) -> Result<Operation, Status> {
        let accum = slot(s, var, "ProximalAdagrad", self.initial_accumulator_value)?;
        let d = var.dtype();
        let sparse = indices.is_some();
        let mut inputs = vec![accum.handle()];
        inputs.extend(rate_and_regularization(s, &self.learning_rate, self.l1, self.l2, d));
        inputs.push(grad);
        inputs.extend(indices);
        let op = if sparse { "SparseApplyProximalAdagrad" } else { "ApplyProximalAdagrad" };
        Ok(apply_op(s, op, var, inputs, &[("use_locking", false)]))
    }
}

super::dense_and_sparse_optimizer!(ProximalAdagrad, "ProximalAdagrad");
