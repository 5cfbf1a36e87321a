//! f32 vectors for the hand-written kernels: one trait, [`Y`] (AVX2, 8 lanes) and [`Z`]
//! (AVX-512, 16 lanes), so a kernel is written once, generic over the vector, and compiled
//! per instruction set by an entry point with that `#[target_feature]`.
//!
//! Every method is `#[inline(always)]` and must be inlined into such an entry point: the
//! intrinsics inside are only compiled to single instructions there.

use std::arch::x86_64::*;

/// A vector of f32 lanes.
pub trait F32Vec: Copy {
    /// Lanes per vector.
    const LANES: usize;

    /// All lanes zero.
    ///
    /// # Safety
    /// The CPU must support the vector's instruction set.
    unsafe fn zero() -> Self;

    /// All lanes `v`.
    ///
    /// # Safety
    /// As [`F32Vec::zero`].
    unsafe fn splat(v: f32) -> Self;

    /// `LANES` elements from `p` (unaligned).
    ///
    /// # Safety
    /// As [`F32Vec::zero`]; `p..p + LANES` must be readable.
    unsafe fn load(p: *const f32) -> Self;

    /// Stores the lanes at `p` (unaligned).
    ///
    /// # Safety
    /// As [`F32Vec::zero`]; `p..p + LANES` must be writable.
    unsafe fn store(self, p: *mut f32);

    /// `a · b + self`, fused (one rounding).
    ///
    /// # Safety
    /// As [`F32Vec::zero`].
    unsafe fn mul_add(self, a: Self, b: Self) -> Self;

    /// `self + o`.
    ///
    /// # Safety
    /// As [`F32Vec::zero`].
    unsafe fn add(self, o: Self) -> Self;

    /// `self - o`.
    ///
    /// # Safety
    /// As [`F32Vec::zero`].
    unsafe fn sub(self, o: Self) -> Self;

    /// `self · o`.
    ///
    /// # Safety
    /// As [`F32Vec::zero`].
    unsafe fn mul(self, o: Self) -> Self;
}

/// Implements [`F32Vec`] for the one-register wrapper `$v` with `$lanes` lanes, each
/// method one intrinsic (named in the order of the trait's methods).
macro_rules! f32vec {
    ($v:ident, $lanes:literal, $zero:ident, $splat:ident, $load:ident, $store:ident, $fma:ident, $add:ident, $sub:ident, $mul:ident) => {
        impl F32Vec for $v {
            const LANES: usize = $lanes;

            #[inline(always)]
            unsafe fn zero() -> Self {
                // SAFETY: the caller guarantees the CPU has the instructions.
                unsafe { $v($zero()) }
            }

            #[inline(always)]
            unsafe fn splat(v: f32) -> Self {
                // SAFETY: the caller guarantees the CPU has the instructions.
                unsafe { $v($splat(v)) }
            }

            #[inline(always)]
            unsafe fn load(p: *const f32) -> Self {
                // SAFETY: the caller guarantees `p..p + LANES` is readable.
                $v(unsafe { $load(p) })
            }

            #[inline(always)]
            unsafe fn store(self, p: *mut f32) {
                // SAFETY: the caller guarantees `p..p + LANES` is writable.
                unsafe { $store(p, self.0) }
            }

            #[inline(always)]
            unsafe fn mul_add(self, a: Self, b: Self) -> Self {
                // SAFETY: the caller guarantees the CPU has the instructions.
                unsafe { $v($fma(a.0, b.0, self.0)) }
            }

            #[inline(always)]
            unsafe fn add(self, o: Self) -> Self {
                // SAFETY: the caller guarantees the CPU has the instructions.
                unsafe { $v($add(self.0, o.0)) }
            }

            #[inline(always)]
            unsafe fn sub(self, o: Self) -> Self {
                // SAFETY: the caller guarantees the CPU has the instructions.
                unsafe { $v($sub(self.0, o.0)) }
            }

            #[inline(always)]
            unsafe fn mul(self, o: Self) -> Self {
                // SAFETY: the caller guarantees the CPU has the instructions.
                unsafe { $v($mul(self.0, o.0)) }
            }
        }
    };
}

/// Eight f32 lanes (AVX2 with FMA).
#[derive(Clone, Copy)]
pub struct Y(__m256);

f32vec!(
    Y,
    8,
    _mm256_setzero_ps,
    _mm256_set1_ps,
    _mm256_loadu_ps,
    _mm256_storeu_ps,
    _mm256_fmadd_ps,
    _mm256_add_ps,
    _mm256_sub_ps,
    _mm256_mul_ps
);

/// Sixteen f32 lanes (AVX-512 F).
#[derive(Clone, Copy)]
pub(crate) struct Z(__m512);

f32vec!(
    Z,
    16,
    _mm512_setzero_ps,
    _mm512_set1_ps,
    _mm512_loadu_ps,
    _mm512_storeu_ps,
    _mm512_fmadd_ps,
    _mm512_add_ps,
    _mm512_sub_ps,
    _mm512_mul_ps
);

/// Defines a kernel's two entry points with the same parameters: the first compiled with
/// AVX2 and FMA, the second with AVX-512 F/BW/VL, AVX2 and FMA. Each body runs the kernel,
/// generic over the vector and `#[inline(always)]`, with that instruction set's vectors.
///
/// ```ignore
/// isa_entry_points! {
///     [const K: usize](g: &Geom, out: &mut [f32]);
///     /// docs
///     pub(super) fn run_avx2 { unsafe { kernel::<Y, K>(g, out) } }
///     /// docs
///     pub(super) fn run_avx512 { unsafe { kernel::<Z, K>(g, out) } }
/// }
/// ```
macro_rules! isa_entry_points {
    (
        [$($gen:tt)*]($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)?;
        $(#[$m2:meta])* $v2:vis fn $avx2:ident $body2:block
        $(#[$m5:meta])* $v5:vis fn $avx512:ident $body5:block
    ) => {
        $(#[$m2])*
        #[target_feature(enable = "avx2,fma")]
        $v2 unsafe fn $avx2<$($gen)*>($($arg: $ty),*) $(-> $ret)? $body2

        $(#[$m5])*
        #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,fma")]
        $v5 unsafe fn $avx512<$($gen)*>($($arg: $ty),*) $(-> $ret)? $body5
    };
}
pub(crate) use isa_entry_points;
