//! `ApplyMomentum`: `accum = accum * momentum + grad`, then
//! `var -= lr * accum` or, with Nesterov, `var -= grad * lr + accum * momentum * lr`.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Status};

use super::apply::UpdateRule;
use crate::real::Real;
use crate::state::par;

/// Momentum SGD.
pub struct Momentum {
    nesterov: bool,
}

impl UpdateRule for Momentum {
    const SLOTS: &'static [&'static str] = &["var", "accum"];
    const ARGS: &'static [&'static str] = &["lr", "grad", "momentum"];
    const GRAD: usize = 1;

    fn from_node(n: &NodeDef) -> Result<Self, Status> {
        Ok(Momentum { nesterov: n.attr_bool("use_nesterov")? })
    }

    fn apply<T: Real>(&self, s: &[T], slots: &mut [&mut [T]], grad: &[T]) {
        let (&[lr, momentum], [var, accum]) = (s, slots) else { return };
        let nesterov = self.nesterov;
        par::zip2(var, accum, grad, |var, accum, grad| {
            for ((v, a), &g) in var.iter_mut().zip(accum.iter_mut()).zip(grad) {
                *a = *a * momentum + g;
                if nesterov {
                    *v -= g * lr + *a * momentum * lr;
                } else {
                    *v -= lr * *a;
                }
            }
        });
    }
}
