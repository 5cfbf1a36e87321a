//! `ApplyAdaMax` (Adam with the infinity norm): `m += (grad - m) * (1 - beta1)`,
//! `v = max(beta2 * v, |grad|)`, `var -= lr / (1 - beta1_power) * m / (v + epsilon)`.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::Status;

use super::apply::UpdateRule;
use crate::real::Real;
use crate::state::par;

/// AdaMax.
pub struct AdaMax;

impl UpdateRule for AdaMax {
    const SLOTS: &'static [&'static str] = &["var", "m", "v"];
    const ARGS: &'static [&'static str] = &["beta1_power", "lr", "beta1", "beta2", "epsilon", "grad"];
    const GRAD: usize = 5;

    fn from_node(_: &NodeDef) -> Result<Self, Status> {
        Ok(AdaMax)
    }

    fn apply<T: Real>(&self, s: &[T], slots: &mut [&mut [T]], grad: &[T]) {
        let (&[beta1_power, lr, beta1, beta2, epsilon], [var, m, v]) = (s, slots) else { return };
        let one = T::ONE;
        let rate = lr / (one - beta1_power);
        par::zip3(var, m, v, grad, |var, m, v, grad| {
            for (((x, m), v), &g) in var.iter_mut().zip(m.iter_mut()).zip(v.iter_mut()).zip(grad) {
                *m += (g - *m) * (one - beta1);
                let (a, b) = (g.abs(), beta2 * *v);
                // max(b, a) as TensorFlow's cwiseMax takes it: b unless b < a.
                *v = if b < a { a } else { b };
                *x -= rate * (*m / (*v + epsilon));
            }
        });
    }
}
