//! `ApplyGradientDescent`: `var -= alpha * delta`.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::Status;

use super::apply::UpdateRule;
use crate::real::Real;
use crate::state::par;

/// Plain gradient descent.
pub struct GradientDescent;

impl UpdateRule for GradientDescent {
    const SLOTS: &'static [&'static str] = &["var"];
    const ARGS: &'static [&'static str] = &["alpha", "delta"];
    const GRAD: usize = 1;

    fn from_node(_: &NodeDef) -> Result<Self, Status> {
        Ok(GradientDescent)
    }

    fn apply<T: Real>(&self, s: &[T], slots: &mut [&mut [T]], grad: &[T]) {
        let (Some(&alpha), [var]) = (s.first(), slots) else { return };
        par::zip1(var, grad, |var, grad| {
            for (v, &g) in var.iter_mut().zip(grad) {
                *v -= g * alpha;
            }
        });
    }
}
