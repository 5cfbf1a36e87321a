//! [`Real`]: the floating-point element types (`f32`, `f64`) of the kernels that compute
//! only in floats: the nn kernels and the optimizers' apply kernels.

use std::ops::{Add, AddAssign, Div, Mul, Neg, Sub, SubAssign};

use ferroflow_core::TensorType;

/// `f32` or `f64`.
pub trait Real:
    TensorType
    + Copy
    + Default
    + Send
    + Sync
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
{
    /// 0.
    const ZERO: Self;
    /// 1.
    const ONE: Self;
    /// e^x.
    fn exp(self) -> Self;
    /// ln x.
    fn ln(self) -> Self;
    /// Square root.
    fn sqrt(self) -> Self;
    /// `self` to the power `e`.
    fn powf(self, e: Self) -> Self;
    /// Absolute value.
    fn abs(self) -> Self;
    /// `self * a + b`, fused (compiles to an FMA instruction where the caller enables it).
    fn mul_add(self, a: Self, b: Self) -> Self;
    /// The nearest value of this type.
    fn from_f64(v: f64) -> Self;
    /// Conversion from usize.
    fn from_usize(v: usize) -> Self;
    /// Whether NaN.
    fn is_nan(self) -> bool;
    /// Whether +∞ or -∞.
    fn is_infinite(self) -> bool;
}

/// Trait methods that call the inherent method of the same name of `$t`: each
/// `name(args) -> Ret;` becomes `fn name(self, args: Self) -> Ret`.
macro_rules! forward_inherent {
    ($t:ty: $($name:ident($($arg:ident),*) -> $ret:ty;)*) => {
        $(
            #[inline(always)]
            fn $name(self, $($arg: Self),*) -> $ret {
                <$t>::$name(self, $($arg),*)
            }
        )*
    };
}
pub(crate) use forward_inherent;

macro_rules! real {
    ($t:ty) => {
        impl Real for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            forward_inherent! { $t:
                exp() -> Self;
                ln() -> Self;
                sqrt() -> Self;
                powf(e) -> Self;
                abs() -> Self;
                mul_add(a, b) -> Self;
                is_nan() -> bool;
                is_infinite() -> bool;
            }
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn from_usize(v: usize) -> Self {
                v as $t
            }
        }
    };
}
real!(f32);
real!(f64);
