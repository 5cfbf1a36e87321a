//! `ApplyAdagrad`: `accum += grad²` (if `update_slots`), `var -= grad * lr / sqrt(accum)`;
//! `ApplyAdagradV2`: the same with `var -= grad * lr / (sqrt(accum) + epsilon)`.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Status};

use super::apply::UpdateRule;
use crate::real::Real;
use crate::state::par;

/// Adagrad.
pub struct Adagrad {
    update_slots: bool,
}

impl UpdateRule for Adagrad {
    const SLOTS: &'static [&'static str] = &["var", "accum"];
    const ARGS: &'static [&'static str] = &["lr", "grad"];
    const GRAD: usize = 1;

    fn from_node(n: &NodeDef) -> Result<Self, Status> {
        Ok(Adagrad { update_slots: n.attr_bool("update_slots")? })
    }

    fn apply<T: Real>(&self, s: &[T], slots: &mut [&mut [T]], grad: &[T]) {
        let (&[lr], [var, accum]) = (s, slots) else { return };
        let update = self.update_slots;
        par::zip2(var, accum, grad, |var, accum, grad| {
            for ((v, a), &g) in var.iter_mut().zip(accum.iter_mut()).zip(grad) {
                if update {
                    *a += g * g;
                }
                *v -= g * lr * (T::ONE / a.sqrt());
            }
        });
    }
}

/// Adagrad with an epsilon in the denominator.
pub struct AdagradV2 {
    update_slots: bool,
}

impl UpdateRule for AdagradV2 {
    const SLOTS: &'static [&'static str] = &["var", "accum"];
    const ARGS: &'static [&'static str] = &["lr", "epsilon", "grad"];
    const GRAD: usize = 2;

    fn from_node(n: &NodeDef) -> Result<Self, Status> {
        Ok(AdagradV2 { update_slots: n.attr_bool("update_slots")? })
    }

    fn apply<T: Real>(&self, s: &[T], slots: &mut [&mut [T]], grad: &[T]) {
        let (&[lr, epsilon], [var, accum]) = (s, slots) else { return };
        let update = self.update_slots;
        par::zip2(var, accum, grad, |var, accum, grad| {
            for ((v, a), &g) in var.iter_mut().zip(accum.iter_mut()).zip(grad) {
                if update {
                    *a += g * g;
                }
                *v -= g * lr / (a.sqrt() + epsilon);
            }
        });
    }
}
