//! `RandomGammaGrad(alpha, sample)`: the derivative of a gamma(alpha, 1) sample with respect
//! to alpha when the sample moves with alpha at a fixed CDF value (implicit
//! reparameterization, Figurnov et al. 2018): `dx/da = -(dP(a, x)/da) / (dP(a, x)/dx)`.
//! Broadcasting, float32 and float64; the gradient of `RandomGamma` and of the stateless
//! gamma ops uses it.
//!
//! Computed as Eigen computes it for TensorFlow (`gamma_sample_der_alpha`), in the element
//! type: forward-mode differentiation of Cephes' power series of P (for `x <= max(1, a)`) or
//! of its continued fraction of Q, at most 200 (float) or 500 (double) terms, stopping when
//! the derivative's term drops below half an ulp; 0 where `x^a e^-x / Γ(a)` underflows or
//! `x` is 0 or infinite, NaN outside `a > 0, x >= 0`.
// Cephes' series coefficients are written as published.
#![allow(clippy::excessive_precision)]

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, Status, Tensor, TensorType};

use super::rejection::check_type;
use crate::math::bcast::{bcast_apply, Plan};
use crate::real::Real;
use crate::{KernelRegistry, OpContext, OpKernel};

/// The element types, with Cephes' constants for them.
trait Igam: Real {
    /// Half an ulp of 1 (Cephes' `MACHEP`).
    const MACHEP: Self;
    /// Rescaling threshold of the continued fraction.
    const BIG: Self;
    /// Its rescaling factor.
    const BIGINV: Self;
    /// Iteration cap of the derivative modes.
    const ITERS: usize;
    /// The largest finite value.
    const MAX: Self;
    /// NaN.
    const NAN: Self;
    /// Coefficients (highest power first) of [`Igam::digamma_tail`]'s polynomial in `1/s²`.
    const TAIL: &'static [f64];
    /// `s` from which that series is negligible.
    const TAIL_END: f64;
    /// ln |Γ(x)|.
    fn lgamma(self) -> Self;

    /// ln of the largest finite value.
    fn log_max() -> Self {
        Self::MAX.ln()
    }

    /// The asymptotic series of `log(s) - 1/(2s) - ψ(s)` for `s >= 10` (0 where negligible).
    fn digamma_tail(s: Self) -> Self {
        if s < Self::from_f64(Self::TAIL_END) {
            let z = Self::ONE / (s * s);
            z * horner(z, Self::TAIL)
        } else {
            Self::ZERO
        }
    }
}

/// `((c[0] z + c[1]) z + ...) z + c[n]`.
fn horner<T: Igam>(z: T, c: &[f64]) -> T {
    c.iter().skip(1).fold(T::from_f64(c[0]), |acc, &k| acc * z + T::from_f64(k))
}

impl Igam for f32 {
    const MACHEP: f32 = f32::EPSILON / 2.0;
    const BIG: f32 = 1.0 / (f32::EPSILON / 2.0);
    const BIGINV: f32 = f32::EPSILON / 2.0;
    const ITERS: usize = 200;
    const MAX: f32 = f32::MAX;
    const NAN: f32 = f32::NAN;
    const TAIL: &'static [f64] =
        &[-4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3, 8.33333333333333333333E-2];
    const TAIL_END: f64 = 1.0e8;
    fn lgamma(self) -> f32 {
        libm::lgammaf_r(self).0
    }
}

impl Igam for f64 {
    const MACHEP: f64 = f64::EPSILON / 2.0;
    const BIG: f64 = 1.0 / f64::EPSILON;
    const BIGINV: f64 = f64::EPSILON;
    const ITERS: usize = 500;
    const MAX: f64 = f64::MAX;
    const NAN: f64 = f64::NAN;
    const TAIL: &'static [f64] = &[
        8.33333333333333333333E-2,
        -2.10927960927960927961E-2,
        7.57575757575757575758E-3,
        -4.16666666666666666667E-3,
        3.96825396825396825397E-3,
        -8.33333333333333333333E-3,
        8.33333333333333333333E-2,
    ];
    const TAIL_END: f64 = 1.0e17;
    fn lgamma(self) -> f64 {
        libm::lgamma_r(self).0
    }
}

/// ψ(x) for `x > 0`: the recurrence up to 10, then the asymptotic series (Cephes' `psi`).
fn digamma<T: Igam>(x: T) -> T {
    let ten = T::from_f64(10.0);
    let (mut s, mut w) = (x, T::ZERO);
    while s < ten {
        w += T::ONE / s;
        s += T::ONE;
    }
    s.ln() - T::from_f64(0.5) / s - T::digamma_tail(s) - w
}

/// `x^a e^-x / Γ(a)`, 0 where its logarithm is below the smallest or NaN.
fn main_term<T: Igam>(a: T, x: T) -> T {
    let log_ax = a * x.ln() - x - a.lgamma();
    if log_ax < -T::log_max() || Real::is_nan(log_ax) {
        T::ZERO
    } else {
        log_ax.exp()
    }
}

/// `-dx/da` from Q's continued fraction (`x > 1`, `x > a`).
fn fraction<T: Igam>(a: T, x: T) -> T {
    if Real::is_infinite(x) || main_term(a, x) == T::ZERO {
        return T::ZERO;
    }
    let two = T::from_f64(2.0);
    let (mut y, mut c) = (T::ONE - a, T::ZERO);
    let mut z = x + y + T::ONE;
    let (mut pkm2, mut qkm2, mut pkm1) = (T::ONE, x, x + T::ONE);
    let mut qkm1 = z * x;
    let mut ans = pkm1 / qkm1;
    let (mut dpkm2, mut dqkm2, mut dpkm1, mut dqkm1) = (T::ZERO, T::ZERO, T::ZERO, -x);
    let mut dans = (dpkm1 - ans * dqkm1) / qkm1;
    for _ in 0..T::ITERS {
        c += T::ONE;
        y += T::ONE;
        z += two;
        let yc = y * c;
        let pk = pkm1 * z - pkm2 * yc;
        let qk = qkm1 * z - qkm2 * yc;
        let dpk = dpkm1 * z - pkm1 - dpkm2 * yc + pkm2 * c;
        let dqk = dqkm1 * z - qkm1 - dqkm2 * yc + qkm2 * c;
        if qk != T::ZERO {
            ans = pk / qk;
            let prev = dans;
            dans = (dpk - ans * dqk) / qk;
            if (dans - prev).abs() <= T::MACHEP {
                break;
            }
        }
        (pkm2, pkm1, qkm2, qkm1) = (pkm1, pk, qkm1, qk);
        (dpkm2, dpkm1, dqkm2, dqkm1) = (dpkm1, dpk, dqkm1, dqk);
        if pk.abs() > T::BIG {
            pkm2 = pkm2 * T::BIGINV;
            pkm1 = pkm1 * T::BIGINV;
            qkm2 = qkm2 * T::BIGINV;
            qkm1 = qkm1 * T::BIGINV;
            dpkm2 = dpkm2 * T::BIGINV;
            dpkm1 = dpkm1 * T::BIGINV;
            dqkm2 = dqkm2 * T::BIGINV;
            dqkm1 = dqkm1 * T::BIGINV;
        }
    }
    let dlogax_da = x.ln() - digamma(a);
    -(dans + ans * dlogax_da) * x
}

/// `dx/da` from P's power series (`x <= max(1, a)`).
fn series<T: Igam>(a: T, x: T) -> T {
    if main_term(a, x) == T::ZERO {
        return T::ZERO;
    }
    let (mut r, mut c, mut ans) = (a, T::ONE, T::ONE);
    let (mut dc, mut dans) = (T::ZERO, T::ZERO);
    for _ in 0..T::ITERS {
        r += T::ONE;
        let term = x / r;
        let dterm = -x / (r * r);
        dc = term * dc + dterm * c;
        dans += dc;
        c = c * term;
        ans += c;
        if dc.abs() <= T::MACHEP * dans.abs() {
            break;
        }
    }
    let dlogax_da = x.ln() - digamma(a + T::ONE);
    -(dans + ans * dlogax_da) * x / a
}

/// The derivative of a gamma(a, 1) sample `x` with respect to `a`.
fn sample_der_alpha<T: Igam>(a: T, x: T) -> T {
    if x == T::ZERO {
        return T::ZERO;
    }
    if x < T::ZERO || a <= T::ZERO || Real::is_nan(a) || Real::is_nan(x) {
        return T::NAN;
    }
    if x > T::ONE && x > a {
        -fraction(a, x)
    } else {
        series(a, x)
    }
}

/// The f64 form, for tests and other kernels.
pub fn gamma_sample_der_alpha(a: f64, x: f64) -> f64 {
    sample_der_alpha(a, x)
}

/// The f32 form (computed in f32, as TensorFlow does for float32).
pub fn gamma_sample_der_alpha_f32(a: f32, x: f32) -> f32 {
    sample_der_alpha(a, x)
}

struct RandomGammaGrad {
    dtype: DataType,
}

fn apply<T: Igam + TensorType>(ctx: &mut OpContext, a: &Tensor, x: &Tensor) -> Result<(), Status> {
    let plan = Plan::new([a.dims(), x.dims()])
        .ok_or_else(|| ctx.error(format!("Incompatible shapes: {} vs. {}", a.shape(), x.shape())))?;
    let mut out = vec![T::ZERO; plan.len()];
    bcast_apply(&plan, a.as_slice::<T>()?, x.as_slice::<T>()?, &mut out, sample_der_alpha::<T>);
    ctx.set_output(0, Tensor::new(plan.out_shape(), out)?)
}

impl OpKernel for RandomGammaGrad {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let (a, x) = (ctx.input(0)?, ctx.input(1)?);
        for (t, what) in [(&a, "alpha"), (&x, "sample")] {
            if t.dtype() != self.dtype {
                return Err(ctx.error(format!("{what} must be {}, got {}", self.dtype.tf_name(), t.dtype().tf_name())));
            }
        }
        match self.dtype {
            DataType::Float => apply::<f32>(ctx, &a, &x),
            _ => apply::<f64>(ctx, &a, &x),
        }
    }
}

fn make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(RandomGammaGrad { dtype: check_type(n, "T", &[DataType::Float, DataType::Double])? }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("RandomGammaGrad", make);
}
