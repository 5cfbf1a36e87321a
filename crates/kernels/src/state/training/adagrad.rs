//! `ApplyAdagrad`: `accum += grad²` (if `update_slots`), `var -= grad * lr / sqrt(accum)`;
//! `ApplyAdagradV2`: the same with `var -= grad * lr / (sqrt(accum) + epsilon)`.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Status};

use super::apply::UpdateRule;
use crate::real::Real;
use crate::state::par;

/// Adagrad; with `V2` (`ApplyAdagradV2`) an epsilon is added to the denominator.
pub struct Adagrad<const V2: bool> {
    update_slots: bool,
}

impl<const V2: bool> UpdateRule for Adagrad<V2> {
    const SLOTS: &'static [&'static str] = &["var", "accum"];
    const ARGS: &'static [&'static str] = if V2 { &["lr", "epsilon", "grad"] } else { &["lr", "grad"] };
    const GRAD: usize = Self::ARGS.len() - 1;

    fn from_node(n: &NodeDef) -> Result<Self, Status> {
        Ok(Adagrad { update_slots: n.attr_bool("update_slots")? })
    }

    fn apply<T: Real>(&self, s: &[T], slots: &mut [&mut [T]], grad: &[T]) {
        let (lr, epsilon) = match (V2, s) {
            (false, &[lr]) => (lr, T::ZERO),
            (true, &[lr, epsilon]) => (lr, epsilon),
            _ => return,
        };
        let [var, accum] = slots else { return };
        let update = self.update_slots;
        par::zip2(var, accum, grad, |var, accum, grad| {
            for ((v, a), &g) in var.iter_mut().zip(accum.iter_mut()).zip(grad) {
                if update {
                    *a += g * g;
                }
                if V2 {
                    *v -= g * lr / (a.sqrt() + epsilon);
                } else {
                    *v -= g * lr * (T::ONE / a.sqrt());
                }
            }
        });
    }
}
