//! The tile sizes of the Winograd convolutions for 3×3 filters (ResNet's and VGG's):
//! F(2×2, 3×3) on 4×4 input patches and F(4×4, 3×3) on 6×6 ones, in the form of
//! `winograd_tile.rs` (which describes the transforms and the filter gradient's use of them).

#[cfg(target_arch = "x86_64")]
use super::simd::F32Vec;
use super::winograd_tile::Tile;

/// F(2×2, 3×3), points 0, 1, -1 and ∞: 16 products per tile of 4 outputs where the direct
/// sum takes 36.
///
/// ```text
/// Bᵀ: [1,  0, -1,  0]     Aᵀ: [1, 1,  1,  0]      H (as rows of Hᵀ):
///     [0,  1,  1,  0]         [0, 1, -1, -1]          [1, 1/2,  1/2, 0]
///     [0, -1,  1,  0]                                 [0, 1/2, -1/2, 1]
///     [0,  1,  0, -1]
/// ```
pub struct F2R3;

impl Tile<2, 4> for F2R3 {
    const TILES: usize = 24;

    const G: &'static [&'static [f64]] = &[&[1.0, 0.0, 0.0], &[0.5, 0.5, 0.5], &[0.5, -0.5, 0.5], &[0.0, 0.0, 1.0]];

    const ATR: &'static [&'static [f64]] = &[&[1.0, 1.0, 1.0, 0.0], &[0.0, 1.0, -1.0, 0.0], &[0.0, 1.0, 1.0, -1.0]];

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn input_1d<V: F32Vec>(d: [V; 4]) -> [V; 4] {
        // SAFETY: the caller guarantees the instructions.
        unsafe { [d[0].sub(d[2]), d[1].add(d[2]), d[2].sub(d[1]), d[1].sub(d[3])] }
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn output_1d<V: F32Vec>(m: [V; 4]) -> [V; 2] {
        // SAFETY: the caller guarantees the instructions.
        unsafe { [m[0].add(m[1]).add(m[2]), m[1].sub(m[2]).sub(m[3])] }
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn grad_1d<V: F32Vec>([a, b]: [V; 2]) -> [V; 4] {
        // SAFETY: the caller guarantees the instructions.
        unsafe {
            let half = V::splat(0.5);
            [a, a.add(b).mul(half), a.sub(b).mul(half), b]
        }
    }
}

/// F(4×4, 3×3), points 0, ±1, ±2 and ∞: 36 products per tile of 16 outputs where the
/// direct sum takes 144 (and F(2×2) 64), for a few times F(2×2)'s rounding error.
///
/// ```text
/// Bᵀ: [4,  0, -5,  0, 1, 0]   Aᵀ: [1, 1,  1, 1,  1, 0]   H (as rows of Hᵀ):
///     [0, -4, -4,  1, 1, 0]       [0, 1, -1, 2, -2, 0]       [1/4, -1/6, -1/6, 1/24,  1/24, 0]
///     [0,  4, -4, -1, 1, 0]       [0, 1,  1, 4,  4, 0]       [0,   -1/6,  1/6, 1/12, -1/12, 0]
///     [0, -2, -1,  2, 1, 0]       [0, 1, -1, 8, -8, 1]       [0,   -1/6, -1/6, 1/6,   1/6,  0]
///     [0,  2, -1, -2, 1, 0]                                  [0,   -1/6,  1/6, 1/3,  -1/3,  1]
///     [0,  4,  0, -5, 0, 1]
/// ```
pub struct F4R3;

impl Tile<4, 6> for F4R3 {
    const TILES: usize = 12;

    const G: &'static [&'static [f64]] = &[
        &[0.25, 0.0, 0.0],
        &[-1.0 / 6.0, -1.0 / 6.0, -1.0 / 6.0],
        &[-1.0 / 6.0, 1.0 / 6.0, -1.0 / 6.0],
        &[1.0 / 24.0, 1.0 / 12.0, 1.0 / 6.0],
        &[1.0 / 24.0, -1.0 / 12.0, 1.0 / 6.0],
        &[0.0, 0.0, 1.0],
    ];

    const ATR: &'static [&'static [f64]] =
        &[&[1.0, 1.0, 1.0, 1.0, 1.0, 0.0], &[0.0, 1.0, -1.0, 2.0, -2.0, 0.0], &[0.0, 1.0, 1.0, 4.0, 4.0, 1.0]];

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn input_1d<V: F32Vec>(d: [V; 6]) -> [V; 6] {
        // SAFETY: the caller guarantees the instructions.
        unsafe {
            let c = V::splat;
            let (e1, o1) = (d[4].mul_add(d[2], c(-4.0)), d[3].mul_add(d[1], c(-4.0)));
            let (e2, o2) = (d[4].sub(d[2]), d[3].sub(d[1]).mul(c(2.0)));
            [
                d[4].mul_add(d[0], c(4.0)).mul_add(d[2], c(-5.0)),
                e1.add(o1),
                e1.sub(o1),
                e2.add(o2),
                e2.sub(o2),
                d[5].mul_add(d[1], c(4.0)).mul_add(d[3], c(-5.0)),
            ]
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn output_1d<V: F32Vec>(m: [V; 6]) -> [V; 4] {
        // SAFETY: the caller guarantees the instructions.
        unsafe {
            let c = V::splat;
            let (a1, b1) = (m[1].add(m[2]), m[1].sub(m[2]));
            let (a2, b2) = (m[3].add(m[4]), m[3].sub(m[4]));
            [m[0].add(a1).add(a2), b1.mul_add(b2, c(2.0)), a1.mul_add(a2, c(4.0)), b1.mul_add(b2, c(8.0)).add(m[5])]
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn grad_1d<V: F32Vec>(e: [V; 4]) -> [V; 6] {
        // SAFETY: the caller guarantees the instructions.
        unsafe {
            let c = V::splat;
            let (e1, o1) = (e[0].add(e[2]), e[1].add(e[3]));
            let e2 = e[0].mul(c(1.0 / 24.0)).mul_add(e[2], c(1.0 / 6.0));
            let o2 = e[1].mul(c(1.0 / 12.0)).mul_add(e[3], c(1.0 / 3.0));
            [
                e[0].mul(c(0.25)),
                e1.add(o1).mul(c(-1.0 / 6.0)),
                e1.sub(o1).mul(c(-1.0 / 6.0)),
                e2.add(o2),
                e2.sub(o2),
                e[3],
            ]
        }
    }
}
