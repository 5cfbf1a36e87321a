//! The proximal (FOBOS) updates, which pull weights to exactly zero under L1:
//! - `ApplyProximalGradientDescent`: with `rate = alpha`;
//! - `ApplyProximalAdagrad`: `accum += grad²`, then with `rate = lr / sqrt(accum)`;
//!
//! both then take `prox = var - rate * grad` and set
//! `var = sign(prox) * max(|prox| - rate * l1, 0) / (1 + rate * l2)` (just
//! `prox / (1 + rate * l2)` when `l1` is 0).

use ferroflow_core::proto::NodeDef;
use ferroflow_core::Status;

use super::apply::UpdateRule;
use crate::real::Real;
use crate::state::par;

/// The proximal step of one element given its learning rate.
#[inline]
fn fobos<T: Real>(v: T, g: T, rate: T, l1: T, l2: T) -> T {
    let prox = v - g * rate;
    let denom = T::ONE + l2 * rate;
    if l1 > T::ZERO {
        let shrunk = prox.abs() - rate * l1;
        if shrunk > T::ZERO {
            if prox < T::ZERO {
                T::ZERO - shrunk / denom
            } else {
                shrunk / denom
            }
        } else {
            T::ZERO
        }
    } else {
        prox / denom
    }
}

fn check_regularization<T: Real>(l1: T, l2: T) -> Result<(), String> {
    if l1 < T::ZERO {
        return Err("l1 regularization strength is not a non-negative scalar".into());
    }
    if l2 < T::ZERO {
        return Err("l2 regularization strength is not a non-negative scalar".into());
    }
    Ok(())
}

/// Proximal gradient descent.
pub struct ProximalGradientDescent;

impl UpdateRule for ProximalGradientDescent {
    const SLOTS: &'static [&'static str] = &["var"];
    const ARGS: &'static [&'static str] = &["alpha", "l1", "l2", "delta"];
    const GRAD: usize = 3;

    fn from_node(_: &NodeDef) -> Result<Self, Status> {
        Ok(ProximalGradientDescent)
    }

    fn apply<T: Real>(&self, s: &[T], slots: &mut [&mut [T]], grad: &[T]) {
        let (&[alpha, l1, l2], [var]) = (s, slots) else { return };
        par::zip1(var, grad, |var, grad| {
            for (v, &g) in var.iter_mut().zip(grad) {
                *v = fobos(*v, g, alpha, l1, l2);
            }
        });
    }
}

/// Proximal Adagrad.
pub struct ProximalAdagrad;

impl UpdateRule for ProximalAdagrad {
    const SLOTS: &'static [&'static str] = &["var", "accum"];
    const ARGS: &'static [&'static str] = &["lr", "l1", "l2", "grad"];
    const GRAD: usize = 3;

    fn from_node(_: &NodeDef) -> Result<Self, Status> {
        Ok(ProximalAdagrad)
    }

    fn check<T: Real>(&self, s: &[T]) -> Result<(), String> {
        let &[lr, l1, l2] = s else { return Err("ProximalAdagrad takes 3 scalars".into()) };
        if lr <= T::ZERO {
            return Err("lr is not a positive scalar".into());
        }
        check_regularization(l1, l2)
    }

    fn apply<T: Real>(&self, s: &[T], slots: &mut [&mut [T]], grad: &[T]) {
        let (&[lr, l1, l2], [var, accum]) = (s, slots) else { return };
        par::zip2(var, accum, grad, |var, accum, grad| {
            for ((v, a), &g) in var.iter_mut().zip(accum.iter_mut()).zip(grad) {
                *a += g * g;
                let rate = lr * (T::ONE / a.sqrt());
                *v = fobos(*v, g, rate, l1, l2);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn l1_pulls_small_weights_to_zero_and_keeps_the_sign() {
        // prox = 0.05 - 0.1 * 0.2 = 0.03 < rate * l1 = 0.1 * 0.5: exactly zero.
        assert_eq!(fobos(0.05f64, 0.2, 0.1, 0.5, 0.0), 0.0);
        // prox = -1.02; |prox| - 0.05 = 0.97; / (1 + 0.1 * 0.3).
        let v = fobos(-1.0f64, 0.2, 0.1, 0.5, 0.3);
        assert!((v - (-0.97 / 1.03)).abs() < 1e-12, "{v}");
        // Without l1, only the l2 shrinkage.
        let v = fobos(1.0f64, 0.2, 0.1, 0.0, 0.3);
        assert!((v - 0.98 / 1.03).abs() < 1e-12, "{v}");
    }

    #[test]
    fn proximal_adagrad_checks_its_hyper_parameters() {
        let p = ProximalAdagrad;
        assert!(p.check(&[0.1f32, 0.0, 0.0]).is_ok());
        assert_eq!(p.check(&[0.0f32, 0.0, 0.0]).unwrap_err(), "lr is not a positive scalar");
        assert!(p.check(&[0.1f32, -1.0, 0.0]).unwrap_err().starts_with("l1 regularization"));
        assert!(p.check(&[0.1f32, 0.0, -1.0]).unwrap_err().starts_with("l2 regularization"));
    }
}
