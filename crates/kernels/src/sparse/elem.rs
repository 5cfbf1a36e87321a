//! [`SegElem`]: the element types of the segment reductions, with TensorFlow's identities
//! (0, 1, lowest, highest) and integer wrap-around.

use ferroflow_core::TensorType;

/// A numeric element type the segment reductions compute in.
pub trait SegElem: TensorType + Copy + PartialOrd + Send + Sync + 'static {
    /// 0.
    const ZERO: Self;
    /// 1.
    const ONE: Self;
    /// The lowest finite value (`numeric_limits<T>::lowest()`).
    const LOWEST: Self;
    /// The highest finite value.
    const HIGHEST: Self;
    /// `self + o` (wrapping for integers).
    fn add(self, o: Self) -> Self;
    /// `self * o` (wrapping for integers).
    fn mul(self, o: Self) -> Self;
    /// `self / o` (integers: 0 where the quotient is undefined or overflows).
    fn div(self, o: Self) -> Self;
    /// `self / n` (integer division for integers).
    fn div_count(self, n: usize) -> Self;
    /// `self / sqrt(n)` (floats; integers truncate the root).
    fn div_sqrt_count(self, n: usize) -> Self;
    /// The nearest value of this type.
    fn from_f64(v: f64) -> Self;
    /// The larger of the two (`self` when unordered).
    #[inline(always)]
    fn max_of(self, o: Self) -> Self {
        if o > self {
            o
        } else {
            self
        }
    }
    /// The smaller of the two (`self` when unordered).
    #[inline(always)]
    fn min_of(self, o: Self) -> Self {
        if o < self {
            o
        } else {
            self
        }
    }
}

macro_rules! float_elem {
    ($($t:ty),*) => {$(
        impl SegElem for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const LOWEST: Self = <$t>::MIN;
            const HIGHEST: Self = <$t>::MAX;
            #[inline(always)]
            fn add(self, o: Self) -> Self { self + o }
            #[inline(always)]
            fn mul(self, o: Self) -> Self { self * o }
            #[inline(always)]
            fn div(self, o: Self) -> Self { self / o }
            #[inline(always)]
            fn div_count(self, n: usize) -> Self { self / n as $t }
            #[inline(always)]
            fn from_f64(v: f64) -> Self { v as $t }
            #[inline(always)]
            fn div_sqrt_count(self, n: usize) -> Self { self / (n as $t).sqrt() }
        }
    )*};
}
float_elem!(f32, f64);

macro_rules! int_elem {
    ($($t:ty),*) => {$(
        impl SegElem for $t {
            const ZERO: Self = 0;
            const ONE: Self = 1;
            const LOWEST: Self = <$t>::MIN;
            const HIGHEST: Self = <$t>::MAX;
            #[inline(always)]
            fn add(self, o: Self) -> Self { self.wrapping_add(o) }
            #[inline(always)]
            fn mul(self, o: Self) -> Self { self.wrapping_mul(o) }
            #[inline(always)]
            fn div(self, o: Self) -> Self { self.checked_div(o).unwrap_or(0) }
            #[inline(always)]
            fn div_count(self, n: usize) -> Self {
                match <$t>::try_from(n) { Ok(d) if d != 0 => self.wrapping_div(d), _ => 0 }
            }
            #[inline(always)]
            fn div_sqrt_count(self, n: usize) -> Self { self.div_count((n as f64).sqrt() as usize) }
            #[inline(always)]
            fn from_f64(v: f64) -> Self { v as $t }
        }
    )*};
}
int_elem!(i32, i64, u8, i8, i16, u16, u32, u64);
