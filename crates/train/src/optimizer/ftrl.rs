//! FTRL-Proximal (`ApplyFtrl`, or `ApplyFtrlV2` with L2 shrinkage), the optimizer of wide
//! linear models; sparse rows update through `SparseApplyFtrl(V2)`.

use ferroflow_core::Status;
use ferroflow_graph::{Operation, Output, Scope, Variable};

use super::{apply_op, hyper, slot, LearningRate};

/// `tf.compat.v1.train.FtrlOptimizer`.
#[derive(Clone, Debug)]
pub struct Ftrl {
    /// Learning rate.
    pub learning_rate: LearningRate,
    /// Learning rate power (≤ 0; default -0.5).
    pub learning_rate_power: f64,
    /// Starting value of the accumulators (default 0.1).
    pub initial_accumulator_value: f64,
    /// L1 regularization strength (default 0).
    pub l1_regularization_strength: f64,
    /// L2 regularization strength (default 0).
    pub l2_regularization_strength: f64,
    /// L2 shrinkage regularization strength (default 0; above 0 uses `ApplyFtrlV2`).
    pub l2_shrinkage_regularization_strength: f64,
}

impl Ftrl {
    /// With TensorFlow's defaults (learning rate power -0.5, accumulators 0.1, no
    /// regularization).
    pub fn new(learning_rate: impl Into<LearningRate>) -> Ftrl {
        Ftrl {
            learning_rate: learning_rate.into(),
            learning_rate_power: -0.5,
            initial_accumulator_value: 0.1,
            l1_regularization_strength: 0.0,
            l2_regularization_strength: 0.0,
            l2_shrinkage_regularization_strength: 0.0,
        }
    }

    fn check(&self) -> Result<(), Status> {
        let bad = |what: &str, v: f64| Err(Status::invalid_argument(format!("Ftrl: {what} is {v}")));
        if self.learning_rate_power > 0.0 {
            return bad("learning_rate_power (must be <= 0)", self.learning_rate_power);
        }
        if self.initial_accumulator_value < 0.0 {
            return bad("initial_accumulator_value (must be >= 0)", self.initial_accumulator_value);
        }
        for (what, v) in [
            ("l1_regularization_strength (must be >= 0)", self.l1_regularization_strength),
            ("l2_regularization_strength (must be >= 0)", self.l2_regularization_strength),
            ("l2_shrinkage_regularization_strength (must be >= 0)", self.l2_shrinkage_regularization_strength),
        ] {
            if v < 0.0 {
                return bad(what, v);
            }
        }
        Ok(())
    }

    /// The update op (`ApplyFtrl` or `SparseApplyFtrl`, `V2` with shrinkage) and its
    /// inputs after the slots: the gradient, then (sparse) the indices, then the scalars.
    fn build(&self, s: &Scope, var: &Variable, grad: Output, indices: Option<Output>) -> Result<Operation, Status> {
        self.check()?;
        let accum = slot(s, var, "Ftrl", self.initial_accumulator_value)?;
        let linear = slot(s, var, "Ftrl_1", 0.0)?;
        let d = var.dtype();
        let shrink = self.l2_shrinkage_regularization_strength > 0.0;
        let sparse = indices.is_some();
        let mut inputs = vec![accum.handle(), linear.handle(), grad];
        inputs.extend(indices);
        inputs.push(self.learning_rate.output(s, "learning_rate", d));
        inputs.push(hyper(s, "l1_regularization_strength", self.l1_regularization_strength, d));
        inputs.push(hyper(s, "l2_regularization_strength", self.l2_regularization_strength, d));
        if shrink {
            inputs.push(hyper(s, "l2_shrinkage_regularization_strength", self.l2_shrinkage_regularization_strength, d));
        }
        inputs.push(hyper(s, "learning_rate_power", self.learning_rate_power, d));
        let op = format!("{}ApplyFtrl{}", if sparse { "Sparse" } else { "" }, if shrink { "V2" } else { "" });
        Ok(apply_op(s, &op, var, inputs, &[("use_locking", false), ("multiply_linear_by_lr", false)]))
    }
}

super::dense_and_sparse_optimizer!(Ftrl, "Ftrl");
