//! `tf.math.special`'s other functions: the Bessel functions `BesselJ0`/`J1`/`Y0`/`Y1`
//! (libm's), the modified Bessel functions of the second kind `BesselK0`/`K1` and their
//! scaled forms `BesselK0e = eˣ·K0(x)`/`K1e`, Dawson's integral `Dawsn`, the exponential
//! integral `Expint` (Ei), the Fresnel integrals `FresnelCos`/`FresnelSin` and Spence's
//! function `Spence` (∫₁ˣ ln t / (1 - t) dt, the dilogarithm Li₂(1 - x)), for float, double,
//! half and bfloat16; every type computes in f64 and rounds once. The values outside each
//! function's domain are TensorFlow's (NaN, ±∞ as it gives them).

use std::f64::consts::{FRAC_PI_2, PI};

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Status};

use super::bessel::{i0, i1, real_fn_kernel};
use crate::{KernelRegistry, OpKernel};

/// Euler–Mascheroni constant γ.
const EULER: f64 = 0.577_215_664_901_532_9;
const EPS: f64 = 1e-17;

fn finite_or_nan(x: f64, f: fn(f64) -> f64) -> f64 {
    if x.is_finite() {
        f(x)
    } else {
        f64::NAN
    }
}

pub fn j0(x: f64) -> f64 {
    finite_or_nan(x, libm::j0)
}

pub fn j1(x: f64) -> f64 {
    finite_or_nan(x, libm::j1)
}

/// `Y0`: -∞ at 0 and below (as TensorFlow gives it), NaN at +∞.
pub fn y0(x: f64) -> f64 {
    match x {
        x if x.is_nan() || x == f64::INFINITY => f64::NAN,
        x if x <= 0.0 => f64::NEG_INFINITY,
        x => libm::y0(x),
    }
}

pub fn y1(x: f64) -> f64 {
    match x {
        x if x.is_nan() || x == f64::INFINITY => f64::NAN,
        x if x <= 0.0 => f64::NEG_INFINITY,
        x => libm::y1(x),
    }
}

/// `(e^x·K0(x), e^x·K1(x))` for x > 0. Below 2 the series of Abramowitz & Stegun 9.6.13
/// and 9.6.11 (through I0, I1 and harmonic numbers); from 2 Steed's continued fraction for
/// the ratio of the confluent hypergeometric functions U(½, 1, 2x) and U(3/2, 1, 2x)
/// (Thompson & Barnett), which gives both orders at once and never forms e^(-x).
fn k_scaled(x: f64) -> (f64, f64) {
    if x < 2.0 {
        let q = x * x / 4.0;
        let l = (x / 2.0).ln();
        // K0 = -(ln(x/2) + γ)·I0 + Σ_{k≥1} H_k q^k / (k!)².
        let (mut term, mut h, mut s0) = (1.0, 0.0, 0.0);
        // K1 = 1/x + ln(x/2)·I1 - (x/4)·Σ_{k≥0} (ψ(k+1) + ψ(k+2)) q^k / (k!(k+1)!).
        let (mut term1, mut s1) = (1.0, 0.0);
        let mut k = 0.0;
        while k < 10_000.0 {
            // ψ(k+1) + ψ(k+2) = -2γ + 2 H_k + 1/(k+1).
            let add1 = term1 * (-2.0 * EULER + 2.0 * h + 1.0 / (k + 1.0));
            s1 += add1;
            k += 1.0;
            h += 1.0 / k;
            term *= q / (k * k);
            term1 *= q / (k * (k + 1.0));
            let add0 = term * h;
            s0 += add0;
            if add0.abs() <= EPS * s0.abs() && add1.abs() <= EPS * s1.abs() {
                break;
            }
        }
        let k0 = -(l + EULER) * i0(x) + s0;
        let k1 = 1.0 / x + l * i1(x) - x / 4.0 * s1;
        let e = x.exp();
        return (k0 * e, k1 * e);
    }
    // Order 0: a1 = ¼ - ν² = ¼.
    let a1 = 0.25;
    let mut b = 2.0 * (1.0 + x);
    let mut d = 1.0 / b;
    let mut delh = d;
    let mut h = d;
    let (mut q1, mut q2) = (0.0, 1.0);
    let mut q = a1;
    let mut c = a1;
    let mut a = -a1;
    let mut s = 1.0 + q * delh;
    for i in 2..10_000 {
        let i = i as f64;
        a -= 2.0 * (i - 1.0);
        c = -a * c / i;
        let qnew = (q1 - b * q2) / a;
        q1 = q2;
        q2 = qnew;
        q += c * qnew;
        b += 2.0;
        d = 1.0 / (b + a * d);
        delh *= b * d - 1.0;
        h += delh;
        let dels = q * delh;
        s += dels;
        if (dels / s).abs() < EPS {
            break;
        }
    }
    h *= a1;
    let k0e = (FRAC_PI_2 / x).sqrt() / s;
    (k0e, k0e * (x + 0.5 - h) / x)
}

/// The K family outside x > 0: ∞ at 0 and below (TensorFlow's), 0 at +∞, NaN for NaN.
fn k_edge(x: f64) -> Option<f64> {
    match x {
        x if x.is_nan() => Some(f64::NAN),
        x if x <= 0.0 => Some(f64::INFINITY),
        f64::INFINITY => Some(0.0),
        _ => None,
    }
}

pub fn k0e(x: f64) -> f64 {
    k_edge(x).unwrap_or_else(|| k_scaled(x).0)
}

pub fn k1e(x: f64) -> f64 {
    k_edge(x).unwrap_or_else(|| k_scaled(x).1)
}

pub fn k0(x: f64) -> f64 {
    k_edge(x).unwrap_or_else(|| k_scaled(x).0 * (-x).exp())
}

pub fn k1(x: f64) -> f64 {
    k_edge(x).unwrap_or_else(|| k_scaled(x).1 * (-x).exp())
}

/// Dawson's integral `F(x) = e^(-x²)·∫₀ˣ e^(t²) dt` (odd): below 10 the series
/// `e^(-x²)·Σ x^(2k+1) / (k!·(2k+1))` (positive terms, no cancellation); beyond, the
/// asymptotic series `Σ (2k-1)!! / (2^(k+1)·x^(2k+1))`.
pub fn dawsn(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    let a = x.abs();
    let v = if a < 10.0 {
        let x2 = a * a;
        let mut p = a; // x^(2k+1) / k!
        let mut sum = a;
        let mut k = 0.0;
        while k < 10_000.0 {
            k += 1.0;
            p *= x2 / k;
            let t = p / (2.0 * k + 1.0);
            sum += t;
            if t <= EPS * sum {
                break;
            }
        }
        sum * (-x2).exp()
    } else if a.is_infinite() {
        0.0
    } else {
        let r = 1.0 / (2.0 * a * a);
        let (mut t, mut sum, mut k) = (1.0, 1.0, 0.0);
        while k < 10_000.0 {
            k += 1.0;
            let next = t * (2.0 * k - 1.0) * r;
            if next >= t || next < EPS * sum {
                break;
            }
            t = next;
            sum += t;
        }
        sum / (2.0 * a)
    };
    v.copysign(x)
}

/// The exponential integral `Ei(x)` for x > 0 (TensorFlow's domain: NaN below 0 and at +∞,
/// -∞ at 0): below 40 the series `γ + ln x + Σ xᵏ / (k·k!)`, beyond the asymptotic
/// `eˣ/x · Σ k!/xᵏ`.
pub fn expint(x: f64) -> f64 {
    match x {
        x if x.is_nan() || x < 0.0 || x == f64::INFINITY => f64::NAN,
        0.0 => f64::NEG_INFINITY,
        x if x < 40.0 => {
            let (mut p, mut sum, mut k) = (1.0, 0.0, 0.0);
            while k < 10_000.0 {
                k += 1.0;
                p *= x / k;
                let t = p / k;
                sum += t;
                if t <= EPS * sum {
                    break;
                }
            }
            EULER + x.ln() + sum
        }
        x => {
            let (mut t, mut sum, mut k) = (1.0, 1.0, 0.0);
            while k < 10_000.0 {
                k += 1.0;
                let next = t * k / x;
                if next >= t || next < EPS * sum {
                    break;
                }
                t = next;
                sum += t;
            }
            // eˣ/x·sum without overflowing before it must.
            (x - x.ln() + sum.ln()).exp()
        }
    }
}

/// `(C(x), S(x))` for x ≥ 0: below 1.5 their power series; beyond, a continued fraction for
/// the complementary error function at (1 - i)·√π·x/2 (evaluated by modified Lentz), from
/// which `C + iS = (1 + i)/2 · (1 - e^(iπx²/2)·h)`.
fn fresnel(x: f64) -> (f64, f64) {
    // Beyond 1e8 the phase πx²/2 has no digits left and both integrals are ½ within 4e-9.
    if x > 1e8 {
        return (0.5, 0.5);
    }
    if x < 1.5 {
        let t = FRAC_PI_2 * x * x;
        // C = Σ (-1)^k t^(2k) x / ((2k)!(4k+1)); S = Σ (-1)^k t^(2k+1) x / ((2k+1)!(4k+3)).
        let (mut p, mut c, mut s, mut n) = (x, 0.0, 0.0, 0.0);
        while n < 10_000.0 {
            let tc = p / (2.0 * n + 1.0);
            c += tc;
            p *= t / (n + 1.0);
            let ts = p / (2.0 * n + 3.0);
            s += ts;
            p *= -t / (n + 2.0);
            n += 2.0;
            if tc.abs() <= EPS * c.abs() && ts.abs() <= EPS * s.abs() {
                break;
            }
        }
        return (c, s);
    }
    let pix2 = PI * x * x;
    // Complex numbers as (re, im).
    let mul = |a: (f64, f64), b: (f64, f64)| (a.0 * b.0 - a.1 * b.1, a.0 * b.1 + a.1 * b.0);
    let inv = |a: (f64, f64)| {
        let n = a.0 * a.0 + a.1 * a.1;
        (a.0 / n, -a.1 / n)
    };
    let tiny = 1e-300;
    let mut b = (1.0, -pix2);
    let mut cc = (1.0 / tiny, 0.0);
    let mut d = inv(b);
    let mut h = d;
    let mut n = -1.0;
    for _ in 0..100_000 {
        n += 2.0;
        let a = -n * (n + 1.0);
        b.0 += 4.0;
        d = inv((a * d.0 + b.0, a * d.1 + b.1));
        let q = inv(cc);
        cc = (b.0 + a * q.0, b.1 + a * q.1);
        let del = mul(cc, d);
        h = mul(h, del);
        if (del.0 - 1.0).abs() + del.1.abs() < 1e-16 {
            break;
        }
    }
    h = mul(h, (x, -x));
    // The phase π x²/2 reduced exactly for x² that are multiples of 4 apart.
    let phase = FRAC_PI_2 * ((x * x) % 4.0);
    let e = mul((phase.cos(), phase.sin()), h);
    let w = (1.0 - e.0, -e.1);
    let cs = mul((0.5, 0.5), w);
    (cs.0, cs.1)
}

pub fn fresnel_cos(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    fresnel(x.abs()).0.copysign(x)
}

pub fn fresnel_sin(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    fresnel(x.abs()).1.copysign(x)
}

/// Li₂(z) for -1 ≤ z ≤ ½ by the series in u = -ln(1 - z) with Bernoulli numbers:
/// `Li₂(z) = u - u²/4 + Σ B₂ₖ u^(2k+1) / (2k+1)!` (|u| ≤ ln 2, far inside its radius 2π).
fn dilog_core(z: f64) -> f64 {
    const B: [f64; 12] = [
        1.0 / 6.0,
        -1.0 / 30.0,
        1.0 / 42.0,
        -1.0 / 30.0,
        5.0 / 66.0,
        -691.0 / 2730.0,
        7.0 / 6.0,
        -3617.0 / 510.0,
        43867.0 / 798.0,
        -174611.0 / 330.0,
        854513.0 / 138.0,
        -236364091.0 / 2730.0,
    ];
    let u = -(-z).ln_1p();
    let u2 = u * u;
    let mut sum = u - u2 / 4.0;
    let mut p = u; // u^(2k+1) / (2k+1)!
    for (k, b) in B.iter().enumerate() {
        let m = 2.0 * (k as f64 + 1.0);
        p *= u2 / (m * (m + 1.0));
        let t = b * p;
        sum += t;
        if t.abs() < EPS * sum.abs() {
            break;
        }
    }
    sum
}

/// Spence's function `∫₁ˣ ln t / (1 - t) dt = Li₂(1 - x)` for x ≥ 0 (NaN below and at +∞).
pub fn spence(x: f64) -> f64 {
    const PI2_6: f64 = PI * PI / 6.0;
    if x.is_nan() || x < 0.0 || x.is_infinite() {
        return f64::NAN;
    }
    if x == 0.0 {
        return PI2_6;
    }
    let z = 1.0 - x;
    if z > 0.5 {
        // Li₂(z) = π²/6 - ln z·ln(1 - z) - Li₂(1 - z), with 1 - z = x.
        return PI2_6 - z.ln() * x.ln() - dilog_core(x);
    }
    if z >= -1.0 {
        return dilog_core(z);
    }
    // Li₂(z) = -π²/6 - ½ ln²(-z) - Li₂(1/z) for z < -1.
    let l = (-z).ln();
    -PI2_6 - 0.5 * l * l - dilog_core(1.0 / z)
}

/// A function of one real argument.
type Fn1 = fn(f64) -> f64;

/// The ops and their functions.
pub(crate) const FUNCTIONS: [(&str, Fn1); 13] = [
    ("BesselJ0", j0),
    ("BesselJ1", j1),
    ("BesselY0", y0),
    ("BesselY1", y1),
    ("BesselK0", k0),
    ("BesselK0e", k0e),
    ("BesselK1", k1),
    ("BesselK1e", k1e),
    ("Dawsn", dawsn),
    ("Expint", expint),
    ("FresnelCos", fresnel_cos),
    ("FresnelSin", fresnel_sin),
    ("Spence", spence),
];

fn make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let f = FUNCTIONS
        .iter()
        .find(|(name, _)| *name == n.op)
        .map(|(_, f)| *f)
        .ok_or_else(|| n.node_error(format!("{} is not a special function", n.op)))?;
    real_fn_kernel(n, f)
}

/// Registers the kernels.
pub(crate) fn register(r: &mut KernelRegistry) {
    for (name, _) in FUNCTIONS {
        r.add(name, make);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: f64, want: f64, rtol: f64) {
        assert!((got - want).abs() <= rtol * want.abs().max(1e-300), "{got} != {want}");
    }

    /// Zero, the smallest and the largest arguments end every series and fraction.
    #[test]
    fn edges_terminate() {
        for f in FUNCTIONS.iter().map(|(_, f)| *f) {
            for x in [0.0, -0.0, 5e-324, 1e-300, 1e300, f64::MAX, -1e300, f64::NAN, f64::INFINITY] {
                let _ = f(x);
            }
        }
        assert_eq!(dawsn(0.0), 0.0);
        assert_eq!(fresnel_cos(0.0), 0.0);
        assert_eq!(fresnel_sin(0.0), 0.0);
        assert_eq!(spence(1.0), 0.0);
    }

    /// Identities that tie the pieces together (the golden cases hold TensorFlow's values).
    #[test]
    fn identities_hold() {
        // The Wronskian I0·K1 + I1·K0 = 1/x, across the series/continued-fraction seam.
        for x in [0.1, 1.0, 1.999, 2.0, 2.001, 7.5, 30.0] {
            close(i0(x) * k1(x) + i1(x) * k0(x), 1.0 / x, 1e-13);
        }
        // Dawson's function solves F' = 1 - 2xF: a central difference across x = 10.
        for x in [0.3, 3.0, 9.999, 10.0, 10.001, 25.0] {
            let h = 1e-5;
            close((dawsn(x + h) - dawsn(x - h)) / (2.0 * h), 1.0 - 2.0 * x * dawsn(x), 1e-6);
        }
        // Spence: the reflection Li₂(z) + Li₂(1 - z) = π²/6 - ln z ln(1 - z) at z = 1 - x.
        for x in [0.2, 0.7] {
            close(spence(x) + spence(1.0 - x), PI * PI / 6.0 - x.ln() * (1.0 - x).ln(), 1e-14);
        }
        // Fresnel integrals meet across the series/continued-fraction seam at 1.5.
        close(fresnel_cos(1.5 - 1e-12), fresnel_cos(1.5), 1e-10);
        close(fresnel_sin(1.5 - 1e-12), fresnel_sin(1.5), 1e-10);
        // Ei' = eˣ/x across the seam at 40.
        let h = 1e-6;
        close((expint(40.0 + h) - expint(40.0 - h)) / (2.0 * h), 40f64.exp() / 40.0, 1e-7);
    }
}
