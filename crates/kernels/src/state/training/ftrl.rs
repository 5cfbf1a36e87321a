//! `ApplyFtrl` / `ApplyFtrlV2`: FTRL-Proximal (McMahan et al., "Ad Click Prediction"), the
//! optimizer of wide linear models. Per element, with `p = -lr_power`:
//! - `new_accum = accum + grad²`;
//! - `linear += g' - (new_accum^p - accum^p) / lr * var`, where `g' = grad` (V1) or
//!   `grad + 2 * l2_shrinkage * var` (V2);
//! - `var = (clamp(linear, -l1, l1) - linear) / (new_accum^p / lr + 2 * l2)`, which is 0
//!   when `|linear| <= l1`;
//! - `accum = new_accum`.
//!
//! With `multiply_linear_by_lr`, `linear` holds `lr` times the above: the gradient term is
//! multiplied by `lr`, and `l1`, `l2` are scaled by `lr` where they meet `linear`.
//! `lr_power = -0.5` (the default) uses `sqrt` as TensorFlow does.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Status};

use super::apply::UpdateRule;
use crate::real::Real;
use crate::state::par;

/// The hyper-parameters of one FTRL update.
#[derive(Clone, Copy)]
struct Params<T> {
    lr: T,
    l1: T,
    l2: T,
    shrinkage: T,
    lr_power: T,
    by_lr: bool,
}

impl<T: Real> Params<T> {
    #[inline]
    fn pow(&self, x: T) -> T {
        if self.lr_power == T::from_f64(-0.5) {
            x.sqrt()
        } else {
            x.powf(T::ZERO - self.lr_power)
        }
    }

    fn update(&self, var: &mut [T], accum: &mut [T], linear: &mut [T], grad: &[T]) {
        let two = T::ONE + T::ONE;
        let (l1, l2) = if self.by_lr { (self.l1 * self.lr, self.l2 * self.lr) } else { (self.l1, self.l2) };
        for (((v, a), l), &g) in var.iter_mut().zip(accum.iter_mut()).zip(linear.iter_mut()).zip(grad) {
            let shrunk = g + two * self.shrinkage * *v;
            let new_a = *a + g * g;
            let (pa, pn) = (self.pow(*a), self.pow(new_a));
            if self.by_lr {
                *l += shrunk * self.lr - (pn - pa) * *v;
            } else {
                *l += shrunk - (pn - pa) / self.lr * *v;
            }
            let adjust = if *l > l1 {
                l1
            } else if *l < T::ZERO - l1 {
                T::ZERO - l1
            } else {
                *l
            };
            let quadratic = if self.by_lr { pn + two * l2 } else { pn / self.lr + two * l2 };
            *v = (adjust - *l) / quadratic;
            *a = new_a;
        }
    }
}

fn check_params<T: Real>(lr: T, l1: T, l2: T, shrinkage: Option<T>, lr_power: T) -> Result<(), String> {
    if lr <= T::ZERO {
        return Err("lr is not a positive scalar".into());
    }
    if l1 < T::ZERO {
        return Err("l1 regularization strength is not a non-negative scalar".into());
    }
    if l2 < T::ZERO {
        return Err("l2 regularization strength is not a non-negative scalar".into());
    }
    if shrinkage.is_some_and(|s| s < T::ZERO) {
        return Err("l2 shrinkage regularization strength is not a non-negative scalar".into());
    }
    if lr_power > T::ZERO {
        return Err("lr_power is not a non-positive scalar".into());
    }
    Ok(())
}

fn multiply_linear_by_lr(n: &NodeDef) -> Result<bool, Status> {
    if n.has_attr("multiply_linear_by_lr") {
        n.attr_bool("multiply_linear_by_lr")
    } else {
        Ok(false)
    }
}

fn run<T: Real>(p: Params<T>, slots: &mut [&mut [T]], grad: &[T]) {
    let [var, accum, linear] = slots else { return };
    par::zip3(var, accum, linear, grad, |v, a, l, g| p.update(v, a, l, g));
}

/// FTRL without L2 shrinkage.
pub struct Ftrl {
    by_lr: bool,
}

impl UpdateRule for Ftrl {
    const SLOTS: &'static [&'static str] = &["var", "accum", "linear"];
    const ARGS: &'static [&'static str] = &["grad", "lr", "l1", "l2", "lr_power"];
    const GRAD: usize = 0;

    fn from_node(n: &NodeDef) -> Result<Self, Status> {
        Ok(Ftrl { by_lr: multiply_linear_by_lr(n)? })
    }

    fn check<T: Real>(&self, s: &[T]) -> Result<(), String> {
        let &[lr, l1, l2, lr_power] = s else { return Err("FTRL takes 4 scalars".into()) };
        check_params(lr, l1, l2, None, lr_power)
    }

    fn apply<T: Real>(&self, s: &[T], slots: &mut [&mut [T]], grad: &[T]) {
        let &[lr, l1, l2, lr_power] = s else { return };
        run(Params { lr, l1, l2, shrinkage: T::ZERO, lr_power, by_lr: self.by_lr }, slots, grad);
    }
}

/// FTRL with L2 shrinkage (`l2_shrinkage_regularization_strength > 0`).
pub struct FtrlV2 {
    by_lr: bool,
}

impl UpdateRule for FtrlV2 {
    const SLOTS: &'static [&'static str] = &["var", "accum", "linear"];
    const ARGS: &'static [&'static str] = &["grad", "lr", "l1", "l2", "l2_shrinkage", "lr_power"];
    const GRAD: usize = 0;

    fn from_node(n: &NodeDef) -> Result<Self, Status> {
        Ok(FtrlV2 { by_lr: multiply_linear_by_lr(n)? })
    }

    fn check<T: Real>(&self, s: &[T]) -> Result<(), String> {
        let &[lr, l1, l2, shrinkage, lr_power] = s else { return Err("FTRL V2 takes 5 scalars".into()) };
        check_params(lr, l1, l2, Some(shrinkage), lr_power)
    }

    fn apply<T: Real>(&self, s: &[T], slots: &mut [&mut [T]], grad: &[T]) {
        let &[lr, l1, l2, shrinkage, lr_power] = s else { return };
        run(Params { lr, l1, l2, shrinkage, lr_power, by_lr: self.by_lr }, slots, grad);
    }
}
