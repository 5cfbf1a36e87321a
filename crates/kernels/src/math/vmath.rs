//! Branch-free float32 `exp`, `tanh` and `sigmoid` that the compiler vectorizes (libm's
//! scalar calls do not), accurate to a few ulp. Used by the Exp/Tanh/Sigmoid kernels through
//! [`super::elem::Float`]; public for other families (softmax, losses).
//!
//! `exp`: Cody–Waite range reduction `x = n·ln2 + r`, `|r| <= ln2/2`, a degree-7 Taylor
//! polynomial for `e^r`, and `2^n` assembled in the exponent bits. Results below the
//! smallest normal float flush to 0.

const LOG2E: f32 = std::f32::consts::LOG2_E;
/// ln 2 split so that `n * LN2_HI` is exact for |n| < 2^9.
const LN2_HI: f32 = 0.693_359_4;
const LN2_LO: f32 = -2.121_944_4e-4;
/// 1.5 · 2^23: adding and subtracting it rounds to the nearest integer.
const ROUND: f32 = 12_582_912.0;
/// Above this, e^x overflows.
const EXP_HI: f32 = 88.722_83;
/// Below this, e^x is subnormal (flushed to 0).
const EXP_LO: f32 = -87.336_54;

/// e^x for float32.
#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    // NaN passes through clamp unchanged, as in the branchy form.
    let xc = x.clamp(EXP_LO, EXP_HI);
    let t = xc * LOG2E + ROUND;
    let n = t - ROUND;
    // The integer n sits in the low mantissa bits of t.
    let ni = (t.to_bits() as i32).wrapping_sub(ROUND.to_bits() as i32);
    let r = (xc - n * LN2_HI) - n * LN2_LO;
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0 + r * (1.0 / 5040.0)))))));
    // 2^n as 2^h · 2^(n-h), h = n/2: both factors stay normal for n in [-126, 128].
    let h = ni >> 1;
    let s1 = f32::from_bits((h.wrapping_add(127) << 23) as u32);
    let s2 = f32::from_bits((ni.wrapping_sub(h).wrapping_add(127) << 23) as u32);
    let y = p * s1 * s2;
    if x < EXP_LO {
        0.0
    } else if x > EXP_HI {
        f32::INFINITY
    } else if x.is_nan() {
        x
    } else {
        y
    }
}

/// tanh x for float32: an odd Taylor polynomial near 0, `(1 - e^-2|x|) / (1 + e^-2|x|)`
/// elsewhere.
#[inline(always)]
pub fn tanh_f32(x: f32) -> f32 {
    let ax = x.abs();
    let z = x * x;
    let small = x + x
        * z
        * (-1.0 / 3.0 + z * (2.0 / 15.0 + z * (-17.0 / 315.0 + z * (62.0 / 2835.0 + z * (-1382.0 / 155_925.0)))));
    let t = exp_f32(-2.0 * ax);
    let big = ((1.0 - t) / (1.0 + t)).copysign(x);
    if ax < 0.25 {
        small
    } else {
        big
    }
}

/// 1 / (1 + e^-x) for float32.
#[inline(always)]
pub fn sigmoid_f32(x: f32) -> f32 {
    1.0 / (1.0 + exp_f32(-x))
}
