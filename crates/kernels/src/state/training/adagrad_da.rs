//! `ApplyAdagradDA`: Adagrad dual averaging (Duchi et al.), for sparse linear models.
//! `gradient_accumulator += grad`, `gradient_squared_accumulator += grad²`, then the
//! weight is computed afresh from the accumulators and the global step `t`:
//! `var = -lr * sign(g) * max(|g| - l1 * t, 0) / (l2 * t * lr + sqrt(gg))` (with `g`
//! itself in place of the shrunk term when `l1` is 0).

use ferroflow_core::proto::NodeDef;
use ferroflow_core::Status;

use super::apply::UpdateRule;
use crate::real::Real;
use crate::state::par;

/// AdagradDA.
pub struct AdagradDa;

impl UpdateRule for AdagradDa {
    const SLOTS: &'static [&'static str] = &["var", "gradient_accumulator", "gradient_squared_accumulator"];
    const ARGS: &'static [&'static str] = &["grad", "lr", "l1", "l2", "global_step"];
    const GRAD: usize = 0;
    const STEP: Option<usize> = Some(4);

    fn from_node(_: &NodeDef) -> Result<Self, Status> {
        Ok(AdagradDa)
    }

    fn apply<T: Real>(&self, s: &[T], slots: &mut [&mut [T]], grad: &[T]) {
        let (&[lr, l1, l2, step], [var, ga, gga]) = (s, slots) else { return };
        let l2_term = l2 * (step * lr);
        let l1_term = step * l1;
        par::zip3(var, ga, gga, grad, |var, ga, gga, grad| {
            for (((v, a), aa), &g) in var.iter_mut().zip(ga.iter_mut()).zip(gga.iter_mut()).zip(grad) {
                *a += g;
                *aa += g * g;
                let denom = l2_term + aa.sqrt();
                *v = if l1 > T::ZERO {
                    let shrunk = a.abs() - l1_term;
                    if shrunk > T::ZERO {
                        let mag = lr * shrunk / denom;
                        if *a > T::ZERO {
                            T::ZERO - mag
                        } else {
                            mag
                        }
                    } else {
                        T::ZERO
                    }
                } else {
                    lr * *a * (T::ZERO - T::ONE) / denom
                };
            }
        });
    }
}
