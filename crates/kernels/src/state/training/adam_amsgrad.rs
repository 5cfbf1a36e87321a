//! `ResourceApplyAdamWithAmsgrad` (tf_keras's legacy Adam with `amsgrad=True`): Adam whose
//! denominator uses the running maximum `vhat` of `v`. With
//! `alpha = lr * sqrt(1 - beta2^t) / (1 - beta1^t)`: `m += (grad - m) * (1 - beta1)`,
//! `v += (grad² - v) * (1 - beta2)`, `vhat = max(vhat, v)`,
//! `var -= m * alpha / (sqrt(vhat) + epsilon)`.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::Status;

use super::apply::UpdateRule;
use crate::real::Real;
use crate::state::par;

/// AMSGrad.
pub struct AdamWithAmsgrad;

impl UpdateRule for AdamWithAmsgrad {
    const SLOTS: &'static [&'static str] = &["var", "m", "v", "vhat"];
    const ARGS: &'static [&'static str] = &["beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "grad"];
    const GRAD: usize = 6;

    fn from_node(_: &NodeDef) -> Result<Self, Status> {
        Ok(AdamWithAmsgrad)
    }

    fn apply<T: Real>(&self, s: &[T], slots: &mut [&mut [T]], grad: &[T]) {
        let (&[beta1_power, beta2_power, lr, beta1, beta2, epsilon], [var, m, v, vhat]) = (s, slots) else {
            return;
        };
        let one = T::ONE;
        let alpha = lr * (one - beta2_power).sqrt() / (one - beta1_power);
        par::zip4(var, m, v, vhat, grad, |var, m, v, vhat, grad| {
            for ((((x, m), v), vh), &g) in
                var.iter_mut().zip(m.iter_mut()).zip(v.iter_mut()).zip(vhat.iter_mut()).zip(grad)
            {
                *m += (g - *m) * (one - beta1);
                *v += (g * g - *v) * (one - beta2);
                if *v > *vh {
                    *vh = *v;
                }
                *x -= *m * alpha / (vh.sqrt() + epsilon);
            }
        });
    }
}
