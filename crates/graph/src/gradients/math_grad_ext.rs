//! Gradients of the trigonometric, hyperbolic, error-function, gamma-family and Bessel unary ops
//! and of the broadcasting binary ops `Atan2`, `Xlogy`, `Xlog1py`, `Xdivy`, `MulNoNan`,
//! `NextAfter`, `Igamma`, `Igammac`, `Polygamma`, `Zeta`, `Betainc` and of `L2Loss`
//! (TensorFlow's `math_grad.py` and `nn_grad.py`).

use std::f64::consts::PI;

use ferroflow_core::{NodeAttrs, Status};

use super::math_grad::{reduce_gradient_args, scalar};
use super::nn_grad_activation as act;
use super::registry::GradRegistry;
use super::registry::Grads;
use crate::gradients::{GradFn, GradOp};
use crate::ops;
use crate::scope::{Output, Scope};

fn input(op: &GradOp, i: usize) -> Result<Output, Status> {
    op.inputs.get(i).cloned().ok_or_else(|| Status::internal(format!("{} has no input {i}", op.node.op)))
}

fn y(op: &GradOp) -> Output {
    op.outputs[0].clone()
}

fn one(o: Output) -> Grads {
    Ok(vec![Some(o)])
}

fn c(s: &Scope, like: &Output, v: f64) -> Output {
    scalar(s, like.dtype, v)
}

/// `g * f` for the unary ops whose derivative is `f`.
fn times(s: &Scope, g: &[Output], f: Output) -> Grads {
    one(ops::mul(s, g[0].clone(), f))
}

pub(super) fn expm1_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    times(s, g, ops::exp(s, input(op, 0)?))
}

pub(super) fn sin_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    times(s, g, ops::cos(s, input(op, 0)?))
}

/// `Cos`: `-g sin x`.
pub(super) fn cos_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    one(ops::mul(s, ops::neg(s, g[0].clone()), ops::sin(s, input(op, 0)?)))
}

/// `Tan`: `g sec² x`.
pub(super) fn tan_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let sec = ops::reciprocal(s, ops::cos(s, input(op, 0)?));
    times(s, g, ops::square(s, sec))
}

/// `1 / sqrt(1 - x²)`.
fn inv_sqrt_one_minus_sq(s: &Scope, x: Output) -> Output {
    let d = ops::sub(s, c(s, &x, 1.0), ops::square(s, x.clone()));
    ops::reciprocal(s, ops::sqrt(s, d))
}

pub(super) fn asin_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    times(s, g, inv_sqrt_one_minus_sq(s, input(op, 0)?))
}

pub(super) fn acos_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    one(ops::mul(s, ops::neg(s, g[0].clone()), inv_sqrt_one_minus_sq(s, input(op, 0)?)))
}

/// `Atan`: `g / (1 + x²)`.
pub(super) fn atan_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let x = input(op, 0)?;
    times(s, g, ops::reciprocal(s, ops::add_v2(s, c(s, &x, 1.0), ops::square(s, x.clone()))))
}

pub(super) fn sinh_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    times(s, g, ops::cosh(s, input(op, 0)?))
}

pub(super) fn cosh_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    times(s, g, ops::sinh(s, input(op, 0)?))
}

/// `Asinh`: `g / cosh y`.
pub(super) fn asinh_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    one(ops::real_div(s, g[0].clone(), ops::cosh(s, y(op))))
}

/// `Acosh`: `g / sinh y`.
pub(super) fn acosh_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    one(ops::real_div(s, g[0].clone(), ops::sinh(s, y(op))))
}

/// `Atanh`: `g / (1 - x²)`.
pub(super) fn atanh_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let x = input(op, 0)?;
    times(s, g, ops::reciprocal(s, ops::sub(s, c(s, &x, 1.0), ops::square(s, x.clone()))))
}

/// `k · exp(±v²·m)` times `g`: the error-function family's derivatives.
fn gauss(s: &Scope, g: &[Output], v: Output, k: f64, m: f64) -> Grads {
    let e = ops::exp(s, ops::mul(s, c(s, &v, m), ops::square(s, v.clone())));
    one(ops::mul(s, ops::mul(s, g[0].clone(), c(s, &v, k)), e))
}

/// `Erf`: `2/√π · e^(-x²) · g`.
pub(super) fn erf_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    gauss(s, g, input(op, 0)?, 2.0 / PI.sqrt(), -1.0)
}

/// `Erfc`: `-2/√π · e^(-x²) · g`.
pub(super) fn erfc_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    gauss(s, g, input(op, 0)?, -2.0 / PI.sqrt(), -1.0)
}

/// `Erfinv`: `√π/2 · e^(y²) · g`.
pub(super) fn erfinv_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    gauss(s, g, y(op), PI.sqrt() / 2.0, 1.0)
}

/// `Ndtri`: `√(2π) · e^(y²/2) · g`.
pub(super) fn ndtri_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    gauss(s, g, y(op), (2.0 * PI).sqrt(), 0.5)
}

/// `Lgamma`: `g ψ(x)`.
pub(super) fn lgamma_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    times(s, g, ops::digamma(s, input(op, 0)?))
}

/// `Digamma`: `g ψ⁽¹⁾(x)`.
pub(super) fn digamma_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let x = input(op, 0)?;
    times(s, g, ops::polygamma(s, c(s, &x, 1.0), x.clone()))
}

/// `BesselI0`: `g · I1(x)`.
pub(super) fn bessel_i0_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    times(s, g, ops::bessel_i1(s, input(op, 0)?))
}

/// `BesselI0e`: `g · (I1e(x) - sign(x)·y)`.
pub(super) fn bessel_i0e_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let x = input(op, 0)?;
    let d = ops::sub(s, ops::bessel_i1e(s, x.clone()), ops::mul(s, ops::sign(s, x), y(op)));
    times(s, g, d)
}

/// `d/dx` of `I1` or `I1e` away from 0 is `i0(x) - y·(k + 1/x)` (`i0` the same scaling,
/// `k` 0 or sign(x)); at 0 it is ½. The quotient is taken of a safe `x` (1 at 0), so that
/// no NaN reaches a second derivative through the branch not taken.
fn bessel_i1_family(s: &Scope, op: &GradOp, g: &[Output], scaled: bool) -> Grads {
    let x = input(op, 0)?;
    let zero = ops::equal(s, x.clone(), c(s, &x, 0.0));
    let safe = ops::select_v2(s, zero.clone(), c(s, &x, 1.0), x.clone());
    let (i0, mut k) = if scaled {
        (ops::bessel_i0e(s, x.clone()), ops::sign(s, x.clone()))
    } else {
        (ops::bessel_i0(s, x.clone()), c(s, &x, 0.0))
    };
    k = ops::add(s, k, ops::reciprocal(s, safe));
    let d = ops::sub(s, i0, ops::mul(s, y(op), k));
    times(s, g, ops::select_v2(s, zero, c(s, &x, 0.5), d))
}

/// `BesselI1`: `g · (I0(x) - y/x)`, ½·g at 0.
pub(super) fn bessel_i1_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    bessel_i1_family(s, op, g, false)
}

/// `BesselI1e`: `g · (I0e(x) - y·(sign(x) + 1/x))`, ½·g at 0.
pub(super) fn bessel_i1e_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    bessel_i1_family(s, op, g, true)
}

/// `L2Loss`: `t · g`.
pub(super) fn l2_loss_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    one(ops::mul(s, input(op, 0)?, g[0].clone()))
}

fn operands(op: &GradOp) -> Result<(Output, Output), Status> {
    Ok((input(op, 0)?, input(op, 1)?))
}

/// Each operand's gradient summed over the axes it was broadcast along.
fn reduced(s: &Scope, x: &Output, y: &Output, gx: Option<Output>, gy: Option<Output>) -> Grads {
    let (gx, gy) = reduce_gradient_args(s, x, y, gx, gy);
    Ok(vec![gx, gy])
}

/// `Atan2(y, x)`: `(g x / (x² + y²), -g y / (x² + y²))`.
pub(super) fn atan2_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (y, x) = operands(op)?;
    let den = ops::add_v2(s, ops::square(s, y.clone()), ops::square(s, x.clone()));
    let gi = ops::real_div(s, g[0].clone(), den);
    let gy = ops::mul(s, x.clone(), gi.clone());
    let gx = ops::mul(s, ops::neg(s, y.clone()), gi);
    reduced(s, &y, &x, Some(gy), Some(gx))
}

/// `1` where `x != 0`, else `0`, in x's type.
fn not_zero(s: &Scope, x: &Output) -> Output {
    ops::cast(s, ops::not_equal(s, x.clone(), c(s, x, 0.0)), x.dtype)
}

/// `Xlogy`: `(xlogy(x ≠ 0, y) g, xdivy(x, y) g)`.
pub(super) fn xlogy_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (x, y) = operands(op)?;
    let px = ops::xlogy(s, not_zero(s, &x), y.clone());
    let py = ops::xdivy(s, x.clone(), y.clone());
    reduced(s, &x, &y, Some(ops::mul(s, px, g[0].clone())), Some(ops::mul(s, py, g[0].clone())))
}

/// `Xlog1py`: `(xlog1py(x ≠ 0, y) g, xdivy(x, y + 1) g)`.
pub(super) fn xlog1py_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (x, y) = operands(op)?;
    let px = ops::xlog1py(s, not_zero(s, &x), y.clone());
    let py = ops::xdivy(s, x.clone(), ops::add_v2(s, y.clone(), c(s, &y, 1.0)));
    reduced(s, &x, &y, Some(ops::mul(s, px, g[0].clone())), Some(ops::mul(s, py, g[0].clone())))
}

/// `Xdivy`: `(xdivy(x ≠ 0, y) g, xdivy(-x, y²) g)`.
pub(super) fn xdivy_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (x, y) = operands(op)?;
    let px = ops::xdivy(s, not_zero(s, &x), y.clone());
    let py = ops::xdivy(s, ops::neg(s, x.clone()), ops::square(s, y.clone()));
    reduced(s, &x, &y, Some(ops::mul(s, px, g[0].clone())), Some(ops::mul(s, py, g[0].clone())))
}

/// `MulNoNan`: `(mul_no_nan(g, y), mul_no_nan(x, g))`.
pub(super) fn mul_no_nan_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (x, y) = operands(op)?;
    let gx = ops::mul_no_nan(s, g[0].clone(), y.clone());
    let gy = ops::mul_no_nan(s, x.clone(), g[0].clone());
    reduced(s, &x, &y, Some(gx), Some(gy))
}

/// `NextAfter`: `(g, 0)`.
pub(super) fn next_after_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (x1, x2) = operands(op)?;
    reduced(s, &x1, &x2, Some(g[0].clone()), Some(ops::zeros_like(s, g[0].clone())))
}

/// `Igamma`: `(IgammaGradA(a, x) g, e^(-x + (a - 1) ln x - lgamma(a)) g)`; `Igammac` negates.
fn igamma_like(s: &Scope, op: &GradOp, g: &[Output], sign: f64) -> Grads {
    let (a, x) = operands(op)?;
    let pa = ops::igamma_grad_a(s, a.clone(), x.clone());
    let am1 = ops::sub(s, a.clone(), c(s, &a, 1.0));
    let log_px = ops::sub(
        s,
        ops::add_v2(s, ops::neg(s, x.clone()), ops::mul(s, am1, ops::log(s, x.clone()))),
        ops::lgamma(s, a.clone()),
    );
    let px = ops::exp(s, log_px);
    let (mut ga, mut gx) = (ops::mul(s, pa, g[0].clone()), ops::mul(s, px, g[0].clone()));
    if sign < 0.0 {
        (ga, gx) = (ops::neg(s, ga), ops::neg(s, gx));
    }
    reduced(s, &a, &x, Some(ga), Some(gx))
}

pub(super) fn igamma_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    igamma_like(s, op, g, 1.0)
}

pub(super) fn igammac_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    igamma_like(s, op, g, -1.0)
}

/// `Polygamma(n, x)`: `(None, ψ⁽ⁿ⁺¹⁾(x) g)`.
pub(super) fn polygamma_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (n, x) = operands(op)?;
    let px = ops::polygamma(s, ops::add_v2(s, n.clone(), c(s, &n, 1.0)), x.clone());
    reduced(s, &n, &x, None, Some(ops::mul(s, px, g[0].clone())))
}

/// `Zeta(x, q)`: `(None, -x ζ(x + 1, q) g)`.
pub(super) fn zeta_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (x, q) = operands(op)?;
    let pq = ops::mul(s, ops::neg(s, x.clone()), ops::zeta(s, ops::add_v2(s, x.clone(), c(s, &x, 1.0)), q.clone()));
    reduced(s, &x, &q, None, Some(ops::mul(s, pq, g[0].clone())))
}

/// `Betainc(a, b, x)`: only `x` is differentiated: `x^(a-1) (1-x)^(b-1) / B(a, b) · g`
/// (in log space, through `xlogy`/`xlog1py` so the tails are 0 at a = 1 or b = 1).
pub(super) fn betainc_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (a, b, x) = (input(op, 0)?, input(op, 1)?, input(op, 2)?);
    let log_beta = ops::sub(
        s,
        ops::add_v2(s, ops::lgamma(s, a.clone()), ops::lgamma(s, b.clone())),
        ops::lgamma(s, ops::add_v2(s, a.clone(), b.clone())),
    );
    let one_ = c(s, &a, 1.0);
    let t1 = ops::xlog1py(s, ops::sub(s, b.clone(), one_.clone()), ops::neg(s, x.clone()));
    let t2 = ops::xlogy(s, ops::sub(s, a.clone(), one_), x.clone());
    let px = ops::exp(s, ops::sub(s, ops::add_v2(s, t1, t2), log_beta));
    // x's gradient is summed over the axes x was broadcast along: against the output's shape
    // (TensorFlow compares with a's shape, which fails when only b is not a scalar).
    let (_, gx) = reduce_gradient_args(s, &y(op), &x, None, Some(ops::mul(s, px, g[0].clone())));
    Ok(vec![None, None, gx])
}

/// `EuclideanNorm`: `x / (norm / g)` with the reduced dims kept; the axes get none.
pub(super) fn euclidean_norm_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (x, axes) = operands(op)?;
    let (mut norm, mut grad) = (y(op), g[0].clone());
    if !op.node.attr_bool("keep_dims").unwrap_or(false) {
        let kept = super::math_grad_reduce::kept_shape(s, &x, &axes);
        norm = ops::reshape(s, norm, kept.clone());
        grad = ops::reshape(s, grad, kept);
    }
    Ok(vec![Some(ops::real_div(s, x, ops::real_div(s, norm, grad))), None])
}

/// Registers this file's gradients and those of `nn_grad_activation.rs`, and marks the
/// family's non-differentiable ops (listed here so that `table.rs` needs one line).
pub(super) fn register(r: &mut GradRegistry) {
    r.no_gradient(&[
        "HistogramFixedWidth",
        "Rint",
        "IsNan",
        "IsInf",
        "IsFinite",
        "Invert",
        "BitwiseAnd",
        "BitwiseOr",
        "BitwiseXor",
        "LeftShift",
        "RightShift",
        "TruncateDiv",
        "ApproximateEqual",
    ]);
    for (name, f) in [
        ("Expm1", expm1_grad as GradFn),
        ("Sin", sin_grad),
        ("Cos", cos_grad),
        ("Tan", tan_grad),
        ("Asin", asin_grad),
        ("Acos", acos_grad),
        ("Atan", atan_grad),
        ("Sinh", sinh_grad),
        ("Cosh", cosh_grad),
        ("Asinh", asinh_grad),
        ("Acosh", acosh_grad),
        ("Atanh", atanh_grad),
        ("Erf", erf_grad),
        ("Erfc", erfc_grad),
        ("Erfinv", erfinv_grad),
        ("Ndtri", ndtri_grad),
        ("Lgamma", lgamma_grad),
        ("Digamma", digamma_grad),
        ("BesselI0", bessel_i0_grad),
        ("BesselI0e", bessel_i0e_grad),
        ("BesselI1", bessel_i1_grad),
        ("BesselI1e", bessel_i1e_grad),
        ("L2Loss", l2_loss_grad),
        ("EuclideanNorm", euclidean_norm_grad),
        ("Atan2", atan2_grad),
        ("Xlogy", xlogy_grad),
        ("Xlog1py", xlog1py_grad),
        ("Xdivy", xdivy_grad),
        ("MulNoNan", mul_no_nan_grad),
        ("NextAfter", next_after_grad),
        ("Igamma", igamma_grad),
        ("Igammac", igammac_grad),
        ("Polygamma", polygamma_grad),
        ("Zeta", zeta_grad),
        ("Betainc", betainc_grad),
        // Smooth and leaky activations. (nn_grad_activation.rs)
        ("Softplus", act::softplus_grad),
        ("Softsign", act::softsign_grad),
        ("Selu", act::selu_grad),
        ("LeakyRelu", act::leaky_relu_grad),
        ("SoftplusGrad", act::softplus_grad_grad),
        ("SeluGrad", act::selu_grad_grad),
        ("LeakyReluGrad", act::leaky_relu_grad_grad),
    ] {
        r.add(name, f);
    }
}
