//! `ApplyMomentum`: `accum = accum * momentum + grad`, then
//! `var -= lr * accum` or, with Nesterov, `var -= grad * lr + accum * momentum * lr`.
//! `ResourceApplyKerasMomentum` (tf_keras's legacy SGD with momentum): the accumulator holds
//! the step itself, `accum = accum * momentum - lr * grad`, then `var += accum` or, with
//! Nesterov, `var += accum * momentum - lr * grad`.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Status};

use super::apply::UpdateRule;
use crate::real::Real;
use crate::state::par;

/// Momentum SGD, TensorFlow's or tf_keras's form.
pub struct Momentum {
    nesterov: bool,
    keras: bool,
}

impl UpdateRule for Momentum {
    const SLOTS: &'static [&'static str] = &["var", "accum"];
    const ARGS: &'static [&'static str] = &["lr", "grad", "momentum"];
    const GRAD: usize = 1;

    fn from_node(n: &NodeDef) -> Result<Self, Status> {
        Ok(Momentum { nesterov: n.attr_bool("use_nesterov")?, keras: n.op.ends_with("KerasMomentum") })
    }

    fn apply<T: Real>(&self, s: &[T], slots: &mut [&mut [T]], grad: &[T]) {
        let (&[lr, momentum], [var, accum]) = (s, slots) else { return };
        let (nesterov, keras) = (self.nesterov, self.keras);
        par::zip2(var, accum, grad, |var, accum, grad| {
            for ((v, a), &g) in var.iter_mut().zip(accum.iter_mut()).zip(grad) {
                match (keras, nesterov) {
                    (false, false) => {
                        *a = *a * momentum + g;
                        *v -= lr * *a;
                    }
                    (false, true) => {
                        *a = *a * momentum + g;
                        *v -= g * lr + *a * momentum * lr;
                    }
                    (true, false) => {
                        *a = *a * momentum - g * lr;
                        *v += *a;
                    }
                    (true, true) => {
                        *a = *a * momentum - g * lr;
                        *v += *a * momentum - g * lr;
                    }
                }
            }
        });
    }
}
