//! Gradients of `tf.math.special`'s Bessel functions of integer order (J, Y, K and the
//! scaled K), Dawson's integral, the exponential integral, the Fresnel integrals and Spence's
//! function, as TensorFlow's `math_grad.py` defines them.

use std::f64::consts::FRAC_PI_2;

use ferroflow_core::Status;

use super::math_grad::scalar;
use super::registry::{GradRegistry, Grads};
use crate::gradients::GradOp;
use crate::ops;
use crate::scope::{Output, Scope};

fn x(op: &GradOp) -> Result<Output, Status> {
    op.inputs.first().cloned().ok_or_else(|| Status::internal(format!("{} has no input", op.node.op)))
}

fn y(op: &GradOp) -> Output {
    op.outputs[0].clone()
}

fn c(s: &Scope, like: &Output, v: f64) -> Output {
    scalar(s, like.dtype, v)
}

fn times(s: &Scope, g: &[Output], d: Output) -> Grads {
    Ok(vec![Some(ops::mul(s, g[0].clone(), d))])
}

/// `BesselJ0`: `-g·J1(x)`.
fn j0_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    times(s, g, ops::neg(s, ops::bessel_j1(s, x(op)?)))
}

/// `BesselJ1`: `g·(J0(x) - y/x)`, ½·g at 0.
fn j1_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let x = x(op)?;
    // The quotient of a safe x (1 at 0), so that no NaN reaches a second derivative
    // through the branch not taken.
    let zero = ops::equal(s, x.clone(), c(s, &x, 0.0));
    let safe = ops::select_v2(s, zero.clone(), c(s, &x, 1.0), x.clone());
    let d = ops::sub(s, ops::bessel_j0(s, x.clone()), ops::div(s, y(op), safe));
    let d = ops::select_v2(s, zero, c(s, &x, 0.5), d);
    times(s, g, d)
}

/// `BesselY0`: `-g·Y1(x)`.
fn y0_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    times(s, g, ops::neg(s, ops::bessel_y1(s, x(op)?)))
}

/// `BesselY1`: `g·(Y0(x) - y/x)`.
fn y1_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let x = x(op)?;
    let d = ops::sub(s, ops::bessel_y0(s, x.clone()), ops::div(s, y(op), x));
    times(s, g, d)
}

/// `BesselK0`: `-g·K1(x)`.
fn k0_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    times(s, g, ops::neg(s, ops::bessel_k1(s, x(op)?)))
}

/// `BesselK0e`: `g·(y - K1e(x))`.
fn k0e_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    times(s, g, ops::sub(s, y(op), ops::bessel_k1e(s, x(op)?)))
}

/// `BesselK1`: `g·(-K0(x) - y/x)`.
fn k1_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let x = x(op)?;
    let d = ops::sub(s, ops::neg(s, ops::bessel_k0(s, x.clone())), ops::div(s, y(op), x));
    times(s, g, d)
}

/// `BesselK1e`: `g·(y·(1 - 1/x) - K0e(x))`.
fn k1e_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let x = x(op)?;
    let one_minus = ops::sub(s, c(s, &x, 1.0), ops::reciprocal(s, x.clone()));
    let d = ops::sub(s, ops::mul(s, y(op), one_minus), ops::bessel_k0e(s, x));
    times(s, g, d)
}

/// `Dawsn`: `g·(1 - 2·x·y)`.
fn dawsn_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let x = x(op)?;
    let two_xy = ops::mul(s, c(s, &x, 2.0), ops::mul(s, x.clone(), y(op)));
    times(s, g, ops::sub(s, c(s, &x, 1.0), two_xy))
}

/// `Expint`: `g·eˣ/x`.
fn expint_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let x = x(op)?;
    times(s, g, ops::div(s, ops::exp(s, x.clone()), x))
}

/// `FresnelCos`: `g·cos(πx²/2)`; `FresnelSin`: `g·sin(πx²/2)`.
fn fresnel_grad(s: &Scope, op: &GradOp, g: &[Output], cos: bool) -> Grads {
    let x = x(op)?;
    let t = ops::mul(s, c(s, &x, FRAC_PI_2), ops::square(s, x));
    times(s, g, if cos { ops::cos(s, t) } else { ops::sin(s, t) })
}

fn fresnel_cos_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    fresnel_grad(s, op, g, true)
}

fn fresnel_sin_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    fresnel_grad(s, op, g, false)
}

/// `Spence`: `g·ln x / (1 - x)`, -g at x = 1.
fn spence_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let x = x(op)?;
    let at_one = ops::equal(s, x.clone(), c(s, &x, 1.0));
    let safe = ops::select_v2(s, at_one.clone(), c(s, &x, 2.0), x.clone());
    let d = ops::div(s, ops::log(s, safe.clone()), ops::sub(s, c(s, &x, 1.0), safe));
    times(s, g, ops::select_v2(s, at_one, c(s, &x, -1.0), d))
}

pub(super) fn register(r: &mut GradRegistry) {
    r.add("BesselJ0", j0_grad);
    r.add("BesselJ1", j1_grad);
    r.add("BesselY0", y0_grad);
    r.add("BesselY1", y1_grad);
    r.add("BesselK0", k0_grad);
    r.add("BesselK0e", k0e_grad);
    r.add("BesselK1", k1_grad);
    r.add("BesselK1e", k1e_grad);
    r.add("Dawsn", dawsn_grad);
    r.add("Expint", expint_grad);
    r.add("FresnelCos", fresnel_cos_grad);
    r.add("FresnelSin", fresnel_sin_grad);
    r.add("Spence", spence_grad);
}
