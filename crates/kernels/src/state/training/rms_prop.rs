//! `ApplyRMSProp`: `ms += (grad² - ms) * (1 - rho)`,
//! `mom = mom * momentum + grad * lr / sqrt(ms + epsilon)`, `var -= mom`.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::Status;

use super::apply::UpdateRule;
use crate::real::Real;
use crate::state::par;

/// RMSProp (without centering).
pub struct RmsProp;

impl UpdateRule for RmsProp {
    const SLOTS: &'static [&'static str] = &["var", "ms", "mom"];
    const ARGS: &'static [&'static str] = &["lr", "rho", "momentum", "epsilon", "grad"];
    const GRAD: usize = 4;

    fn from_node(_: &NodeDef) -> Result<Self, Status> {
        Ok(RmsProp)
    }

    fn apply<T: Real>(&self, s: &[T], slots: &mut [&mut [T]], grad: &[T]) {
        let (&[lr, rho, momentum, epsilon], [var, ms, mom]) = (s, slots) else { return };
        let one = T::ONE;
        par::zip3(var, ms, mom, grad, |var, ms, mom, grad| {
            for (((x, ms), mom), &g) in var.iter_mut().zip(ms.iter_mut()).zip(mom.iter_mut()).zip(grad) {
                *ms += (g * g - *ms) * (one - rho);
                *mom = *mom * momentum + g * lr / (*ms + epsilon).sqrt();
                *x -= *mom;
            }
        });
    }
}
