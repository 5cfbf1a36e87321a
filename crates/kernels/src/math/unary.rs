//! Elementwise unary functions: Neg, Square, Sqrt, Rsqrt, Exp, Log, Log1p, Tanh, Sigmoid,
//! Floor, Ceil, Round, Abs, Sign, Reciprocal (Inv).

use ferroflow_core::half::{bf16, f16};
use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, Status, Tensor, TensorType, C128, C64};

use super::bcast::{is_unshared, map_inplace, map_unary};
use super::common::{kernel_type, typed, ElemKernel};
use super::dtypes::{FLOATS, FLOATS_AND_COMPLEX, NEG_TYPES, NUMBER, SIGNED, SIGNED_AND_COMPLEX, SIGNED_REAL};
use super::elem::{Float, Int, Num};
use crate::dispatch::dispatch;
use crate::registry::by_variant;
use crate::{KernelRegistry, OpContext, OpKernel};

/// `T → T` kernel body: overwrites the input buffer when unshared.
pub(crate) fn unary_same<T: TensorType + Copy + Default + Send + Sync>(
    ctx: &mut OpContext,
    f: impl Fn(T) -> T + Sync,
) -> Result<(), Status> {
    let x = ctx.take_input(0)?;
    typed::<T>(ctx, &x)?;
    let out = if is_unshared(&x) {
        let mut x = x;
        map_inplace(x.data_mut::<T>()?, f);
        x
    } else {
        Tensor::new(x.shape().clone(), map_unary(x.dims(), typed::<T>(ctx, &x)?, f)?)?
    };
    ctx.set_output(0, out)
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Fun {
    Neg,
    Square,
    Sqrt,
    Rsqrt,
    Exp,
    Log,
    Log1p,
    Tanh,
    Sigmoid,
    Floor,
    Ceil,
    Round,
    Abs,
    Sign,
    Reciprocal,
}

fn sigmoid<T: Float>(x: T) -> T {
    T::ONE / (T::ONE + (-x).exp())
}

fn sign_float<T: Float>(x: T) -> T {
    if x > T::ZERO {
        T::ONE
    } else if x < T::ZERO {
        -T::ONE
    } else if x.is_nan() {
        x
    } else {
        T::ZERO
    }
}

/// |x| of half and bfloat16: the sign bit cleared (NaN stays NaN).
fn abs_f16(x: f16) -> f16 {
    f16::from_bits(x.to_bits() & 0x7fff)
}

fn abs_bf16(x: bf16) -> bf16 {
    bf16::from_bits(x.to_bits() & 0x7fff)
}

/// The complex forms of the functions TensorFlow registers for complex64 and complex128
/// (principal branches; `Sign` is `x / |x|`, 0 at 0).
fn complex_unary<T: ComplexElem>(ctx: &mut OpContext, f: Fun) -> Result<(), Status> {
    match f {
        Fun::Sqrt => unary_same::<T>(ctx, T::sqrt),
        Fun::Rsqrt => unary_same::<T>(ctx, |x| x.sqrt().inv()),
        Fun::Exp => unary_same::<T>(ctx, T::exp),
        Fun::Log => unary_same::<T>(ctx, T::ln),
        Fun::Log1p => unary_same::<T>(ctx, |x| (x + T::one()).ln()),
        Fun::Tanh => unary_same::<T>(ctx, T::tanh),
        Fun::Sigmoid => unary_same::<T>(ctx, |x| ((-x).exp() + T::one()).inv()),
        Fun::Reciprocal => unary_same::<T>(ctx, T::inv),
        Fun::Sign => unary_same::<T>(ctx, T::unit),
        other => Err(ctx.error(format!("{other:?} has no complex kernel"))),
    }
}

/// What the complex kernels need of complex64 and complex128.
trait ComplexElem:
    TensorType + Copy + Default + Send + Sync + std::ops::Add<Output = Self> + std::ops::Neg<Output = Self>
{
    fn one() -> Self;
    fn sqrt(self) -> Self;
    fn exp(self) -> Self;
    fn ln(self) -> Self;
    fn tanh(self) -> Self;
    fn inv(self) -> Self;
    /// `x / |x|`, 0 at 0.
    fn unit(self) -> Self;
}

macro_rules! complex_elem {
    ($($c:ty),*) => {$(
        impl ComplexElem for $c {
            fn one() -> Self {
                <$c>::new(1.0, 0.0)
            }
            fn sqrt(self) -> Self {
                <$c>::sqrt(self)
            }
            fn exp(self) -> Self {
                <$c>::exp(self)
            }
            fn ln(self) -> Self {
                <$c>::ln(self)
            }
            fn tanh(self) -> Self {
                <$c>::tanh(self)
            }
            fn inv(self) -> Self {
                <$c>::new(1.0, 0.0) / self
            }
            fn unit(self) -> Self {
                let n = self.norm();
                if n == 0.0 { self } else { self / n }
            }
        }
    )*};
}
complex_elem!(C64, C128);

impl ElemKernel<Fun> {
    fn make(n: &NodeDef, f: Fun) -> Result<Box<dyn OpKernel>, Status> {
        // TensorFlow's CPU registrations for Square, Neg and Abs, and the complex types where
        // TensorFlow registers them; the others are not extended to the narrow types yet.
        let allowed = match f {
            Fun::Square => NUMBER,
            Fun::Neg => NEG_TYPES,
            Fun::Abs => SIGNED_REAL,
            Fun::Round => SIGNED,
            Fun::Sign | Fun::Reciprocal => SIGNED_AND_COMPLEX,
            Fun::Sqrt | Fun::Rsqrt | Fun::Exp | Fun::Log | Fun::Log1p | Fun::Tanh | Fun::Sigmoid => FLOATS_AND_COMPLEX,
            _ => FLOATS,
        };
        Ok(Box::new(ElemKernel { op: f, ty: kernel_type(n, "T", allowed)? }))
    }
}

impl OpKernel for ElemKernel<Fun> {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let ty = self.ty;
        let float = ty.is_float();
        if ty.is_complex() && self.op != Fun::Neg && self.op != Fun::Square {
            return dispatch!(ty, ctx, [C64, C128], |T| complex_unary::<T>(ctx, self.op));
        }
        match self.op {
            Fun::Neg if ty.is_complex() => dispatch!(ty, ctx, [C64, C128], |T| unary_same::<T>(ctx, |x: T| -x)),
            Fun::Neg => dispatch!(ty, ctx, [f32, f64, i32, i64, f16, bf16, i8, i16], |T| unary_same::<T>(ctx, T::neg)),
            Fun::Square if ty.is_complex() => {
                dispatch!(ty, ctx, [C64, C128], |T| unary_same::<T>(ctx, |x: T| x * x))
            }
            Fun::Square => dispatch!(ty, ctx, [f32, f64, i32, i64, u8, f16, bf16, i8, i16, u16, u32, u64], |T| {
                unary_same::<T>(ctx, |x: T| x.mul(x))
            }),
            Fun::Sqrt => dispatch!(ty, ctx, [f32, f64], |T| unary_same::<T>(ctx, T::sqrt)),
            Fun::Rsqrt => dispatch!(ty, ctx, [f32, f64], |T| unary_same::<T>(ctx, |x: T| 1.0 / x.sqrt())),
            Fun::Exp => dispatch!(ty, ctx, [f32, f64], |T| unary_same::<T>(ctx, <T as Float>::exp)),
            Fun::Log => dispatch!(ty, ctx, [f32, f64], |T| unary_same::<T>(ctx, T::ln)),
            Fun::Log1p => dispatch!(ty, ctx, [f32, f64], |T| unary_same::<T>(ctx, T::ln_1p)),
            Fun::Tanh => dispatch!(ty, ctx, [f32, f64], |T| unary_same::<T>(ctx, <T as Float>::tanh)),
            Fun::Sigmoid => dispatch!(ty, ctx, [f32, f64], |T| unary_same::<T>(ctx, sigmoid::<T>)),
            Fun::Floor => dispatch!(ty, ctx, [f32, f64], |T| unary_same::<T>(ctx, T::floor)),
            Fun::Ceil => dispatch!(ty, ctx, [f32, f64], |T| unary_same::<T>(ctx, T::ceil)),
            // Integers round to themselves (TensorFlow's documented semantics).
            Fun::Round if float => dispatch!(ty, ctx, [f32, f64], |T| unary_same::<T>(ctx, T::round_even)),
            Fun::Round => dispatch!(ty, ctx, [i32, i64], |T| unary_same::<T>(ctx, |x: T| x)),
            Fun::Abs if float => dispatch!(ty, ctx, [f32, f64], |T| unary_same::<T>(ctx, T::abs)),
            Fun::Abs if ty == DataType::Half => unary_same::<f16>(ctx, abs_f16),
            Fun::Abs if ty == DataType::BFloat16 => unary_same::<bf16>(ctx, abs_bf16),
            Fun::Abs => dispatch!(ty, ctx, [i32, i64, i8, i16], |T| unary_same::<T>(ctx, T::wabs)),
            Fun::Sign if float => dispatch!(ty, ctx, [f32, f64], |T| unary_same::<T>(ctx, sign_float::<T>)),
            Fun::Sign => dispatch!(ty, ctx, [i32, i64], |T| unary_same::<T>(ctx, T::signum)),
            Fun::Reciprocal => dispatch!(ty, ctx, [f32, f64], |T| unary_same::<T>(ctx, |x: T| 1.0 / x)),
        }
    }
}

/// Registers the unary kernels.
pub(crate) fn register(r: &mut KernelRegistry) {
    by_variant! { r, ElemKernel::<Fun>::make, Fun "" [
        Neg, Square, Sqrt, Rsqrt, Exp, Log, Log1p, Tanh, Sigmoid, Floor, Ceil, Round, Abs, Sign,
        Reciprocal
    ] "Inv" => Reciprocal }
}
