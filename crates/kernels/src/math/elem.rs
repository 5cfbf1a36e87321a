//! Element traits with TensorFlow's scalar semantics: integer arithmetic wraps (two's
//! complement, like TensorFlow's C++ on x86), floats follow IEEE, max/min propagate NaN.

use ferroflow_core::TensorType;

/// A real numeric element type (floats of every width, integers of every width).
pub trait Num: TensorType + Copy + Default + PartialOrd + Send + Sync + 'static {
    /// 0.
    const ZERO: Self;
    /// 1.
    const ONE: Self;
    /// Identity of `Max` reductions: -inf for floats, the minimum for integers.
    const MAX_INIT: Self;
    /// Identity of `Min` reductions: +inf for floats, the maximum for integers.
    const MIN_INIT: Self;
    /// Starting value of ArgMax (Eigen's `lowest()`: -FLT_MAX for floats).
    const LOWEST: Self;
    /// Starting value of ArgMin (Eigen's `highest()`).
    const HIGHEST: Self;
    /// Whether the type is signed.
    const SIGNED: bool;
    /// Addition (wrapping for integers).
    fn add(self, o: Self) -> Self;
    /// Subtraction (wrapping for integers).
    fn sub(self, o: Self) -> Self;
    /// Multiplication (wrapping for integers).
    fn mul(self, o: Self) -> Self;
    /// Division; integers truncate toward zero and wrap (`MIN / -1 == MIN`); callers reject
    /// integer division by zero first.
    fn div(self, o: Self) -> Self;
    /// Remainder with the sign of the dividend (C `%` / `fmod`); integer `MIN % -1 == 0`.
    fn rem(self, o: Self) -> Self;
    /// Negation (wrapping for integers).
    fn neg(self) -> Self;
    /// Whether the value is NaN (never for integers).
    #[allow(clippy::wrong_self_convention)]
    fn is_nan(self) -> bool;
    /// The value as f64 (for tests and conversions).
    fn to_f64(self) -> f64;
    /// Converts a count to this type (for Mean).
    fn from_usize(n: usize) -> Self;

    /// NaN-propagating maximum (`a < b ? b : a`, Eigen's PropagateNaN).
    #[inline(always)]
    fn tf_max(self, b: Self) -> Self {
        if b.is_nan() || self < b {
            b
        } else {
            self
        }
    }

    /// NaN-propagating minimum (`b < a ? b : a`).
    #[inline(always)]
    fn tf_min(self, b: Self) -> Self {
        if b.is_nan() || b < self {
            b
        } else {
            self
        }
    }
}

/// Floating-point element types (with the usual operators).
pub trait Float:
    Num
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Neg<Output = Self>
{
    /// NaN.
    const NAN: Self;
    /// 0.5.
    const HALF: Self;
    /// √x.
    fn sqrt(self) -> Self;
    /// eˣ.
    fn exp(self) -> Self;
    /// ln x.
    fn ln(self) -> Self;
    /// ln(1 + x).
    fn ln_1p(self) -> Self;
    /// tanh x.
    fn tanh(self) -> Self;
    /// ⌊x⌋.
    fn floor(self) -> Self;
    /// ⌈x⌉.
    fn ceil(self) -> Self;
    /// Round half to even.
    fn round_even(self) -> Self;
    /// |x|.
    fn abs(self) -> Self;
    /// xʸ.
    fn powf(self, y: Self) -> Self;
}

/// Integer element types.
pub trait Int: Num {
    /// `x^y` by repeated squaring with wrapping multiplication (`y >= 0`).
    fn ipow(self, y: Self) -> Self;
    /// |x| (wrapping: `|MIN| == MIN`).
    fn wabs(self) -> Self;
    /// -1, 0 or 1.
    fn signum(self) -> Self;
    /// Whether the value is negative.
    fn is_negative(self) -> bool;
}

/// Methods of `Self` (and as many more `Self` arguments) that call the function given.
macro_rules! forward {
    ($($name:ident($($arg:ident),*) => $f:expr;)*) => {
        $(
            #[inline(always)]
            fn $name(self $(, $arg: Self)*) -> Self {
                $f(self $(, $arg)*)
            }
        )*
    };
}

/// `Num`'s constants (zero, one, the max and min reductions' initial values, whether
/// signed; the lowest and highest values are the type's) and its conversions.
macro_rules! num_common {
    ($t:ty, $zero:expr, $one:expr, $max_init:expr, $min_init:expr, $signed:expr) => {
        const ZERO: Self = $zero;
        const ONE: Self = $one;
        const MAX_INIT: Self = $max_init;
        const MIN_INIT: Self = $min_init;
        const LOWEST: Self = <$t>::MIN;
        const HIGHEST: Self = <$t>::MAX;
        const SIGNED: bool = $signed;
        fn to_f64(self) -> f64 {
            self as f64
        }
        fn from_usize(n: usize) -> Self {
            n as $t
        }
    };
}

macro_rules! num_float {
    ($t:ty, $exp:path, $tanh:path) => {
        impl Num for $t {
            num_common!($t, 0.0, 1.0, <$t>::NEG_INFINITY, <$t>::INFINITY, true);
            forward! {
                add(o) => std::ops::Add::add;
                sub(o) => std::ops::Sub::sub;
                mul(o) => std::ops::Mul::mul;
                div(o) => std::ops::Div::div;
                rem(o) => std::ops::Rem::rem;
                neg() => std::ops::Neg::neg;
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                self != self
            }
        }
        impl Float for $t {
            const NAN: Self = <$t>::NAN;
            const HALF: Self = 0.5;
            forward! {
                sqrt() => <$t>::sqrt;
                exp() => $exp;
                ln() => <$t>::ln;
                ln_1p() => <$t>::ln_1p;
                tanh() => $tanh;
                floor() => <$t>::floor;
                ceil() => <$t>::ceil;
                round_even() => <$t>::round_ties_even;
                abs() => <$t>::abs;
                powf(y) => <$t>::powf;
            }
        }
    };
}
num_float!(f32, super::vmath::exp_f32, super::vmath::tanh_f32);
num_float!(f64, f64::exp, f64::tanh);

macro_rules! num_int {
    ($t:ty, $signed:expr) => {
        impl Num for $t {
            num_common!($t, 0, 1, <$t>::MIN, <$t>::MAX, $signed);
            forward! {
                add(o) => <$t>::wrapping_add;
                sub(o) => <$t>::wrapping_sub;
                mul(o) => <$t>::wrapping_mul;
                neg() => <$t>::wrapping_neg;
            }
            #[inline(always)]
            fn div(self, o: Self) -> Self {
                if o == 0 {
                    0
                } else {
                    self.wrapping_div(o)
                }
            }
            #[inline(always)]
            fn rem(self, o: Self) -> Self {
                if o == 0 {
                    0
                } else {
                    self.wrapping_rem(o)
                }
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                false
            }
        }
        impl Int for $t {
            fn ipow(self, y: Self) -> Self {
                let (mut x, mut y, mut r): ($t, $t, $t) = (self, y, 1);
                while y > 0 {
                    if y & 1 == 1 {
                        r = r.wrapping_mul(x);
                    }
                    x = x.wrapping_mul(x);
                    y >>= 1;
                }
                r
            }
            #[inline(always)]
            #[allow(unused_comparisons)]
            fn wabs(self) -> Self {
                if self < 0 {
                    self.wrapping_neg()
                } else {
                    self
                }
            }
            #[inline(always)]
            #[allow(unused_comparisons)]
            fn signum(self) -> Self {
                if self > 0 {
                    1
                } else if self < 0 {
                    (0 as $t).wrapping_sub(1)
                } else {
                    0
                }
            }
            #[inline(always)]
            #[allow(unused_comparisons)]
            fn is_negative(self) -> bool {
                self < 0
            }
        }
    };
}
num_int!(i32, true);
num_int!(i64, true);
num_int!(u8, false);
num_int!(i8, true);
num_int!(i16, true);
num_int!(u16, false);
num_int!(u32, false);
num_int!(u64, false);

/// half and bfloat16: every operation computes in float32 and rounds the result back once
/// (as Eigen's `half`/`bfloat16` operators do).
macro_rules! num_half {
    ($t:ty) => {
        impl Num for $t {
            const ZERO: Self = <$t>::ZERO;
            const ONE: Self = <$t>::ONE;
            const MAX_INIT: Self = <$t>::NEG_INFINITY;
            const MIN_INIT: Self = <$t>::INFINITY;
            const LOWEST: Self = <$t>::MIN;
            const HIGHEST: Self = <$t>::MAX;
            const SIGNED: bool = true;
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                <$t>::from_f32(self.to_f32() + o.to_f32())
            }
            #[inline(always)]
            fn sub(self, o: Self) -> Self {
                <$t>::from_f32(self.to_f32() - o.to_f32())
            }
            #[inline(always)]
            fn mul(self, o: Self) -> Self {
                <$t>::from_f32(self.to_f32() * o.to_f32())
            }
            #[inline(always)]
            fn div(self, o: Self) -> Self {
                <$t>::from_f32(self.to_f32() / o.to_f32())
            }
            #[inline(always)]
            fn rem(self, o: Self) -> Self {
                <$t>::from_f32(self.to_f32() % o.to_f32())
            }
            #[inline(always)]
            fn neg(self) -> Self {
                -self
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            fn to_f64(self) -> f64 {
                f64::from(self)
            }
            fn from_usize(n: usize) -> Self {
                <$t>::from_f32(n as f32)
            }
        }
    };
}
num_half!(ferroflow_core::half::f16);
num_half!(ferroflow_core::half::bf16);
