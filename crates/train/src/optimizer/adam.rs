//! Adam (Kingma & Ba) as TensorFlow 1.x builds it: slots `m` (`Adam`) and `v` (`Adam_1`),
//! non-slot `beta1_power`/`beta2_power` colocated with the first variable and advanced after
//! every update.

use std::sync::Mutex;

use ferroflow_core::{Status, Tensor};
use ferroflow_graph::{ops, Operation, Output, Scope, Variable, VariableOptions};

use super::{after, apply_op, hyper, slot, LearningRate, Optimizer};

/// `tf.compat.v1.train.AdamOptimizer`.
#[derive(Debug)]
pub struct Adam {
    /// Learning rate (default 0.001).
    pub learning_rate: LearningRate,
    /// Decay of the first moment (0.9).
    pub beta1: f64,
    /// Decay of the second moment (0.999).
    pub beta2: f64,
    /// Epsilon (1e-8).
    pub epsilon: f64,
    powers: Mutex<Option<(Variable, Variable)>>,
}

impl Adam {
    /// With TensorFlow's defaults for everything but the learning rate.
    pub fn new(learning_rate: impl Into<LearningRate>) -> Adam {
        Adam { learning_rate: learning_rate.into(), beta1: 0.9, beta2: 0.999, epsilon: 1e-8, powers: Mutex::new(None) }
    }

    fn powers(&self) -> Result<(Variable, Variable), Status> {
        self.powers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .ok_or_else(|| Status::internal("Adam: beta powers used before prepare"))
    }
}

impl Optimizer for Adam {
    fn name(&self) -> &str {
        "Adam"
    }

    fn prepare(&self, s: &Scope, vars: &[Variable]) -> Result<(), Status> {
        let first = vars
            .iter()
            .min_by(|a, b| a.name().cmp(b.name()))
            .ok_or_else(|| Status::invalid_argument("Adam: no variables"))?;
        let root = s.root().colocate_with(&first.handle());
        let opts = VariableOptions { trainable: false, use_resource: first.is_resource(), ..Default::default() };
        let mk = |name: &str, v: f64| {
            let init = match first.dtype() {
                ferroflow_core::DataType::Double => ops::constant_named(&root, &format!("{name}/initial_value"), v),
                _ => ops::constant_named(&root, &format!("{name}/initial_value"), Tensor::scalar(v as f32)),
            };
            Variable::with_options(&root, name, init, &opts)
        };
        let b1 = mk("beta1_power", self.beta1);
        let b2 = mk("beta2_power", self.beta2);
        s.status()?;
        *self.powers.lock().unwrap_or_else(|e| e.into_inner()) = Some((b1, b2));
        Ok(())
    }

    fn apply_one(&self, s: &Scope, grad: &Output, var: &Variable) -> Result<Operation, Status> {
        let (b1p, b2p) = self.powers()?;
        let m = slot(s, var, "Adam", 0.0)?;
        let v = slot(s, var, "Adam_1", 0.0)?;
        let d = var.dtype();
        let inputs = vec![
            m.handle(),
            v.handle(),
            b1p.value(),
            b2p.value(),
            self.learning_rate.output(s, "learning_rate", d),
            hyper(s, "beta1", self.beta1, d),
            hyper(s, "beta2", self.beta2, d),
            hyper(s, "epsilon", self.epsilon, d),
            grad.clone(),
        ];
        Ok(apply_op(s, "ApplyAdam", var, inputs, &[("use_locking", false), ("use_nesterov", false)]))
    }

    fn finish(&self, s: &Scope, updates: &[Operation]) -> Result<Vec<Operation>, Status> {
        let (b1p, b2p) = self.powers()?;
        let cs = after(s, updates).colocate_with(&b1p.handle());
        let d = b1p.dtype();
        let new1 = ops::mul(&cs, b1p.read_value(&cs), hyper(&cs, "beta1", self.beta1, d));
        let new2 = ops::mul(&cs, b2p.read_value(&cs), hyper(&cs, "beta2", self.beta2, d));
        let u1 = b1p.assign(&cs, new1);
        let u2 = b2p.assign(&cs, new2);
        let mut all = updates.to_vec();
        all.push(u1);
        all.push(u2);
        Ok(all)
    }
}
