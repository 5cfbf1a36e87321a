//! The tile sizes of the Winograd convolutions (`winograd.rs`, `winograd_filter.rs`) for
//! 5×5 filters: F(2×2, 5×5) on 6×6 input patches and F(4×4, 5×5) on 8×8 ones, as the
//! matrices of Lavin and Gray's minimal filtering (modified Toom-Cook with the point at
//! infinity). The 3×3 filters' tiles are in `winograd_tile3.rs`.
//!
//! For a tile of `M × M` outputs from an `N × N` patch `d` (`N = M + R - 1` for an `R × R`
//! filter `g`): `y = Aᵀ [(G g Gᵀ) ⊙ (Bᵀ d B)] A`. The filter gradient uses the same points
//! the other way round, F(R×R, M×M): the `R × R` correlation of the patch with an `M × M`
//! tile of the output gradient `e` is `A_Rᵀ [(H e Hᵀ) ⊙ (Bᵀ d B)] A_R`, with the same `Bᵀ`
//! (`H`'s row for a point `p` is `G`'s first entry for it times `p⁰ … p^(M-1)`, `A_R`'s
//! column `p⁰ … p^(R-1)`; the point at infinity keeps `Aᵀ`'s sign).
//!
//! `Bᵀ`, `Aᵀ` and `H` are applied in f32 as the multiply-adds written out below (the rows
//! of the point pairs ±p share their even and odd halves); `G` and `A_Rᵀ`, applied once
//! per call to the filter or its gradient, are kept in f64.

#[cfg(target_arch = "x86_64")]
use super::simd::F32Vec;

/// One tile size: `M × M` outputs from `N × N` inputs per tile, for one filter side `R`
/// (`G[0].len()`).
pub trait Tile<const M: usize, const N: usize> {
    /// Tiles transformed and multiplied together by the forward kernels: their transforms
    /// and products stay in L2.
    const TILES: usize;

    /// G (`N` rows of `R`, the filter's side): the filter transform.
    const G: &'static [&'static [f64]];

    /// A_Rᵀ (`R` rows of `N`): the output transform of the filter gradient.
    const ATR: &'static [&'static [f64]];

    /// `Bᵀ d`, the input transform of one row or column.
    ///
    /// # Safety
    /// The CPU must support `V`'s instructions.
    #[cfg(target_arch = "x86_64")]
    unsafe fn input_1d<V: F32Vec>(d: [V; N]) -> [V; N];

    /// `Aᵀ m`, the output transform of one row or column.
    ///
    /// # Safety
    /// As [`Tile::input_1d`].
    #[cfg(target_arch = "x86_64")]
    unsafe fn output_1d<V: F32Vec>(m: [V; N]) -> [V; M];

    /// `H e`, the transform of one row or column of an output-gradient tile.
    ///
    /// # Safety
    /// As [`Tile::input_1d`].
    #[cfg(target_arch = "x86_64")]
    unsafe fn grad_1d<V: F32Vec>(e: [V; M]) -> [V; N];
}

/// F(2×2, 5×5), points 0, 1, -1, 1/2, -2 and ∞.
///
/// ```text
/// Bᵀ: [1, -1.5, -2,  1.5, 1,   0]     Aᵀ: [1, 1,  1, 1,    1, 0]
///     [0, -1,    0.5, 2.5, 1,   0]         [0, 1, -1, 0.5, -2, 1]
///     [0,  1,   -2.5, 0.5, 1,   0]
///     [0, -2,   -1,   2,   1,   0]     H (as rows of Hᵀ):
///     [0,  0.5, -1,  -0.5, 1,   0]         [1, 1/3, -1/3, -16/15,  1/15, 0]
///     [0,  1,   -1.5, -2,  1.5, 1]         [0, 1/3,  1/3,  -8/15, -2/15, 1]
/// ```
pub struct F2;

impl Tile<2, 6> for F2 {
    const TILES: usize = 24;

    const G: &'static [&'static [f64]] = &[
        &[1.0, 0.0, 0.0, 0.0, 0.0],
        &[1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0],
        &[-1.0 / 3.0, 1.0 / 3.0, -1.0 / 3.0, 1.0 / 3.0, -1.0 / 3.0],
        &[-16.0 / 15.0, -8.0 / 15.0, -4.0 / 15.0, -2.0 / 15.0, -1.0 / 15.0],
        &[1.0 / 15.0, -2.0 / 15.0, 4.0 / 15.0, -8.0 / 15.0, 16.0 / 15.0],
        &[0.0, 0.0, 0.0, 0.0, 1.0],
    ];

    const ATR: &'static [&'static [f64]] = &[
        &[1.0, 1.0, 1.0, 1.0, 1.0, 0.0],
        &[0.0, 1.0, -1.0, 0.5, -2.0, 0.0],
        &[0.0, 1.0, 1.0, 0.25, 4.0, 0.0],
        &[0.0, 1.0, -1.0, 0.125, -8.0, 0.0],
        &[0.0, 1.0, 1.0, 0.0625, 16.0, 1.0],
    ];

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn input_1d<V: F32Vec>(d: [V; 6]) -> [V; 6] {
        // SAFETY: the caller guarantees the instructions.
        unsafe {
            let c = V::splat;
            let (d42, d31) = (d[4].sub(d[2]), d[3].sub(d[1]));
            [
                d[0].add(d[4]).mul_add(c(-1.5), d[1]).mul_add(c(-2.0), d[2]).mul_add(c(1.5), d[3]),
                d[4].sub(d[1]).mul_add(c(0.5), d[2]).mul_add(c(2.5), d[3]),
                d[4].add(d[1]).mul_add(c(-2.5), d[2]).mul_add(c(0.5), d[3]),
                d42.mul_add(c(2.0), d31),
                d42.mul_add(c(-0.5), d31),
                d[1].add(d[5]).mul_add(c(-1.5), d[2]).mul_add(c(-2.0), d[3]).mul_add(c(1.5), d[4]),
            ]
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn output_1d<V: F32Vec>(m: [V; 6]) -> [V; 2] {
        // SAFETY: the caller guarantees the instructions.
        unsafe {
            [
                m[0].add(m[1]).add(m[2].add(m[3])).add(m[4]),
                m[1].sub(m[2]).mul_add(V::splat(0.5), m[3]).mul_add(V::splat(-2.0), m[4]).add(m[5]),
            ]
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn grad_1d<V: F32Vec>([a, b]: [V; 2]) -> [V; 6] {
        // SAFETY: the caller guarantees the instructions.
        unsafe {
            let c = V::splat;
            [
                a,
                a.add(b).mul(c(1.0 / 3.0)),
                b.sub(a).mul(c(1.0 / 3.0)),
                a.mul(c(-16.0 / 15.0)).mul_add(b, c(-8.0 / 15.0)),
                a.mul(c(1.0 / 15.0)).mul_add(b, c(-2.0 / 15.0)),
                b,
            ]
        }
    }
}

/// F(4×4, 5×5), points 0, ±1, ±2, ±1/2 and ∞: 64 products per tile of 16 outputs where
/// F(2×2) takes 144, for about four times its float32 rounding error
/// (`scripts/bench/winograd_error.py`).
///
/// ```text
/// Bᵀ: [1,  0,   -21/4,  0,     21/4,  0,    -1, 0]   Aᵀ: [1, 1,  1, 1,  1, 1,    1,    0]
///     [0,  1,    1,    -17/4, -17/4,  1,     1, 0]       [0, 1, -1, 2, -2, 1/2, -1/2,  0]
///     [0, -1,    1,     17/4, -17/4, -1,     1, 0]       [0, 1,  1, 4,  4, 1/4,  1/4,  0]
///     [0,  1/2,  1/4,  -5/2,  -5/4,   2,     1, 0]       [0, 1, -1, 8, -8, 1/8, -1/8,  1]
///     [0, -1/2,  1/4,   5/2,  -5/4,  -2,     1, 0]
///     [0,  2,    4,    -5/2,  -5,     1/2,   1, 0]   H (as rows of Hᵀ):
///     [0, -2,    4,     5/2,  -5,    -1/2,   1, 0]       [1, -2/9, -2/9, 1/90,  1/90, 32/45,  32/45, 0]
///     [0, -1,    0,     21/4,  0,    -21/4,  0, 1]       [0, -2/9,  2/9, 1/45, -1/45, 16/45, -16/45, 0]
///                                                        [0, -2/9, -2/9, 2/45,  2/45,  8/45,   8/45, 0]
///                                                        [0, -2/9,  2/9, 4/45, -4/45,  4/45,  -4/45, 1]
/// ```
pub struct F4;

impl Tile<4, 8> for F4 {
    const TILES: usize = 6;

    const G: &'static [&'static [f64]] = &[
        &[1.0, 0.0, 0.0, 0.0, 0.0],
        &[-2.0 / 9.0, -2.0 / 9.0, -2.0 / 9.0, -2.0 / 9.0, -2.0 / 9.0],
        &[-2.0 / 9.0, 2.0 / 9.0, -2.0 / 9.0, 2.0 / 9.0, -2.0 / 9.0],
        &[1.0 / 90.0, 1.0 / 45.0, 2.0 / 45.0, 4.0 / 45.0, 8.0 / 45.0],
        &[1.0 / 90.0, -1.0 / 45.0, 2.0 / 45.0, -4.0 / 45.0, 8.0 / 45.0],
        &[32.0 / 45.0, 16.0 / 45.0, 8.0 / 45.0, 4.0 / 45.0, 2.0 / 45.0],
        &[32.0 / 45.0, -16.0 / 45.0, 8.0 / 45.0, -4.0 / 45.0, 2.0 / 45.0],
        &[0.0, 0.0, 0.0, 0.0, 1.0],
    ];

    const ATR: &'static [&'static [f64]] = &[
        &[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0],
        &[0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 0.0],
        &[0.0, 1.0, 1.0, 4.0, 4.0, 0.25, 0.25, 0.0],
        &[0.0, 1.0, -1.0, 8.0, -8.0, 0.125, -0.125, 0.0],
        &[0.0, 1.0, 1.0, 16.0, 16.0, 0.0625, 0.0625, 1.0],
    ];

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn input_1d<V: F32Vec>(d: [V; 8]) -> [V; 8] {
        // SAFETY: the caller guarantees the instructions.
        unsafe {
            let c = V::splat;
            let d3 = d[3].mul(c(-2.5));
            let (e1, o1) = (d[2].add(d[6]).mul_add(d[4], c(-4.25)), d[1].add(d[5]).mul_add(d[3], c(-4.25)));
            let e2 = d[6].mul_add(d[2], c(0.25)).mul_add(d[4], c(-1.25));
            let o2 = d3.mul_add(d[1], c(0.5)).mul_add(d[5], c(2.0));
            let e3 = d[6].mul_add(d[2], c(4.0)).mul_add(d[4], c(-5.0));
            let o3 = d3.mul_add(d[1], c(2.0)).mul_add(d[5], c(0.5));
            [
                d[0].sub(d[6]).mul_add(d[4].sub(d[2]), c(5.25)),
                e1.add(o1),
                e1.sub(o1),
                e2.add(o2),
                e2.sub(o2),
                e3.add(o3),
                e3.sub(o3),
                d[7].sub(d[1]).mul_add(d[3].sub(d[5]), c(5.25)),
            ]
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn output_1d<V: F32Vec>(m: [V; 8]) -> [V; 4] {
        // SAFETY: the caller guarantees the instructions.
        unsafe {
            let c = V::splat;
            let (a1, b1) = (m[1].add(m[2]), m[1].sub(m[2]));
            let (a2, b2) = (m[3].add(m[4]), m[3].sub(m[4]));
            let (a3, b3) = (m[5].add(m[6]), m[5].sub(m[6]));
            [
                m[0].add(a1).add(a2.add(a3)),
                b1.mul_add(b2, c(2.0)).mul_add(b3, c(0.5)),
                a1.mul_add(a2, c(4.0)).mul_add(a3, c(0.25)),
                b1.mul_add(b2, c(8.0)).mul_add(b3, c(0.125)).add(m[7]),
            ]
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn grad_1d<V: F32Vec>(e: [V; 4]) -> [V; 8] {
        // SAFETY: the caller guarantees the instructions.
        unsafe {
            let c = V::splat;
            let (e1, o1) = (e[0].add(e[2]), e[1].add(e[3]));
            let e2 = e[0].mul(c(1.0 / 90.0)).mul_add(e[2], c(2.0 / 45.0));
            let o2 = e[1].mul(c(1.0 / 45.0)).mul_add(e[3], c(4.0 / 45.0));
            let e3 = e[0].mul(c(32.0 / 45.0)).mul_add(e[2], c(8.0 / 45.0));
            let o3 = e[1].mul(c(16.0 / 45.0)).mul_add(e[3], c(4.0 / 45.0));
            [
                e[0],
                e1.add(o1).mul(c(-2.0 / 9.0)),
                e1.sub(o1).mul(c(-2.0 / 9.0)),
                e2.add(o2),
                e2.sub(o2),
                e3.add(o3),
                e3.sub(o3),
                e[3],
            ]
        }
    }
}
