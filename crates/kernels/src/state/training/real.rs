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
    /// Square root.
    fn sqrt(self) -> Self;
}

impl Real for f32 {
    const ONE: f32 = 1.0;
    #[inline]
    fn sqrt(self) -> f32 {
        f32::sqrt(self)
    }
}

impl Real for f64 {
    const ONE: f64 = 1.0;
    #[inline]
    fn sqrt(self) -> f64 {
        f64::sqrt(self)
    }
}
