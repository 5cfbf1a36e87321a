//! RMSProp: `ms = rho*ms + (1-rho)*grad²; mom = momentum*mom + lr*grad/sqrt(ms+eps); var -= mom`;
//! centered, it also tracks the mean gradient `mg` and divides by `sqrt(ms - mg² + eps)`.

use ferroflow_core::Status;
use ferroflow_graph::{Operation, Output, Scope, Variable};

use super::{apply_op, hyper, slot, LearningRate};

/// `tf.compat.v1.train.RMSPropOptimizer`.
#[derive(Clone, Debug)]
pub struct RmsProp {
    /// Learning rate.
    pub learning_rate: LearningRate,
    /// Discount (TensorFlow's `decay`, default 0.9).
    pub decay: f64,
    /// Momentum (default 0).
    pub momentum: f64,
    /// Epsilon (default 1e-10).
    pub epsilon: f64,
    /// Normalize by the gradient's estimated variance instead of its second moment
    /// (`ApplyCenteredRMSProp`; default false).
    pub centered: bool,
}

impl RmsProp {
    /// With TensorFlow's defaults: decay 0.9, momentum 0, epsilon 1e-10, not centered.
    pub fn new(learning_rate: impl Into<LearningRate>) -> RmsProp {
        RmsProp { learning_rate: learning_rate.into(), decay: 0.9, momentum: 0.0, epsilon: 1e-10, centered: false }
    }

    /// The update (`[Sparse]Apply[Centered]RMSProp`), with TensorFlow's slots: the mean
    /// square `<var>/RMSProp` (ones), then for a centered one the mean gradient
    /// `<var>/RMSProp_1`, then the momentum (zeros).
    fn build(&self, s: &Scope, var: &Variable, grad: Output, indices: Option<Output>) -> Result<Operation, Status> {
        let ms = slot(s, var, "RMSProp", 1.0)?;
        let mut slots = Vec::new();
        if self.centered {
            slots.push(slot(s, var, "RMSProp_1", 0.0)?.handle());
        }
        slots.push(ms.handle());
        slots.push(slot(s, var, if self.centered { "RMSProp_2" } else { "RMSProp_1" }, 0.0)?.handle());
        let d = var.dtype();
        let sparse = indices.is_some();
        let mut inputs = slots;
        inputs.extend([
            self.learning_rate.output(s, "learning_rate", d),
            hyper(s, "decay", self.decay, d),
            hyper(s, "momentum", self.momentum, d),
            hyper(s, "epsilon", self.epsilon, d),
            grad,
        ]);
        inputs.extend(indices);
        let op = format!(
            "{}Apply{}RMSProp",
            if sparse { "Sparse" } else { "" },
            if self.centered { "Centered" } else { "" }
        );
        Ok(apply_op(s, &op, var, inputs, &[("use_locking", false)]))
    }
}

super::dense_and_sparse_optimizer!(RmsProp, "RMSProp");
