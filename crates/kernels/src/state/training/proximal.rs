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
pub fn fobos<T: Real>(v: T, g: T, rate: T, l1: T, l2: T) -> T {
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
