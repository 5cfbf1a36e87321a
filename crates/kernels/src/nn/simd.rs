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

/// Eight f32 lanes (AVX2 with FMA).
#[derive(Clone, Copy)]
pub struct Y(__m256);

impl F32Vec for Y {
    const LANES: usize = 8;

    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: the caller guarantees the CPU has the instructions.
        unsafe { Y(_mm256_setzero_ps()) }
    }

    #[inline(always)]
    unsafe fn splat(v: f32) -> Self {
        // SAFETY: the caller guarantees the CPU has the instructions.
        unsafe { Y(_mm256_set1_ps(v)) }
    }

    #[inline(always)]
    unsafe fn load(p: *const f32) -> Self {
        // SAFETY: the caller guarantees `p..p + 8` is readable.
        Y(unsafe { _mm256_loadu_ps(p) })
    }

    #[inline(always)]
    unsafe fn store(self, p: *mut f32) {
        // SAFETY: the caller guarantees `p..p + 8` is writable.
        unsafe { _mm256_storeu_ps(p, self.0) }
    }

    #[inline(always)]
    unsafe fn mul_add(self, a: Self, b: Self) -> Self {
        // SAFETY: the caller guarantees the CPU has the instructions.
        unsafe { Y(_mm256_fmadd_ps(a.0, b.0, self.0)) }
    }

    #[inline(always)]
    unsafe fn add(self, o: Self) -> Self {
        // SAFETY: the caller guarantees the CPU has the instructions.
        unsafe { Y(_mm256_add_ps(self.0, o.0)) }
    }

    #[inline(always)]
    unsafe fn sub(self, o: Self) -> Self {
        // SAFETY: the caller guarantees the CPU has the instructions.
        unsafe { Y(_mm256_sub_ps(self.0, o.0)) }
    }

    #[inline(always)]
    unsafe fn mul(self, o: Self) -> Self {
        // SAFETY: the caller guarantees the CPU has the instructions.
        unsafe { Y(_mm256_mul_ps(self.0, o.0)) }
    }
}

/// Sixteen f32 lanes (AVX-512 F).
#[derive(Clone, Copy)]
pub(crate) struct Z(__m512);

impl F32Vec for Z {
    const LANES: usize = 16;

    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: the caller guarantees the CPU has the instructions.
        unsafe { Z(_mm512_setzero_ps()) }
    }

    #[inline(always)]
    unsafe fn splat(v: f32) -> Self {
        // SAFETY: the caller guarantees the CPU has the instructions.
        unsafe { Z(_mm512_set1_ps(v)) }
    }

    #[inline(always)]
    unsafe fn load(p: *const f32) -> Self {
        // SAFETY: the caller guarantees `p..p + 16` is readable.
        Z(unsafe { _mm512_loadu_ps(p) })
    }

    #[inline(always)]
    unsafe fn store(self, p: *mut f32) {
        // SAFETY: the caller guarantees `p..p + 16` is writable.
        unsafe { _mm512_storeu_ps(p, self.0) }
    }

    #[inline(always)]
    unsafe fn mul_add(self, a: Self, b: Self) -> Self {
        // SAFETY: the caller guarantees the CPU has the instructions.
        unsafe { Z(_mm512_fmadd_ps(a.0, b.0, self.0)) }
    }

    #[inline(always)]
    unsafe fn add(self, o: Self) -> Self {
        // SAFETY: the caller guarantees the CPU has the instructions.
        unsafe { Z(_mm512_add_ps(self.0, o.0)) }
    }

    #[inline(always)]
    unsafe fn sub(self, o: Self) -> Self {
        // SAFETY: the caller guarantees the CPU has the instructions.
        unsafe { Z(_mm512_sub_ps(self.0, o.0)) }
    }

    #[inline(always)]
    unsafe fn mul(self, o: Self) -> Self {
        // SAFETY: the caller guarantees the CPU has the instructions.
        unsafe { Z(_mm512_mul_ps(self.0, o.0)) }
    }
}
