//! More elementwise unary kernels: Expm1, the trigonometric and hyperbolic functions and
//! their inverses, Erf, Erfc, Erfinv, Ndtri, Lgamma, Digamma, Rint (float, double, half,
//! bfloat16; the narrow types compute in float32 and round once), IsNan/IsInf/IsFinite and
//! bitwise Invert.

use ferroflow_core::half::{bf16, f16};
use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, Status, Tensor, TensorType};

use super::bcast::map_unary;
use super::common::{kernel_type, typed, ElemKernel};
use super::elem::Float;
use super::special;
use super::unary::unary_same;
use crate::dispatch::dispatch;
use crate::registry::by_variant;
use crate::{KernelRegistry, OpContext, OpKernel};

use DataType::{BFloat16, Double, Float as F32, Half, Int16, Int32, Int64, Int8, UInt16, UInt32, UInt64, UInt8};

const FLOATS: &[DataType] = &[F32, Double, Half, BFloat16];
const INTS: &[DataType] = &[Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64];

/// float32 and float64 with this family's functions.
pub(crate) trait Sf: Float + TensorType {
    /// The nearest value of this type.
    fn from64(v: f64) -> Self;
    /// The value as f64.
    fn to64(self) -> f64;
    /// sin x.
    fn sin(self) -> Self;
    /// cos x.
    fn cos(self) -> Self;
    /// tan x.
    fn tan(self) -> Self;
    /// arcsin x.
    fn asin(self) -> Self;
    /// arccos x.
    fn acos(self) -> Self;
    /// arctan x.
    fn atan(self) -> Self;
    /// sinh x.
    fn sinh(self) -> Self;
    /// cosh x.
    fn cosh(self) -> Self;
    /// arsinh x.
    fn asinh(self) -> Self;
    /// arcosh x.
    fn acosh(self) -> Self;
    /// artanh x.
    fn atanh(self) -> Self;
    /// eˣ - 1.
    fn expm1(self) -> Self;
    /// erf x.
    fn erf(self) -> Self;
    /// erfc x.
    fn erfc(self) -> Self;
    /// The inverse error function with TensorFlow's rounding (see `erfinv_f32`).
    fn erfinv(self) -> Self;
    /// atan2(self, x).
    fn atan2(self, x: Self) -> Self;
    /// The next representable value after `self` toward `to`.
    fn next_after(self, to: Self) -> Self;
    /// Whether the value is ±∞.
    fn is_inf(self) -> bool;
    /// The functions computed in f64 (the special functions) for this type.
    #[inline(always)]
    fn via64(self, f: fn(f64) -> f64) -> Self {
        Self::from64(f(self.to64()))
    }
}

/// Implements [`Sf`] for `$t`: the standard-library functions, then `libm`'s (or
/// ferroflow's) function for each remaining method.
macro_rules! sf {
    ($t:ty { $($name:ident: $fun:path),* }, next_after: $next:path) => {
        impl Sf for $t {
            #[inline(always)]
            fn from64(v: f64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn to64(self) -> f64 {
                self as f64
            }
            crate::real::forward_inherent! { $t:
                sin() -> Self;
                cos() -> Self;
                tan() -> Self;
                asin() -> Self;
                acos() -> Self;
                atan() -> Self;
                sinh() -> Self;
                cosh() -> Self;
                atan2(x) -> Self;
            }
            $(
                fn $name(self) -> Self {
                    $fun(self)
                }
            )*
            fn next_after(self, to: Self) -> Self {
                $next(self, to)
            }
            #[inline(always)]
            fn is_inf(self) -> bool {
                <$t>::is_infinite(self)
            }
        }
    };
}

/// TensorFlow's double `Erf` (Eigen's rational approximation) gives NaN at ±∞, where
/// float, half and bfloat16 give ±1; ferroflow matches both.
fn erf_f64(x: f64) -> f64 {
    if x.is_infinite() {
        f64::NAN
    } else {
        libm::erf(x)
    }
}

sf!(f32 {
    asinh: libm::asinhf, acosh: libm::acoshf, atanh: libm::atanhf, expm1: libm::expm1f,
    erf: libm::erff, erfc: libm::erfcf, erfinv: erfinv_f32
}, next_after: libm::nextafterf);
sf!(f64 {
    asinh: libm::asinh, acosh: libm::acosh, atanh: libm::atanh, expm1: libm::expm1,
    erf: erf_f64, erfc: libm::erfc, erfinv: erfinv_f64
}, next_after: libm::nextafter);

#[derive(Clone, Copy, Debug, PartialEq)]
enum Fun {
    Expm1,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Asinh,
    Acosh,
    Atanh,
    Erf,
    Erfc,
    Erfinv,
    Ndtri,
    Lgamma,
    Digamma,
    Rint,
    IsNan,
    IsInf,
    IsFinite,
    Invert,
}

fn erfinv<T: Sf>(x: T) -> T {
    x.erfinv()
}

fn erfinv_f64(x: f64) -> f64 {
    special::erfinv(x)
}

/// TensorFlow's float `Erfinv` is `ndtri((x + 1) / 2) / √2` with `(x + 1) / 2` rounded to
/// float: near ±1 that rounding decides the result (erfinv(0.99999899) = 3.4655, not the
/// exact 3.4571), and tiny `x` give 0. ferroflow rounds the same way, then computes
/// `ndtri` in f64.
fn erfinv_f32(x: f32) -> f32 {
    if x.is_nan() || x.abs() > 1.0 {
        return f32::NAN;
    }
    let p = (x + 1.0) * 0.5;
    (special::ndtri(p as f64) / std::f64::consts::SQRT_2) as f32
}

fn ndtri<T: Sf>(x: T) -> T {
    x.via64(special::ndtri)
}

/// TensorFlow's lgamma is ln|Γ|, infinite at the poles; f32 computes in f64 for accuracy
/// near the zeros at 1 and 2.
fn lgamma<T: Sf>(x: T) -> T {
    x.via64(special::lgamma)
}

fn digamma<T: Sf>(x: T) -> T {
    x.via64(special::digamma)
}

/// Applies `f` of float32 to a half or bfloat16 value.
macro_rules! narrow {
    ($t:ty, $f:expr) => {
        |x: $t| <$t>::from_f32($f(x.to_f32()))
    };
}

/// Runs `$body` with `$f` bound to the function item of `$op` for the float type `$T`.
macro_rules! with_fun {
    ($op:expr, $T:ty, |$f:ident| $body:expr) => {
        with_fun!(@arms $op, |$f| $body, [
            Expm1 => <$T as Sf>::expm1, Sin => <$T as Sf>::sin, Cos => <$T as Sf>::cos,
            Tan => <$T as Sf>::tan, Asin => <$T as Sf>::asin, Acos => <$T as Sf>::acos,
            Atan => <$T as Sf>::atan, Sinh => <$T as Sf>::sinh, Cosh => <$T as Sf>::cosh,
            Asinh => <$T as Sf>::asinh, Acosh => <$T as Sf>::acosh, Atanh => <$T as Sf>::atanh,
            Erf => <$T as Sf>::erf, Erfc => <$T as Sf>::erfc, Erfinv => erfinv::<$T>,
            Ndtri => ndtri::<$T>, Lgamma => lgamma::<$T>, Digamma => digamma::<$T>,
            Rint => <$T as Float>::round_even
        ])
    };
    (@arms $op:expr, |$f:ident| $body:expr, [$($v:ident => $fun:expr),*]) => {
        match $op {
            $(Fun::$v => {
                let $f = $fun;
                $body
            })*
            Fun::IsNan | Fun::IsInf | Fun::IsFinite | Fun::Invert => unreachable!("not a float function"),
        }
    };
}

/// `T → O` kernel body (the output is a new buffer).
fn unary_to<T: TensorType + Copy + Sync, O: TensorType + Copy + Default + Send>(
    ctx: &mut OpContext,
    f: impl Fn(T) -> O + Sync,
) -> Result<(), Status> {
    let x = ctx.input(0)?;
    let out = map_unary(x.dims(), typed::<T>(ctx, &x)?, f)?;
    ctx.set_output(0, Tensor::new(x.shape().clone(), out)?)
}

fn predicate<T: Sf>(op: Fun, ctx: &mut OpContext) -> Result<(), Status> {
    match op {
        Fun::IsNan => unary_to::<T, bool>(ctx, |x| x.is_nan()),
        Fun::IsInf => unary_to::<T, bool>(ctx, |x| x.is_inf()),
        _ => unary_to::<T, bool>(ctx, |x| !x.is_nan() && !x.is_inf()),
    }
}

/// IsNan, IsInf, IsFinite of half or bfloat16.
macro_rules! predicate_narrow {
    ($op:expr, $ctx:expr, $t:ty) => {
        match $op {
            Fun::IsNan => unary_to::<$t, bool>($ctx, |x| x.is_nan()),
            Fun::IsInf => unary_to::<$t, bool>($ctx, |x| x.is_infinite()),
            _ => unary_to::<$t, bool>($ctx, |x| x.is_finite()),
        }
    };
}

impl ElemKernel<Fun> {
    fn make(n: &NodeDef, f: Fun) -> Result<Box<dyn OpKernel>, Status> {
        let allowed = if f == Fun::Invert { INTS } else { FLOATS };
        Ok(Box::new(ElemKernel { op: f, ty: kernel_type(n, "T", allowed)? }))
    }
}

impl OpKernel for ElemKernel<Fun> {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let (op, ty) = (self.op, self.ty);
        match op {
            Fun::Invert => {
                dispatch!(ty, ctx, [i8, i16, i32, i64, u8, u16, u32, u64], |T| unary_same::<T>(ctx, |x: T| !x))
            }
            Fun::IsNan | Fun::IsInf | Fun::IsFinite => match ty {
                Half => predicate_narrow!(op, ctx, f16),
                BFloat16 => predicate_narrow!(op, ctx, bf16),
                _ => dispatch!(ty, ctx, [f32, f64], |T| predicate::<T>(op, ctx)),
            },
            _ => match ty {
                Half => with_fun!(op, f32, |f| unary_same::<f16>(ctx, narrow!(f16, f))),
                BFloat16 => with_fun!(op, f32, |f| unary_same::<bf16>(ctx, narrow!(bf16, f))),
                _ => dispatch!(ty, ctx, [f32, f64], |T| with_fun!(op, T, |f| unary_same::<T>(ctx, f))),
            },
        }
    }
}

/// Registers the kernels.
pub(crate) fn register(r: &mut KernelRegistry) {
    by_variant! { r, ElemKernel::<Fun>::make, Fun "" [
        Expm1, Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, Erf, Erfc, Erfinv,
        Ndtri, Lgamma, Digamma, Rint, IsNan, IsInf, IsFinite, Invert
    ] }
}
