//! `ApplyAdam`: with `alpha = lr * sqrt(1 - beta2^t) / (1 - beta1^t)`,
//! `m += (grad - m) * (1 - beta1)`, `v += (grad² - v) * (1 - beta2)`,
//! `var -= m * alpha / (sqrt(v) + epsilon)` (Nesterov: `(grad * (1 - beta1) + beta1 * m)`
//! in place of `m`).

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Status};

use super::apply::UpdateRule;
use crate::real::Real;
use crate::state::par;

/// Adam.
pub struct Adam {
    nesterov: bool,
}

impl UpdateRule for Adam {
    const SLOTS: &'static [&'static str] = &["var", "m", "v"];
    const ARGS: &'static [&'static str] = &["beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "grad"];
    const GRAD: usize = 6;

    fn from_node(n: &NodeDef) -> Result<Self, Status> {
        Ok(Adam { nesterov: n.attr_bool("use_nesterov")? })
    }

    fn apply<T: Real>(&self, s: &[T], slots: &mut [&mut [T]], grad: &[T]) {
        let (&[beta1_power, beta2_power, lr, beta1, beta2, epsilon], [var, m, v]) = (s, slots) else { return };
        let one = T::ONE;
        let alpha = lr * (one - beta2_power).sqrt() / (one - beta1_power);
        let nesterov = self.nesterov;
        par::zip3(var, m, v, grad, |var, m, v, grad| {
            for (((x, m), v), &g) in var.iter_mut().zip(m.iter_mut()).zip(v.iter_mut()).zip(grad) {
                *m += (g - *m) * (one - beta1);
                *v += (g * g - *v) * (one - beta2);
                let step = if nesterov { g * (one - beta1) + beta1 * *m } else { *m };
                *x -= step * alpha / (v.sqrt() + epsilon);
            }
        });
    }
}
