//! Cast between any two of TensorFlow's numeric types, bool and the quantized types (which
//! cast as their integers, as TensorFlow's CastOp does). Each element goes through [`Val`],
//! a lossless form of the source value, so every pair needs one conversion from and one to
//! it instead of a conversion per pair.
//!
//! TensorFlow's CPU semantics (x86, checked against its outputs): float → int truncates toward
//! zero; float → int32/int64 gives the integer minimum for NaN and out-of-range values;
//! float → int8/int16/uint8/uint16 converts through int32 and keeps the low bits; integer
//! narrowing wraps; double → half/bfloat16 and integer → half/bfloat16 round through float
//! (so twice); complex → real takes the real part (also for bool: `1j` is false); x → bool is
//! `x != 0` (NaN is true). bfloat16 → int8/int16/uint8/uint16 is the exception: TensorFlow's
//! vectorized loop saturates it (through int32), and ferroflow does so for every size (its
//! scalar loop, used for the tail of a tensor and small tensors, wraps instead). Out-of-range float → uint32/uint64 is implementation-defined in
//! TensorFlow (its vectorized and scalar loops disagree); ferroflow gives the vectorized
//! loop's answers.

use ferroflow_core::half::{bf16, f16};
use ferroflow_core::{QInt16, QInt32, QInt8, QUInt16, QUInt8, C128, C64};

/// A source element, losslessly.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Val {
    /// Any integer or bool.
    Int(i128),
    /// float32, or half widened (exactly).
    F32(f32),
    /// bfloat16 widened (exactly): TensorFlow converts it to int8/int16/uint8/uint16 through
    /// int32 *saturating*, unlike the other float types.
    BF16(f32),
    F64(f64),
    /// complex64 (real, imaginary).
    C32(f32, f32),
    /// complex128 (real, imaginary).
    C64(f64, f64),
}

impl Default for Val {
    fn default() -> Val {
        Val::Int(0)
    }
}

impl Val {
    /// The value as float32 (complex: its real part), rounded once from its source.
    fn f32(self) -> f32 {
        match self {
            Val::Int(i) => i as f32,
            Val::F32(x) | Val::BF16(x) | Val::C32(x, _) => x,
            Val::F64(x) | Val::C64(x, _) => x as f32,
        }
    }

    /// The value as float64 (complex: its real part).
    fn f64(self) -> f64 {
        match self {
            Val::Int(i) => i as f64,
            Val::F32(x) | Val::BF16(x) | Val::C32(x, _) => f64::from(x),
            Val::F64(x) | Val::C64(x, _) => x,
        }
    }

    /// The imaginary part (0 for real values).
    fn imag(self) -> f64 {
        match self {
            Val::C32(_, y) => f64::from(y),
            Val::C64(_, y) => y,
            _ => 0.0,
        }
    }
}

/// Converts a source element to [`Val`].
pub trait ToVal: Copy {
    fn to_val(self) -> Val;
}

/// Converts [`Val`] to a destination element; `truncate` is Cast's `Truncate` attr (half and
/// bfloat16 targets drop mantissa bits instead of rounding to nearest even).
pub trait FromVal: Sized {
    fn from_val(v: Val, truncate: bool) -> Self;
}

macro_rules! int_to_val {
    ($($t:ty),*) => {$(
        impl ToVal for $t {
            #[inline(always)]
            fn to_val(self) -> Val {
                Val::Int(self as i128)
            }
        }
    )*};
}
int_to_val!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! quantized_to_val {
    ($($t:ty),*) => {$(
        impl ToVal for $t {
            #[inline(always)]
            fn to_val(self) -> Val {
                Val::Int(self.0 as i128)
            }
        }
    )*};
}
quantized_to_val!(QInt8, QUInt8, QInt16, QUInt16, QInt32);

impl ToVal for bool {
    fn to_val(self) -> Val {
        Val::Int(i128::from(self))
    }
}
impl ToVal for f16 {
    fn to_val(self) -> Val {
        Val::F32(self.to_f32())
    }
}
impl ToVal for bf16 {
    fn to_val(self) -> Val {
        Val::BF16(self.to_f32())
    }
}
impl ToVal for f32 {
    fn to_val(self) -> Val {
        Val::F32(self)
    }
}
impl ToVal for f64 {
    fn to_val(self) -> Val {
        Val::F64(self)
    }
}
impl ToVal for C64 {
    fn to_val(self) -> Val {
        Val::C32(self.re, self.im)
    }
}
impl ToVal for C128 {
    fn to_val(self) -> Val {
        Val::C64(self.re, self.im)
    }
}

/// float → int32 as x86 `cvttsd2si` does it.
#[inline(always)]
pub(crate) fn f2i32(x: f64) -> i32 {
    if x > -2147483649.0 && x < 2147483648.0 {
        x as i32
    } else {
        i32::MIN
    }
}

/// float → int64 as x86 `cvttsd2si` (64-bit) does it.
#[inline(always)]
pub(crate) fn f2i64(x: f64) -> i64 {
    if (-9223372036854775808.0..9223372036854775808.0).contains(&x) {
        x as i64
    } else {
        i64::MIN
    }
}

/// float → uint32 as TensorFlow's vectorized loop: two int32 truncations combined.
fn f2u32(x: f64) -> u32 {
    let a = f2i32(x);
    let b = f2i32(x - 2147483648.0);
    (a | (b & (a >> 31))) as u32
}

/// float → uint64: values below 2⁶³ through int64 (negative ones wrap), larger ones offset by
/// 2⁶³; NaN and values from 2⁶⁴ give 2⁶³.
fn f2u64(x: f64) -> u64 {
    const TWO63: f64 = 9223372036854775808.0;
    if x < TWO63 {
        f2i64(x) as u64
    } else if x < 2.0 * TWO63 {
        ((x - TWO63) as u64) ^ (1 << 63)
    } else {
        1 << 63
    }
}

/// float → int32 as `cvttsd2si`, then clamped to `[lo, hi]`.
fn f2i32_sat(x: f64, lo: i32, hi: i32) -> i32 {
    f2i32(x).clamp(lo, hi)
}

macro_rules! int_from_val {
    ($($t:ty: $conv:expr, $bf16:expr;)*) => {$(
        impl FromVal for $t {
            #[inline(always)]
            fn from_val(v: Val, _: bool) -> Self {
                match v {
                    Val::Int(i) => i as $t,
                    Val::BF16(x) => ($bf16)(f64::from(x)),
                    v => ($conv)(v.f64()),
                }
            }
        }
    )*};
}
int_from_val!(
    i8: |x| f2i32(x) as i8, |x| f2i32_sat(x, -128, 127) as i8;
    i16: |x| f2i32(x) as i16, |x| f2i32_sat(x, -32768, 32767) as i16;
    i32: f2i32, f2i32;
    i64: f2i64, f2i64;
    u8: |x| f2i32(x) as u8, |x| f2i32_sat(x, 0, 255) as u8;
    u16: |x| f2i32(x) as u16, |x| f2i32_sat(x, 0, 65535) as u16;
    u32: f2u32, f2u32;
    u64: f2u64, f2u64;
);

macro_rules! quantized_from_val {
    ($($t:ident($i:ty)),*) => {$(
        impl FromVal for $t {
            #[inline(always)]
            fn from_val(v: Val, t: bool) -> Self {
                $t(<$i>::from_val(v, t))
            }
        }
    )*};
}
quantized_from_val!(QInt8(i8), QUInt8(u8), QInt16(i16), QUInt16(u16), QInt32(i32));

impl FromVal for bool {
    fn from_val(v: Val, _: bool) -> Self {
        match v {
            Val::Int(i) => i != 0,
            v => v.f64() != 0.0,
        }
    }
}
impl FromVal for f32 {
    fn from_val(v: Val, _: bool) -> Self {
        v.f32()
    }
}
impl FromVal for f64 {
    fn from_val(v: Val, _: bool) -> Self {
        v.f64()
    }
}
impl FromVal for C64 {
    fn from_val(v: Val, _: bool) -> Self {
        match v {
            Val::C64(re, im) => C64::new(re as f32, im as f32),
            v => C64::new(v.f32(), v.imag() as f32),
        }
    }
}
impl FromVal for C128 {
    fn from_val(v: Val, _: bool) -> Self {
        C128::new(v.f64(), v.imag())
    }
}

/// float → half: round to nearest even, or toward zero when truncating.
fn to_f16(x: f32, truncate: bool) -> f16 {
    let h = f16::from_f32(x);
    if truncate && !x.is_nan() && h.to_f32().abs() > x.abs() {
        // Rounded away from zero: the neighbour toward zero is the truncated value.
        f16::from_bits(h.to_bits() - 1)
    } else {
        h
    }
}

/// float → bfloat16: round to nearest even, or keep the top 16 bits when truncating.
fn to_bf16(x: f32, truncate: bool) -> bf16 {
    if truncate && !x.is_nan() {
        bf16::from_bits((x.to_bits() >> 16) as u16)
    } else {
        bf16::from_f32(x)
    }
}

impl FromVal for f16 {
    fn from_val(v: Val, t: bool) -> Self {
        to_f16(v.f32(), t)
    }
}
impl FromVal for bf16 {
    fn from_val(v: Val, t: bool) -> Self {
        to_bf16(v.f32(), t)
    }
}
