//! `ApplyAdadelta`: `accum = accum * rho + grad² * (1 - rho)`,
//! `update = sqrt(accum_update + epsilon) / sqrt(accum + epsilon) * grad`,
//! `var -= update * lr`, `accum_update = accum_update * rho + update² * (1 - rho)`.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::Status;

use super::apply::UpdateRule;
use crate::real::Real;
use crate::state::par;

/// Adadelta.
pub struct Adadelta;

impl UpdateRule for Adadelta {
    const SLOTS: &'static [&'static str] = &["var", "accum", "accum_update"];
    const ARGS: &'static [&'static str] = &["lr", "rho", "epsilon", "grad"];
    const GRAD: usize = 3;

    fn from_node(_: &NodeDef) -> Result<Self, Status> {
        Ok(Adadelta)
    }

    fn apply<T: Real>(&self, s: &[T], slots: &mut [&mut [T]], grad: &[T]) {
        let (&[lr, rho, epsilon], [var, accum, accum_update]) = (s, slots) else { return };
        let decay = T::ONE - rho;
        par::zip3(var, accum, accum_update, grad, |var, accum, accum_update, grad| {
            for (((v, a), u), &g) in var.iter_mut().zip(accum.iter_mut()).zip(accum_update.iter_mut()).zip(grad) {
                *a = *a * rho + g * g * decay;
                let update = (*u + epsilon).sqrt() * (T::ONE / (*a + epsilon).sqrt()) * g;
                *v -= update * lr;
                *u = *u * rho + update * update * decay;
            }
        });
    }
}
