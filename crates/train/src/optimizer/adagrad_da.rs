//! Adagrad dual averaging (`ApplyAdagradDA`, `SparseApplyAdagradDA`): the weights are
//! recomputed each step from the sums of the gradients and of their squares, and the
//! global step, which scales the regularization; suited to sparse linear models.

use ferroflow_core::{attr, DataType, Status, Tensor};
use ferroflow_graph::{ops, Operation, Output, Scope, Variable};

use super::{apply_op, slot, LearningRate};

/// `tf.compat.v1.train.AdagradDAOptimizer`. Slots `<var>/AdagradDA` (the gradient sum) and
/// `<var>/AdagradDA_1` (the squared-gradient sum).
#[derive(Clone, Debug)]
pub struct AdagradDa {
    /// Learning rate.
    pub learning_rate: LearningRate,
    /// The global step the updates read (as TensorFlow's, plus one).
    pub global_step: Variable,
    /// Starting value of the squared-gradient sums (default 0.1).
    pub initial_gradient_squared_accumulator_value: f64,
    /// L1 regularization strength (default 0).
    pub l1: f64,
    /// L2 regularization strength (default 0).
    pub l2: f64,
}

impl AdagradDa {
    /// With TensorFlow's defaults: squared sums start at 0.1, no regularization.
    pub fn new(learning_rate: impl Into<LearningRate>, global_step: &Variable) -> AdagradDa {
        AdagradDa {
            learning_rate: learning_rate.into(),
            global_step: global_step.clone(),
            initial_gradient_squared_accumulator_value: 0.1,
            l1: 0.0,
            l2: 0.0,
        }
    }

    /// `global_step + 1` as int64, read beside the variable (TensorFlow reads the step
    /// once per apply and adds one, so the first update sees step 1).
    fn step(&self, s: &Scope) -> Output {
        let mut gs = self.global_step.value();
        if gs.dtype != DataType::Int64 {
            gs = s
                .op("Cast")
                .input(gs)
                .attr("DstT", attr::ty(DataType::Int64))
                .attr("Truncate", attr::bool(false))
                .build()
                .output(0);
        }
        let one = ops::constant_named(s, "one", Tensor::scalar(1i64));
        s.op("AddV2").name("global_step_on_worker").input(gs).input(one).build().output(0)
    }

    fn build(&self, s: &Scope, var: &Variable, grad: Output, indices: Option<Output>) -> Result<Operation, Status> {
        let ga = slot(s, var, "AdagradDA", 0.0)?;
        let gga = slot(s, var, "AdagradDA_1", self.initial_gradient_squared_accumulator_value)?;
        let d = var.dtype();
        let sparse = indices.is_some();
        let mut inputs = vec![ga.handle(), gga.handle(), grad];
        inputs.extend(indices);
        inputs.extend(super::proximal::rate_and_regularization(s, &self.learning_rate, self.l1, self.l2, d));
        inputs.push(self.step(s));
        let op = if sparse { "SparseApplyAdagradDA" } else { "ApplyAdagradDA" };
        Ok(apply_op(s, op, var, inputs, &[("use_locking", false)]))
    }
}

super::dense_and_sparse_optimizer!(AdagradDa, "AdagradDA");
