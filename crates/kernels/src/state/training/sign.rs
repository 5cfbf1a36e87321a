//! The sign optimizers (`ApplyAddSign`, `ApplyPowerSign`, from "Neural Optimizer Search with
//! Reinforcement Learning"): `m = m * beta + grad * (1 - beta)`, then each element's step is
//! scaled by whether the gradient and `m` agree in sign (`s = sign(grad) * sign(m)`, 0 when
//! either is 0): AddSign `var -= lr * (alpha + sign_decay * s) * grad`, PowerSign
//! `var -= lr * exp(logbase * sign_decay * s) * grad`.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::Status;

use super::apply::UpdateRule;
use crate::real::Real;
use crate::state::par;

/// -1, 0 or 1 (0 for 0 and NaN).
fn sign<T: Real>(x: T) -> T {
    if x > T::ZERO {
        T::ONE
    } else if x < T::ZERO {
        -T::ONE
    } else {
        T::ZERO
    }
}

/// Updates `m` and runs `var -= lr * scale(sign(grad) * sign(m)) * grad`.
fn sign_step<T: Real>(var: &mut [T], m: &mut [T], grad: &[T], lr: T, beta: T, scale: impl Fn(T) -> T + Sync) {
    par::zip2(var, m, grad, |var, m, grad| {
        for ((x, m), &g) in var.iter_mut().zip(m.iter_mut()).zip(grad) {
            *m = *m * beta + g * (T::ONE - beta);
            *x -= lr * scale(sign(g) * sign(*m)) * g;
        }
    });
}

/// AddSign (`POWER` false; its second argument `alpha`) and PowerSign (`POWER`; its second
/// argument `logbase`).
pub struct Sign<const POWER: bool>;

impl<const POWER: bool> UpdateRule for Sign<POWER> {
    const SLOTS: &'static [&'static str] = &["var", "m"];
    const ARGS: &'static [&'static str] = if POWER {
        &["lr", "logbase", "sign_decay", "beta", "grad"]
    } else {
        &["lr", "alpha", "sign_decay", "beta", "grad"]
    };
    const GRAD: usize = 4;

    fn from_node(_: &NodeDef) -> Result<Self, Status> {
        Ok(Sign)
    }

    fn apply<T: Real>(&self, s: &[T], slots: &mut [&mut [T]], grad: &[T]) {
        let (&[lr, base, sign_decay, beta], [var, m]) = (s, slots) else { return };
        if POWER {
            sign_step(var, m, grad, lr, beta, |s| (base * sign_decay * s).exp());
        } else {
            sign_step(var, m, grad, lr, beta, |s| base + sign_decay * s);
        }
    }
}
