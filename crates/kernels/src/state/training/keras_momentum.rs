//! `ResourceApplyKerasMomentum` (tf_keras's legacy SGD with momentum): the accumulator holds
//! the step itself, `accum = accum * momentum - lr * grad`, then `var += accum` or, with
//! Nesterov, `var += accum * momentum - lr * grad`.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Status};

use super::apply::UpdateRule;
use crate::real::Real;
use crate::state::par;

/// tf_keras's momentum SGD.
pub struct KerasMomentum {
    nesterov: bool,
}

impl UpdateRule for KerasMomentum {
    const SLOTS: &'static [&'static str] = &["var", "accum"];
    const ARGS: &'static [&'static str] = &["lr", "grad", "momentum"];
    const GRAD: usize = 1;

    fn from_node(n: &NodeDef) -> Result<Self, Status> {
        Ok(KerasMomentum { nesterov: n.attr_bool("use_nesterov")? })
    }

    fn apply<T: Real>(&self, s: &[T], slots: &mut [&mut [T]], grad: &[T]) {
        let (&[lr, momentum], [var, accum]) = (s, slots) else { return };
        let nesterov = self.nesterov;
        par::zip2(var, accum, grad, |var, accum, grad| {
            for ((v, a), &g) in var.iter_mut().zip(accum.iter_mut()).zip(grad) {
                *a = *a * momentum - g * lr;
                if nesterov {
                    *v += *a * momentum - g * lr;
                } else {
                    *v += *a;
                }
            }
        });
    }
}
