//! The float types optimizers run on.

use std::ops::{Add, AddAssign, Div, Mul, Sub, SubAssign};

use ferroflow_core::TensorType;

/// `f32` or `f64`.
pub trait Real:
    TensorType
    + Copy
    + Send
    + Sync
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + AddAssign
    + SubAssign
{
    /// 1.
    const ONE: Self;
    /// 0.
    const ZERO: Self;
    /// Square root.
    fn sqrt(self) -> Self;
    /// `self` to the power `e`.
    fn powf(self, e: Self) -> Self;
    /// Absolute value.
    fn abs(self) -> Self;
    /// The nearest value of this type.
    fn from_f64(v: f64) -> Self;
}

impl Real for f32 {
    const ONE: f32 = 1.0;
    const ZERO: f32 = 0.0;
    #[inline]
    fn sqrt(self) -> f32 {
        f32::sqrt(self)
    }
    #[inline]
    fn powf(self, e: f32) -> f32 {
        f32::powf(self, e)
    }
    #[inline]
    fn abs(self) -> f32 {
        f32::abs(self)
    }
    #[inline]
    fn from_f64(v: f64) -> f32 {
        v as f32
    }
}

impl Real for f64 {
    const ONE: f64 = 1.0;
    const ZERO: f64 = 0.0;
    #[inline]
    fn sqrt(self) -> f64 {
        f64::sqrt(self)
    }
    #[inline]
    fn powf(self, e: f64) -> f64 {
        f64::powf(self, e)
    }
    #[inline]
    fn abs(self) -> f64 {
        f64::abs(self)
    }
    #[inline]
    fn from_f64(v: f64) -> f64 {
        v
    }
}
