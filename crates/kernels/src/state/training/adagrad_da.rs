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

#[cfg(test)]
mod tests {
    use super::*;

    /// TensorFlow's own unit test of AdagradDA (adagrad_da_test.py): lr 3, initial squared
    /// accumulator 0.1, one step at global step 1 from var [1, 2] with grad [0.1, 0.2].
    #[test]
    fn one_step_matches_tensorflows_unit_test() {
        let mut var = vec![1.0f64, 2.0];
        let mut ga = vec![0.0f64; 2];
        let mut gga = vec![0.1f64; 2];
        AdagradDa.apply(&[3.0, 0.0, 0.0, 1.0], &mut [&mut var, &mut ga, &mut gga], &[0.1, 0.2]);
        assert!((var[0] - -0.904534).abs() < 1e-6 && (var[1] - -1.603567).abs() < 1e-6, "{var:?}");
        assert_eq!(ga, vec![0.1, 0.2]);
    }

    #[test]
    fn l1_zeroes_weights_whose_accumulated_gradient_is_small() {
        let mut var = vec![5.0f64, 5.0];
        let mut ga = vec![0.0f64; 2];
        let mut gga = vec![0.1f64; 2];
        // |g| = 0.1 <= l1 * t = 0.5: zero; |g| = 2 > 0.5: -lr * (2 - 0.5) / sqrt(4.1).
        AdagradDa.apply(&[1.0, 0.5, 0.0, 1.0], &mut [&mut var, &mut ga, &mut gga], &[0.1, 2.0]);
        assert_eq!(var[0], 0.0);
        assert!((var[1] - -1.5 / 4.1f64.sqrt()).abs() < 1e-12, "{var:?}");
    }
}
