//! The proximal optimizers (FOBOS): `ProximalGradientDescent` and `ProximalAdagrad`, whose
//! L1 term sets small weights to exactly zero (`ApplyProximal*`, and `SparseApplyProximal*`
//! for sparse rows).

use ferroflow_core::Status;
use ferroflow_graph::{Operation, Output, Scope, Variable};

use super::{apply_op, hyper, slot};

/// `tf.compat.v1.train.ProximalGradientDescentOptimizer`.
#[derive(Clone, Debug)]
pub struct ProximalGradientDescent {
    /// Learning rate.
    pub learning_rate: f64,
    /// L1 regularization strength (default 0).
    pub l1: f64,
    /// L2 regularization strength (default 0).
    pub l2: f64,
}

impl ProximalGradientDescent {
    /// Without regularization (TensorFlow's defaults).
    pub fn new(learning_rate: f64) -> ProximalGradientDescent {
        ProximalGradientDescent { learning_rate, l1: 0.0, l2: 0.0 }
    }

    fn build(&self, s: &Scope, var: &Variable, grad: Output, indices: Option<Output>) -> Result<Operation, Status> {
        let d = var.dtype();
        let sparse = indices.is_some();
        let mut inputs = vec![
            hyper(s, "learning_rate", self.learning_rate, d),
            hyper(s, "l1_regularization_strength", self.l1, d),
            hyper(s, "l2_regularization_strength", self.l2, d),
            grad,
        ];
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
    pub learning_rate: f64,
    /// Starting value of the accumulators (default 0.1).
    pub initial_accumulator_value: f64,
    /// L1 regularization strength (default 0).
    pub l1: f64,
    /// L2 regularization strength (default 0).
    pub l2: f64,
}

impl ProximalAdagrad {
    /// With TensorFlow's defaults: accumulators start at 0.1, no regularization.
    pub fn new(learning_rate: f64) -> ProximalAdagrad {
        ProximalAdagrad { learning_rate, initial_accumulator_value: 0.1, l1: 0.0, l2: 0.0 }
    }

    fn build(&self, s: &Scope, var: &Variable, grad: Output, indices: Option<Output>) -> Result<Operation, Status> {
        let accum = slot(s, var, "ProximalAdagrad", self.initial_accumulator_value)?;
        let d = var.dtype();
        let sparse = indices.is_some();
        let mut inputs = vec![
            accum.handle(),
            hyper(s, "learning_rate", self.learning_rate, d),
            hyper(s, "l1_regularization_strength", self.l1, d),
            hyper(s, "l2_regularization_strength", self.l2, d),
            grad,
        ];
        inputs.extend(indices);
        let op = if sparse { "SparseApplyProximalAdagrad" } else { "ApplyProximalAdagrad" };
        Ok(apply_op(s, op, var, inputs, &[("use_locking", false)]))
    }
}

super::dense_and_sparse_optimizer!(ProximalAdagrad, "ProximalAdagrad");
