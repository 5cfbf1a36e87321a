//! Special functions in f64 with TensorFlow's (Eigen's) domain conventions: the inverse
//! error functions, digamma, Hurwitz zeta and polygamma, the regularized incomplete gamma
//! functions (and ∂P/∂a), the regularized incomplete beta function. The error functions,
//! lgamma and the inverse hyperbolic functions come from `libm`.
// Series coefficients are written as published; dual numbers divide by multiplying with the reciprocal.
#![allow(clippy::excessive_precision, clippy::suspicious_arithmetic_impl)]

use std::f64::consts::PI;
use std::ops::{Add, Div, Mul, Sub};

/// Unit roundoff of f64 (the series and continued fractions stop below it).
const EPS: f64 = f64::EPSILON / 2.0;
/// Smallest value a Lentz denominator may take.
const TINY: f64 = 1e-300;
/// Iteration cap of the series and continued fractions.
const MAX_ITER: usize = 10_000;
/// ln of the largest f64.
const MAX_LOG: f64 = 709.782712893384;

/// ln |Γ(x)|.
pub fn lgamma(x: f64) -> f64 {
    libm::lgamma_r(x).0
}

/// Halley's step for solving `f(z) = 0` where `f'' / f' = -2z` (erf and erfc).
fn halley(z: f64, f: f64, df: f64) -> f64 {
    if df == 0.0 || !df.is_finite() {
        return 0.0;
    }
    let r = f / df;
    r / (1.0 + z * r)
}

/// Winitzki's closed-form estimate of `erfinv`, from `ln(1 - x²)`.
fn erfinv_guess(ln_1mx2: f64) -> f64 {
    const A: f64 = 0.147;
    let t = 2.0 / (PI * A) + 0.5 * ln_1mx2;
    ((t * t - ln_1mx2 / A).sqrt() - t).sqrt()
}

/// The `z` with `erfc(z) = c`, for `c` in `(0, 2)`.
fn erfcinv(c: f64) -> f64 {
    if c > 1.0 {
        return -erfcinv(2.0 - c);
    }
    // 1 - x² = c (2 - c) for x = 1 - c, without underflow for tiny c.
    let mut z = erfinv_guess(c.ln() + (2.0 - c).ln());
    let k = -2.0 / PI.sqrt();
    for _ in 0..6 {
        let step = halley(z, libm::erfc(z) - c, k * (-z * z).exp());
        z -= step;
        if step.abs() <= 4.0 * EPS * z.abs() {
            break;
        }
    }
    z
}

/// The inverse error function: `erfinv(±1) = ±∞`, NaN outside `[-1, 1]`.
pub fn erfinv(x: f64) -> f64 {
    let ax = x.abs();
    if x.is_nan() || ax > 1.0 {
        return f64::NAN;
    }
    if ax == 1.0 {
        return x * f64::INFINITY;
    }
    if x == 0.0 {
        return x;
    }
    if ax >= 0.5 {
        // 1 - |x| is exact here; solving erfc keeps the tail's precision.
        return erfcinv(1.0 - ax).copysign(x);
    }
    let mut z = erfinv_guess((-ax * ax).ln_1p());
    let k = 2.0 / PI.sqrt();
    for _ in 0..6 {
        let step = halley(z, libm::erf(z) - ax, k * (-z * z).exp());
        z -= step;
        if step.abs() <= 4.0 * EPS * z.abs() {
            break;
        }
    }
    z.copysign(x)
}

/// The inverse of the standard normal CDF: `ndtri(0) = -∞`, `ndtri(1) = ∞`, NaN outside.
pub fn ndtri(p: f64) -> f64 {
    if p.is_nan() || !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p == 0.0 {
        return f64::NEG_INFINITY;
    }
    if p == 1.0 {
        return f64::INFINITY;
    }
    // Φ(y) = erfc(-y / √2) / 2.
    -std::f64::consts::SQRT_2 * erfcinv(2.0 * p)
}

/// ψ(x): NaN at the poles (0, -1, …) and at -∞.
pub fn digamma(x: f64) -> f64 {
    if x.is_nan() || x == f64::NEG_INFINITY {
        return f64::NAN;
    }
    if x == f64::INFINITY {
        return x;
    }
    let mut x = x;
    let mut acc = 0.0;
    if x <= 0.0 {
        if x == x.floor() {
            return f64::NAN;
        }
        // ψ(x) = ψ(1 - x) - π cot(πx); cot has period 1, so reduce to [-1/2, 1/2] first.
        let r = x - x.round();
        acc = -PI / (PI * r).tan();
        x = 1.0 - x;
    }
    while x < 10.0 {
        acc -= 1.0 / x;
        x += 1.0;
    }
    // ψ(x) ~ ln x - 1/(2x) - Σ B₂ₖ / (2k x²ᵏ).
    let z = 1.0 / (x * x);
    let tail = z
        * (1.0 / 12.0
            - z * (1.0 / 120.0
                - z * (1.0 / 252.0 - z * (1.0 / 240.0 - z * (1.0 / 132.0 - z * (691.0 / 32760.0 - z / 12.0))))));
    acc + x.ln() - 0.5 / x - tail
}

/// (2k)! / B₂ₖ for k = 1..12: the Euler–Maclaurin correction terms of [`zeta`].
const EM: [f64; 12] = [
    12.0,
    -720.0,
    30240.0,
    -1209600.0,
    47900160.0,
    -1.8924375803183791606e9,
    7.47242496e10,
    -2.950130727918164224e12,
    1.1646782814350067249e14,
    -4.5979787224074726105e15,
    1.8152105401943546773e17,
    -7.1661652561756670113e18,
];

/// The Hurwitz zeta function `Σₖ (k + q)^-x`: ∞ at `x = 1`, NaN for `x < 1`; for `q <= 0` it
/// is defined for integer `x` only (∞ at a pole when `x` is even, NaN when odd).
pub fn zeta(x: f64, q: f64) -> f64 {
    if x.is_nan() || q.is_nan() || x < 1.0 {
        return f64::NAN;
    }
    if x == 1.0 {
        return f64::INFINITY;
    }
    if q == f64::INFINITY {
        return 0.0;
    }
    if q <= 0.0 {
        if q == q.floor() {
            return if x == x.floor() && x % 2.0 == 0.0 { f64::INFINITY } else { f64::NAN };
        }
        if x != x.floor() {
            return f64::NAN;
        }
    }
    // Direct sum of the first terms, then Euler–Maclaurin for the tail from a = q + n.
    let mut s = q.powf(-x);
    let mut a = q;
    let mut b = 0.0;
    let mut i = 0;
    while i < 9 || a <= 9.0 {
        i += 1;
        a += 1.0;
        b = a.powf(-x);
        s += b;
        if (b / s).abs() < EPS {
            return s;
        }
    }
    let w = a;
    s += b * w / (x - 1.0) - 0.5 * b;
    let mut fac = 1.0;
    let mut k = 0.0;
    for c in EM {
        fac *= x + k;
        b /= w;
        let t = fac * b / c;
        s += t;
        if (t / s).abs() < EPS {
            break;
        }
        k += 1.0;
        fac *= x + k;
        b /= w;
        k += 1.0;
    }
    s
}

/// ψ⁽ⁿ⁾(x) = (-1)ⁿ⁺¹ n! ζ(n + 1, x) for integer `n >= 1`, ψ(x) for `n = 0`, NaN otherwise.
pub fn polygamma(n: f64, x: f64) -> f64 {
    if n.is_nan() || x.is_nan() || n != n.floor() || n < 0.0 {
        return f64::NAN;
    }
    if n == 0.0 {
        return digamma(x);
    }
    let sign = if n % 2.0 == 0.0 { -1.0 } else { 1.0 };
    sign * lgamma(n + 1.0).exp() * zeta(n + 1.0, x)
}

/// A value with its derivative (forward-mode differentiation of the incomplete gamma
/// function with respect to `a`).
#[derive(Clone, Copy, Debug)]
struct Dual {
    v: f64,
    d: f64,
}

impl Dual {
    fn c(v: f64) -> Self {
        Dual { v, d: 0.0 }
    }
    fn exp(self) -> Self {
        let e = self.v.exp();
        Dual { v: e, d: e * self.d }
    }
    fn recip(self) -> Self {
        Dual { v: 1.0 / self.v, d: -self.d / (self.v * self.v) }
    }
}

impl Add for Dual {
    type Output = Dual;
    fn add(self, o: Dual) -> Dual {
        Dual { v: self.v + o.v, d: self.d + o.d }
    }
}
impl Sub for Dual {
    type Output = Dual;
    fn sub(self, o: Dual) -> Dual {
        Dual { v: self.v - o.v, d: self.d - o.d }
    }
}
impl Mul for Dual {
    type Output = Dual;
    fn mul(self, o: Dual) -> Dual {
        Dual { v: self.v * o.v, d: self.d * o.v + self.v * o.d }
    }
}
impl Div for Dual {
    type Output = Dual;
    fn div(self, o: Dual) -> Dual {
        self * o.recip()
    }
}

/// `ln(xᵃ e⁻ˣ / Γ(a))` with its derivative in `a`.
fn log_prefix(a: Dual, x: f64) -> Dual {
    Dual { v: a.v * x.ln() - x - lgamma(a.v), d: a.d * (x.ln() - digamma(a.v)) }
}

fn converged(t: Dual, s: Dual) -> bool {
    t.v.abs() <= EPS * s.v.abs() && t.d.abs() <= EPS * s.d.abs().max(TINY)
}

/// P(a, x) by its power series (for `x <= max(1, a)`).
fn igamma_series(a: Dual, x: f64) -> Dual {
    let pre = log_prefix(a, x);
    if pre.v < -MAX_LOG {
        return Dual::c(0.0);
    }
    let (mut r, mut c, mut sum) = (a, Dual::c(1.0), Dual::c(1.0));
    for _ in 0..MAX_ITER {
        r = r + Dual::c(1.0);
        c = c * Dual::c(x) / r;
        sum = sum + c;
        if converged(c, sum) {
            break;
        }
    }
    pre.exp() * sum / a
}

/// Q(a, x) by Legendre's continued fraction (modified Lentz; for `x > max(1, a)`).
fn igammac_cf(a: Dual, x: f64) -> Dual {
    let pre = log_prefix(a, x);
    if pre.v < -MAX_LOG {
        return Dual::c(0.0);
    }
    let guard = |v: Dual| if v.v.abs() < TINY { Dual { v: TINY, d: v.d } } else { v };
    let mut b = Dual::c(x + 1.0) - a;
    let mut c = Dual::c(1.0 / TINY);
    let mut d = guard(b).recip();
    let mut h = d;
    for i in 1..MAX_ITER {
        let fi = i as f64;
        let an = Dual::c(-fi) * (Dual::c(fi) - a);
        b = b + Dual::c(2.0);
        d = guard(an * d + b).recip();
        c = guard(b + an / c);
        let del = d * c;
        h = h * del;
        if (del.v - 1.0).abs() <= EPS && del.d.abs() <= EPS * h.d.abs().max(TINY) / h.v.abs().max(TINY) {
            break;
        }
    }
    pre.exp() * h
}

/// Which of P and Q the incomplete gamma functions evaluate: `None` after handling the
/// special values (`Some(p_or_q)` then holds P's value), else `Some` of the method.
enum Igamma {
    Value(f64),
    Series,
    Fraction,
}

/// P(a, x)'s special values (NaN for `a <= 0` or `x < 0`), else the method.
fn igamma_case(a: f64, x: f64) -> Igamma {
    if a.is_nan() || x.is_nan() || a <= 0.0 || x < 0.0 || (a.is_infinite() && x.is_infinite()) {
        Igamma::Value(f64::NAN)
    } else if x == 0.0 || a.is_infinite() {
        Igamma::Value(0.0)
    } else if x.is_infinite() {
        Igamma::Value(1.0)
    } else if x > 1.0 && x > a {
        Igamma::Fraction
    } else {
        Igamma::Series
    }
}

/// The regularized lower incomplete gamma function P(a, x).
pub fn igamma(a: f64, x: f64) -> f64 {
    match igamma_case(a, x) {
        Igamma::Value(v) => v,
        Igamma::Series => igamma_series(Dual::c(a), x).v,
        Igamma::Fraction => 1.0 - igammac_cf(Dual::c(a), x).v,
    }
}

/// The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x).
pub fn igammac(a: f64, x: f64) -> f64 {
    match igamma_case(a, x) {
        Igamma::Value(v) => 1.0 - v,
        Igamma::Series => 1.0 - igamma_series(Dual::c(a), x).v,
        Igamma::Fraction => igammac_cf(Dual::c(a), x).v,
    }
}

/// ∂P(a, x)/∂a (0 where P is constant in `a`, NaN outside the domain).
pub fn igamma_grad_a(a: f64, x: f64) -> f64 {
    let da = Dual { v: a, d: 1.0 };
    match igamma_case(a, x) {
        Igamma::Value(v) if v.is_nan() => v,
        Igamma::Value(_) => 0.0,
        Igamma::Series => igamma_series(da, x).d,
        Igamma::Fraction => -igammac_cf(da, x).d,
    }
}

/// The continued fraction of I_x(a, b) (modified Lentz), times its prefactor.
fn betainc_cf(a: f64, b: f64, x: f64) -> f64 {
    let guard = |v: f64| if v.abs() < TINY { TINY } else { v };
    let ln_front = a * x.ln() + b * (-x).ln_1p() - (lgamma(a) + lgamma(b) - lgamma(a + b));
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 / guard(1.0 - qab * x / qap);
    let mut h = d;
    for m in 1..MAX_ITER {
        let m = m as f64;
        let m2 = 2.0 * m;
        let even = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 / guard(1.0 + even * d);
        c = guard(1.0 + even / c);
        h *= d * c;
        let odd = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 / guard(1.0 + odd * d);
        c = guard(1.0 + odd / c);
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() <= EPS {
            break;
        }
    }
    ln_front.exp() * h / a
}

/// The regularized incomplete beta function I_x(a, b): NaN unless `a, b > 0` and
/// `0 <= x <= 1`.
pub fn betainc(a: f64, b: f64, x: f64) -> f64 {
    if a.is_nan() || b.is_nan() || x.is_nan() || a <= 0.0 || b <= 0.0 || !(0.0..=1.0).contains(&x) {
        return f64::NAN;
    }
    if x == 0.0 || x == 1.0 {
        return x;
    }
    if x > (a + 1.0) / (a + b + 2.0) {
        1.0 - betainc_cf(b, a, 1.0 - x)
    } else {
        betainc_cf(a, b, x)
    }
}
