//! More broadcasting binary kernels: Atan2, Xlogy, Xlog1py, Xdivy, MulNoNan, TruncateDiv,
//! TruncateMod, Mod, the bitwise and shift ops, NextAfter and the special functions Igamma,
//! Igammac, IgammaGradA, Polygamma and Zeta.

use ferroflow_core::half::{bf16, f16};
use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, Status};

use super::binary::{binary_same, no_check, Check};
use super::common::{kernel_type, typed, ElemKernel};
use super::elem::Num;
use super::special;
use super::unary_ext::Sf;
use crate::array::util::node_context;
use crate::dispatch::dispatch;
use crate::registry::by_variant;
use crate::{KernelRegistry, OpContext, OpKernel};

use DataType::{BFloat16, Double, Float as F32, Half, Int16, Int32, Int64, Int8, UInt16, UInt32, UInt64, UInt8};

const FLOATS: &[DataType] = &[F32, Double, Half, BFloat16];
const F32_F64: &[DataType] = &[F32, Double];
const INTS: &[DataType] = &[Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64];
const REAL: &[DataType] = &[F32, Double, Half, BFloat16, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64];
const MOD: &[DataType] = &[F32, Double, Half, BFloat16, Int32, Int64];

#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Atan2,
    Xlogy,
    Xlog1py,
    Xdivy,
    MulNoNan,
    TruncateDiv,
    TruncateMod,
    Mod,
    BitwiseAnd,
    BitwiseOr,
    BitwiseXor,
    LeftShift,
    RightShift,
    NextAfter,
    Igamma,
    Igammac,
    IgammaGradA,
    Polygamma,
    Zeta,
}

/// Integer element types with the bitwise operations.
trait Bits: Num + Into<Shift> {
    const BITS: u32;
    fn and(self, o: Self) -> Self;
    fn or(self, o: Self) -> Self;
    fn xor(self, o: Self) -> Self;
    fn shl(self, n: u32) -> Self;
    fn shr(self, n: u32) -> Self;
}

/// A shift amount widened to i128 (every integer type fits).
struct Shift(i128);

macro_rules! bits {
    ($($t:ty),*) => {$(
        impl From<$t> for Shift {
            fn from(v: $t) -> Shift {
                Shift(v as i128)
            }
        }
        impl Bits for $t {
            const BITS: u32 = <$t>::BITS;
            #[inline(always)]
            fn and(self, o: Self) -> Self {
                self & o
            }
            #[inline(always)]
            fn or(self, o: Self) -> Self {
                self | o
            }
            #[inline(always)]
            fn xor(self, o: Self) -> Self {
                self ^ o
            }
            #[inline(always)]
            fn shl(self, n: u32) -> Self {
                self.wrapping_shl(n)
            }
            #[inline(always)]
            fn shr(self, n: u32) -> Self {
                self.wrapping_shr(n)
            }
        }
    )*};
}
bits!(i8, i16, i32, i64, u8, u16, u32, u64);

/// The shift amount clamped to `[0, bits - 1]`, as TensorFlow does.
#[inline(always)]
fn shift_amount<T: Bits>(y: T) -> u32 {
    Into::<Shift>::into(y).0.clamp(0, T::BITS as i128 - 1) as u32
}

fn xlogy<T: Sf>(x: T, y: T) -> T {
    if x == T::ZERO {
        T::ZERO
    } else {
        x * y.ln()
    }
}

fn xlog1py<T: Sf>(x: T, y: T) -> T {
    if x == T::ZERO {
        T::ZERO
    } else {
        x * y.ln_1p()
    }
}

fn xdivy<T: Sf>(x: T, y: T) -> T {
    if x == T::ZERO {
        T::ZERO
    } else {
        x / y
    }
}

fn mul_no_nan<T: Sf>(x: T, y: T) -> T {
    if y == T::ZERO {
        T::ZERO
    } else {
        x * y
    }
}

fn truncate_div<T: Sf>(x: T, y: T) -> T {
    let q = x / y;
    if q < T::ZERO {
        q.ceil()
    } else {
        q.floor()
    }
}

fn atan2<T: Sf>(y: T, x: T) -> T {
    y.atan2(x)
}

fn next_after<T: Sf>(x: T, y: T) -> T {
    x.next_after(y)
}

/// A two-argument function computed in f64.
fn via64<T: Sf>(f: fn(f64, f64) -> f64) -> impl Fn(T, T) -> T + Sync {
    move |a: T, b: T| T::from64(f(a.to64(), b.to64()))
}

fn special_fn(op: Op) -> fn(f64, f64) -> f64 {
    match op {
        Op::Igamma => special::igamma,
        Op::Igammac => special::igammac,
        Op::IgammaGradA => special::igamma_grad_a,
        Op::Polygamma => special::polygamma,
        _ => special::zeta,
    }
}

/// Integer division by zero: TensorFlow's message; `Mod` reports InvalidArgument, while the
/// truncating ops report Internal (their CPU functor's error is unexpected there).
fn int_check<T: Num>(ctx: &OpContext, op: Op) -> Result<(), Status> {
    let y = ctx.input(1)?;
    if typed::<T>(ctx, &y)?.contains(&T::ZERO) {
        return Err(if op == Op::Mod {
            ctx.error("Integer division by zero")
        } else {
            node_context(
                &ctx.node().name,
                Status::internal(
                    "Unexpected error in binary operator (only integer div and mod should have errors): integer \
                     division by zero",
                ),
            )
        });
    }
    Ok(())
}

fn floats<T: Sf>(op: Op, ctx: &mut OpContext) -> Result<(), Status> {
    let nc: Check<T> = no_check;
    match op {
        Op::Atan2 => binary_same::<T>(ctx, nc, atan2::<T>),
        Op::Xlogy => binary_same::<T>(ctx, nc, xlogy::<T>),
        Op::Xlog1py => binary_same::<T>(ctx, nc, xlog1py::<T>),
        Op::Xdivy => binary_same::<T>(ctx, nc, xdivy::<T>),
        Op::MulNoNan => binary_same::<T>(ctx, nc, mul_no_nan::<T>),
        Op::TruncateDiv => binary_same::<T>(ctx, nc, truncate_div::<T>),
        Op::TruncateMod | Op::Mod => binary_same::<T>(ctx, nc, T::rem),
        Op::NextAfter => binary_same::<T>(ctx, nc, next_after::<T>),
        _ => binary_same::<T>(ctx, nc, via64::<T>(special_fn(op))),
    }
}

/// Half and bfloat16: the float32 function, rounded once.
macro_rules! narrow {
    ($op:expr, $ctx:expr, $t:ty) => {{
        let nc: Check<$t> = no_check;
        let w = |f: fn(f32, f32) -> f32| move |a: $t, b: $t| <$t>::from_f32(f(a.to_f32(), b.to_f32()));
        match $op {
            Op::Atan2 => binary_same::<$t>($ctx, nc, w(atan2::<f32>)),
            Op::Xlogy => binary_same::<$t>($ctx, nc, w(xlogy::<f32>)),
            Op::Xlog1py => binary_same::<$t>($ctx, nc, w(xlog1py::<f32>)),
            Op::Xdivy => binary_same::<$t>($ctx, nc, w(xdivy::<f32>)),
            Op::MulNoNan => binary_same::<$t>($ctx, nc, w(mul_no_nan::<f32>)),
            Op::TruncateDiv => binary_same::<$t>($ctx, nc, w(truncate_div::<f32>)),
            Op::TruncateMod | Op::Mod => binary_same::<$t>($ctx, nc, w(|a: f32, b: f32| a % b)),
            Op::Igamma => binary_same::<$t>($ctx, nc, w(|a, x| special::igamma(a as f64, x as f64) as f32)),
            _ => binary_same::<$t>($ctx, nc, w(|a, x| special::igammac(a as f64, x as f64) as f32)),
        }
    }};
}

fn ints<T: Bits>(op: Op, ctx: &mut OpContext) -> Result<(), Status> {
    let nc: Check<T> = no_check;
    match op {
        Op::BitwiseAnd => binary_same::<T>(ctx, nc, T::and),
        Op::BitwiseOr => binary_same::<T>(ctx, nc, T::or),
        Op::BitwiseXor => binary_same::<T>(ctx, nc, T::xor),
        Op::LeftShift => binary_same::<T>(ctx, nc, |x: T, y: T| x.shl(shift_amount(y))),
        Op::RightShift => binary_same::<T>(ctx, nc, |x: T, y: T| x.shr(shift_amount(y))),
        Op::TruncateDiv => {
            int_check::<T>(ctx, op)?;
            binary_same::<T>(ctx, nc, T::div)
        }
        _ => {
            int_check::<T>(ctx, op)?;
            binary_same::<T>(ctx, nc, T::rem)
        }
    }
}

impl ElemKernel<Op> {
    fn make(n: &NodeDef, op: Op) -> Result<Box<dyn OpKernel>, Status> {
        let allowed = match op {
            Op::Atan2 | Op::Xlogy | Op::Xlog1py | Op::Xdivy | Op::MulNoNan | Op::Igamma | Op::Igammac => FLOATS,
            Op::TruncateDiv => REAL,
            Op::TruncateMod | Op::Mod => MOD,
            Op::BitwiseAnd | Op::BitwiseOr | Op::BitwiseXor | Op::LeftShift | Op::RightShift => INTS,
            Op::NextAfter | Op::IgammaGradA | Op::Polygamma | Op::Zeta => F32_F64,
        };
        Ok(Box::new(ElemKernel { op, ty: kernel_type(n, "T", allowed)? }))
    }
}

impl OpKernel for ElemKernel<Op> {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let (op, ty) = (self.op, self.ty);
        match ty {
            F32 => floats::<f32>(op, ctx),
            Double => floats::<f64>(op, ctx),
            Half => narrow!(op, ctx, f16),
            BFloat16 => narrow!(op, ctx, bf16),
            _ => dispatch!(ty, ctx, [i8, i16, i32, i64, u8, u16, u32, u64], |T| ints::<T>(op, ctx)),
        }
    }
}

/// Registers the kernels.
pub(crate) fn register(r: &mut KernelRegistry) {
    by_variant! { r, ElemKernel::<Op>::make, Op "" [
        Atan2, Xlogy, Xlog1py, Xdivy, MulNoNan, TruncateDiv, TruncateMod, Mod, BitwiseAnd, BitwiseOr,
        BitwiseXor, LeftShift, RightShift, NextAfter, Igamma, Igammac, IgammaGradA, Polygamma, Zeta
    ] }
}
