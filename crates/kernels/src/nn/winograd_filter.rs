//! `Conv2DBackpropFilter` for the convolutions `winograd.rs` computes (5×5 filter, stride 1,
//! float32, channels in 16s, AVX2 or AVX-512) by Winograd's F(5×5, 2×2).
//!
//! The filter gradient `dw[ky][kx] = Σ x[oy + ky - pad][ox + kx - pad] · dy[oy][ox]` is, for
//! each 2×2 tile of `dy`, the 5×5 correlation of the tile's 6×6 input patch `d` with the
//! tile: `Aᵀ [(G dy Gᵀ) ⊙ (Bᵀ d B)] A`. With the forward path's interpolation points
//! (0, 1, -1, 1/2, -2, ∞) `Bᵀ` is the forward's input transform, so the patches are
//! transformed by the same code. Summed over tiles the element-wise products become 36
//! matrix products `M[p] += V[p]ᵀ · W[p]` (input channels × tiles times tiles × output
//! channels) done by gemm over blocks of [`BLOCK`] tiles: 36 multiply-adds per tile and
//! channel pair where the direct sum takes 100. Each thread sums its share of the tiles;
//! the partial sums are added in a fixed order, then transformed back in f64.
//!
//! Gᵀ (2×6):  [1, 1/3, -1/3, -16/15,  1/15, 0]
//!            [0, 1/3,  1/3,  -8/15, -2/15, 1]
//! Aᵀ (5×6):  [1, 1,  1, 1,      1,  0]
//!            [0, 1, -1, 1/2,   -2,  0]
//!            [0, 1,  1, 1/4,    4,  0]
//!            [0, 1, -1, 1/8,   -8,  0]
//!            [0, 1,  1, 1/16,  16,  1]

use rayon::prelude::*;

use super::im2col::ConvGeom;
use super::winograd::{fits, plane, Shape};

/// Tiles transformed together before their products are summed.
const BLOCK: usize = 32;

/// Aᵀ: the output transform.
const AT: [[f64; 6]; 5] = [
    [1.0, 1.0, 1.0, 1.0, 1.0, 0.0],
    [0.0, 1.0, -1.0, 0.5, -2.0, 0.0],
    [0.0, 1.0, 1.0, 0.25, 4.0, 0.0],
    [0.0, 1.0, -1.0, 0.125, -8.0, 0.0],
    [0.0, 1.0, 1.0, 0.0625, 16.0, 1.0],
];

/// The filter gradient (HWIO, `5·5·c·k`) of the convolution `g` of `x` giving `dy`, when
/// this path takes `g` ([`fits`]); `None` otherwise.
pub(crate) fn backprop_filter(g: &ConvGeom, x: &[f32], dy: &[f32]) -> Option<Vec<f32>> {
    if !fits(g) {
        return None;
    }
    let s = Shape::forward(g);
    assert_eq!(x.len(), s.n * s.ih * s.iw * s.c, "winograd: input size");
    assert_eq!(dy.len(), s.n * s.oh * s.ow * s.k, "winograd: gradient size");
    let total = s.n * s.tiles();
    let threads = rayon::current_num_threads().max(1);
    let parts = if threads > 1 && total >= 2 * BLOCK { threads } else { 1 };
    let per = total.div_ceil(parts.max(1)).max(1);
    let partials: Vec<Vec<f32>> = (0..parts)
        .into_par_iter()
        .map(|p| sums(&s, x, dy, (p * per).min(total), ((p + 1) * per).min(total)))
        .collect::<Option<_>>()?;
    let mut m = vec![0f32; 36 * s.c * s.k];
    for part in &partials {
        for (a, &b) in m.iter_mut().zip(part) {
            *a += b;
        }
    }
    Some(output_transform(&m, s.c, s.k))
}

/// `M = Σ V[p]ᵀ · W[p]` over the tiles `begin..end` (numbered across the batch), or `None`
/// without AVX2.
fn sums(s: &Shape, x: &[f32], dy: &[f32], begin: usize, end: usize) -> Option<Vec<f32>> {
    let mut m = vec![0f32; 36 * s.c * s.k];
    let mut v = vec![0f32; 36 * plane(BLOCK, s.c)];
    let mut w = vec![0f32; 36 * plane(BLOCK, s.k)];
    let mut t0 = begin;
    while t0 < end {
        let n = BLOCK.min(end - t0);
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the path was detected with these features (or chosen lower); the sizes
        // were checked by the caller and the buffers sized above.
        unsafe {
            let tiles = simd::Tiles { s, x, dy, t0, n };
            match crate::isa::current() {
                crate::isa::Isa::Avx512 => simd::transform512(&tiles, &mut v, &mut w),
                crate::isa::Isa::Avx2 => simd::transform256(&tiles, &mut v, &mut w),
                crate::isa::Isa::Portable => return None,
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        return None;
        let (c, k) = (s.c, s.k);
        for p in 0..36 {
            let (pv, pw) = (p * plane(BLOCK, c), p * plane(BLOCK, k));
            let a = super::gemm::Mat::row_major(&v[pv..pv + n * c], c, true);
            let b = super::gemm::Mat::row_major(&w[pw..pw + n * k], k, false);
            <f32 as super::gemm::GemmScalar>::gemm(c, k, n, a, b, &mut m[p * c * k..(p + 1) * c * k], k, true, false);
        }
        t0 += n;
    }
    Some(m)
}

/// `dw[ky][kx][ci][co] = Σ_ij Aᵀ[ky][i] · M[i][j][ci][co] · Aᵀ[kx][j]`, in f64.
fn output_transform(m: &[f32], c: usize, k: usize) -> Vec<f32> {
    let mut dw = vec![0f32; 25 * c * k];
    let mut t = vec![0f64; 30 * k];
    crate::isa::vectorized(|| {
        for ci in 0..c {
            // t[ky][j] = Σ_i Aᵀ[ky][i] · M[i][j]
            for (ky, a) in AT.iter().enumerate() {
                for j in 0..6 {
                    let out = &mut t[(ky * 6 + j) * k..(ky * 6 + j + 1) * k];
                    out.fill(0.0);
                    for (i, &av) in a.iter().enumerate() {
                        let row = &m[((i * 6 + j) * c + ci) * k..((i * 6 + j) * c + ci + 1) * k];
                        for (o, &x) in out.iter_mut().zip(row) {
                            *o += av * x as f64;
                        }
                    }
                }
            }
            // dw[ky][kx] = Σ_j t[ky][j] · Aᵀ[kx][j]
            for ky in 0..5 {
                for (kx, a) in AT.iter().enumerate() {
                    let out = &mut dw[((ky * 5 + kx) * c + ci) * k..((ky * 5 + kx) * c + ci + 1) * k];
                    for (co, o) in out.iter_mut().enumerate() {
                        let mut acc = 0f64;
                        for (j, &av) in a.iter().enumerate() {
                            acc += t[(ky * 6 + j) * k + co] * av;
                        }
                        *o = acc as f32;
                    }
                }
            }
        }
    });
    dw
}

#[cfg(target_arch = "x86_64")]
mod simd {
    use super::super::simd::{F32Vec, Y, Z};
    use super::super::winograd::plane;
    use super::super::winograd::simd::input_tile;
    use super::{Shape, BLOCK};

    /// `G u` for a pair of gradient values (rows of G; its transpose is in the module doc).
    ///
    /// # Safety
    /// The CPU must support `V`'s instructions.
    #[inline(always)]
    unsafe fn grad_1d<V: F32Vec>([a, b]: [V; 2]) -> [V; 6] {
        // SAFETY: the caller guarantees the instructions.
        unsafe {
            let (c, z) = (V::splat, V::zero());
            [
                a,
                z.mul_add(a.add(b), c(1.0 / 3.0)),
                z.mul_add(b.sub(a), c(1.0 / 3.0)),
                z.mul_add(a, c(-16.0 / 15.0)).mul_add(b, c(-8.0 / 15.0)),
                z.mul_add(a, c(1.0 / 15.0)).mul_add(b, c(-2.0 / 15.0)),
                b,
            ]
        }
    }

    /// `W[p][t]` (`w`: 36 planes of `BLOCK` rows of `k`) for the 2×2 tile (ty, tx) of one image's `dy`
    /// (zero outside the image).
    ///
    /// # Safety
    /// The CPU must support `V`'s instructions; `dy` is one image of `s`'s output, `t <
    /// BLOCK`, `w` holds 36 such planes and `k` is a multiple of `V::LANES`.
    #[inline(always)]
    unsafe fn grad_tile<V: F32Vec>(s: &Shape, dy: &[f32], (ty, tx): (usize, usize), t: usize, w: &mut [f32]) {
        let k = s.k;
        // SAFETY: reads of output pixels inside the image (checked), channels g0..g0 +
        // LANES <= k; writes inside w (p < 36, t < BLOCK).
        unsafe {
            for g0 in (0..k).step_by(V::LANES) {
                let mut d = [[V::zero(); 2]; 2];
                for (a, da) in d.iter_mut().enumerate() {
                    let oy = 2 * ty + a;
                    for (b, dab) in da.iter_mut().enumerate() {
                        let ox = 2 * tx + b;
                        if oy < s.oh && ox < s.ow {
                            *dab = V::load(dy.as_ptr().add((oy * s.ow + ox) * k + g0));
                        }
                    }
                }
                let rows = [grad_1d(d[0]), grad_1d(d[1])];
                for j in 0..6 {
                    for (i, wi) in grad_1d(rows.map(|r| r[j])).iter().enumerate() {
                        wi.store(w.as_mut_ptr().add((i * 6 + j) * plane(BLOCK, k) + t * k + g0));
                    }
                }
            }
        }
    }

    /// A block of tiles to transform: `n` tiles from `t0` (numbered across the batch) of
    /// the convolution `s` of `x` (the whole batch) whose output gradient is `dy`.
    pub(super) struct Tiles<'a> {
        pub s: &'a Shape,
        pub x: &'a [f32],
        pub dy: &'a [f32],
        pub t0: usize,
        pub n: usize,
    }

    /// Transforms the block's input patches into `v` and its gradient tiles into `w`.
    ///
    /// # Safety
    /// The CPU must support `V`'s instructions; `x` and `dy` are the whole batch of `s`,
    /// `n <= BLOCK`, `v` and `w` hold 36 planes of `BLOCK` rows of `c` and `k`.
    #[inline(always)]
    unsafe fn transform<V: F32Vec>(b: &Tiles, v: &mut [f32], w: &mut [f32]) {
        let s = b.s;
        let (per, tw) = (s.tiles(), s.tiles_x());
        let (il, ol) = (s.ih * s.iw * s.c, s.oh * s.ow * s.k);
        for t in 0..b.n {
            let (img, local) = ((b.t0 + t) / per, (b.t0 + t) % per);
            let tile = (local / tw, local % tw);
            // SAFETY: as this function's contract (t < n <= BLOCK).
            unsafe {
                input_tile::<V>(s, &b.x[img * il..(img + 1) * il], tile, (t, plane(BLOCK, s.c)), v);
                grad_tile::<V>(s, &b.dy[img * ol..(img + 1) * ol], tile, t, w);
            }
        }
    }

    /// [`transform`] with AVX-512 vectors.
    ///
    /// # Safety
    /// The CPU must support AVX-512 F/BW/VL, AVX2 and FMA; sizes as [`transform`].
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,fma")]
    pub(super) unsafe fn transform512(b: &Tiles, v: &mut [f32], w: &mut [f32]) {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe { transform::<Z>(b, v, w) }
    }

    /// [`transform`] with AVX2 vectors.
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA; sizes as [`transform`].
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn transform256(b: &Tiles, v: &mut [f32], w: &mut [f32]) {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe { transform::<Y>(b, v, w) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nn::common::{Padding, Window};

    #[test]
    fn matches_the_direct_sum() {
        if !super::super::winograd::applies(16, 16) {
            return;
        }
        // Batches with at least MIN_TILES output tiles (7 × 7 and 3 × 2 per image).
        for (n, h, w, c, k, p) in [(8, 14, 14, 32, 64, Padding::Same), (64, 9, 7, 16, 32, Padding::Valid)] {
            let g = ConvGeom { n, c, oc: k, y: Window::new(h, 5, 1, p).unwrap(), x: Window::new(w, 5, 1, p).unwrap() };
            let mut r = ferroflow_core::SplitMix64::new(9);
            let mut vals = |len: usize| -> Vec<f32> {
                (0..len).map(|_| (r.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0).collect()
            };
            let (x, dy) = (vals(n * h * w * c), vals(g.rows() * k));
            let got = backprop_filter(&g, &x, &dy).unwrap();
            let big = {
                let mut want = vec![0f64; 25 * c * k];
                for b in 0..n {
                    for oy in 0..g.y.output {
                        for ox in 0..g.x.output {
                            for ky in 0..5 {
                                for kx in 0..5 {
                                    let iy = (oy + ky) as isize - g.y.pad as isize;
                                    let ix = (ox + kx) as isize - g.x.pad as isize;
                                    if iy < 0 || ix < 0 || iy >= h as isize || ix >= w as isize {
                                        continue;
                                    }
                                    for ci in 0..c {
                                        let xv = x[((b * h + iy as usize) * w + ix as usize) * c + ci] as f64;
                                        for co in 0..k {
                                            want[((ky * 5 + kx) * c + ci) * k + co] +=
                                                xv * dy[((b * g.y.output + oy) * g.x.output + ox) * k + co] as f64;
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
                want
            };
            let scale = big.iter().fold(0f64, |m, v| m.max(v.abs()));
            let e = got.iter().zip(&big).fold(0f64, |m, (&a, &b)| m.max((a as f64 - b).abs())) / scale;
            assert!(e < 5e-6, "{:?}: error {e:e}", (n, h, w, c, k, p));
        }
    }
}
