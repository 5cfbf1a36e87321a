//! `ApplyCenteredRMSProp`: RMSProp that also tracks the mean gradient `mg` and divides by
//! an estimate of the gradient's variance:
//! `mg += (grad - mg) * (1 - rho)`, `ms += (grad² - ms) * (1 - rho)`,
//! `mom = mom * momentum + grad * lr / sqrt(ms - mg² + epsilon)`, `var -= mom`.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::Status;

use super::apply::UpdateRule;
use crate::real::Real;
use crate::state::par;

/// Centered RMSProp (`tf.compat.v1.train.RMSPropOptimizer(centered=True)`).
pub struct CenteredRmsProp;

impl UpdateRule for CenteredRmsProp {
    const SLOTS: &'static [&'static str] = &["var", "mg", "ms", "mom"];
    const ARGS: &'static [&'static str] = &["lr", "rho", "momentum", "epsilon", "grad"];
    const GRAD: usize = 4;

    fn from_node(_: &NodeDef) -> Result<Self, Status> {
        Ok(CenteredRmsProp)
    }

    fn apply<T: Real>(&self, s: &[T], slots: &mut [&mut [T]], grad: &[T]) {
        let (&[lr, rho, momentum, epsilon], [var, mg, ms, mom]) = (s, slots) else { return };
        let decay = T::ONE - rho;
        par::zip4(var, mg, ms, mom, grad, |var, mg, ms, mom, grad| {
            for ((((x, mg), ms), mom), &g) in
                var.iter_mut().zip(mg.iter_mut()).zip(ms.iter_mut()).zip(mom.iter_mut()).zip(grad)
            {
                *ms += (g * g - *ms) * decay;
                *mg += (g - *mg) * decay;
                let denom = (*ms - *mg * *mg) + epsilon;
                *mom = *mom * momentum + g * lr / denom.sqrt();
                *x -= *mom;
            }
        });
    }
}
