//! Modified Bessel functions of the first kind of orders 0 and 1: `BesselI0`, `BesselI1`
//! and the exponentially scaled `BesselI0e = e^(-|x|)·I0(x)`, `BesselI1e = e^(-|x|)·I1(x)`
//! (`tf.math.bessel_i0e`, `tf.math.special.bessel_i1`, …) for float, double, half and
//! bfloat16. Every type computes in f64 and rounds once.
//!
//! For |x| ≤ 30 the power series `Iν(x) = Σ (x/2)^(2k+ν) / (k!·(k+ν)!)` (positive terms,
//! so no cancellation) is scaled by e^(-|x|); beyond, the asymptotic expansion
//! `e^(-x)·Iν(x) ≈ (2πx)^(-1/2)·Σ (-1)^k·Π_{j≤k}(4ν² - (2j-1)²) / (k!·(8x)^k)`, whose terms
//! fall below 1e-17 long before they would start to grow again at k ≈ 2x.

use ferroflow_core::half::{bf16, f16};
use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, Status};

use super::common::kernel_type;
use super::unary::unary_same;
use crate::{KernelRegistry, OpKernel};

const SERIES_LIMIT: f64 = 30.0;

/// `e^(-a)·Iν(a)` for a ≥ 0 and ν ∈ {0, 1}.
fn scaled(a: f64, nu: u32) -> f64 {
    if a.is_nan() {
        return f64::NAN;
    }
    if a <= SERIES_LIMIT {
        let q = a * a / 4.0;
        let mut term = if nu == 0 { 1.0 } else { a / 2.0 };
        let mut sum = term;
        let mut k = 0.0;
        while term > sum * 1e-18 {
            k += 1.0;
            term *= q / (k * (k + nu as f64));
            sum += term;
        }
        return sum * (-a).exp();
    }
    if a.is_infinite() {
        return 0.0;
    }
    let mu = 4.0 * (nu * nu) as f64;
    let mut term = 1.0;
    let mut sum = 1.0;
    for k in 1..200 {
        let odd = (2 * k - 1) as f64;
        let next = -term * (mu - odd * odd) / (k as f64 * 8.0 * a);
        if next.abs() >= term.abs() {
            break;
        }
        term = next;
        sum += term;
        if term.abs() < 1e-17 * sum.abs() {
            break;
        }
    }
    sum / (2.0 * std::f64::consts::PI * a).sqrt()
}

/// `e^(-|x|)·I0(x)`.
pub fn i0e(x: f64) -> f64 {
    scaled(x.abs(), 0)
}

/// `e^(-|x|)·I1(x)` (odd in x).
pub fn i1e(x: f64) -> f64 {
    let v = scaled(x.abs(), 1);
    if x < 0.0 {
        -v
    } else {
        v
    }
}

/// `I0(x)` (infinite once e^|x| overflows).
pub fn i0(x: f64) -> f64 {
    i0e(x) * x.abs().exp()
}

/// `I1(x)`.
pub fn i1(x: f64) -> f64 {
    i1e(x) * x.abs().exp()
}

const FLOATS: &[DataType] = &[DataType::Float, DataType::Double, DataType::Half, DataType::BFloat16];

op_kernel! {
    /// An elementwise real function computed in float64 for every float type (the Bessel and
    /// the other special functions).
    struct RealFn { f: fn(f64) -> f64, ty: DataType }
    fn compute(&self, ctx) {
        let f = self.f;
        match self.ty {
            DataType::Half => unary_same::<f16>(ctx, |x: f16| f16::from_f64(f(x.to_f64()))),
            DataType::BFloat16 => unary_same::<bf16>(ctx, |x: bf16| bf16::from_f64(f(x.to_f64()))),
            DataType::Float => unary_same::<f32>(ctx, |x: f32| f(x as f64) as f32),
            _ => unary_same::<f64>(ctx, f),
        }
    }
}

/// The kernel of `n` computing `f` on its input of type `T` (a float type).
pub(crate) fn real_fn_kernel(n: &NodeDef, f: fn(f64) -> f64) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(RealFn { f, ty: kernel_type(n, "T", FLOATS)? }))
}

/// Registers the kernels.
pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("BesselI0", |n| real_fn_kernel(n, i0));
    r.add("BesselI0e", |n| real_fn_kernel(n, i0e));
    r.add("BesselI1", |n| real_fn_kernel(n, i1));
    r.add("BesselI1e", |n| real_fn_kernel(n, i1e));
}
