//! `Conv2DBackpropFilter` for the convolutions `winograd.rs` computes (3×3 or 5×5 filter,
//! stride 1, float32, channels in 16s, AVX2 or AVX-512) by Winograd's F(r×r, m×m), with the
//! forward path's tile side `m` and interpolation points (`winograd_tile.rs`).
//!
//! The filter gradient `dw[ky][kx] = Σ x[oy + ky - pad][ox + kx - pad] · dy[oy][ox]` is, for
//! each `m × m` tile of `dy`, the `r × r` correlation of the tile's `n × n` input patch `d`
//! with the tile: `A_Rᵀ [(H dy Hᵀ) ⊙ (Bᵀ d B)] A_R`. `Bᵀ` is the forward's input transform, so the
//! patches are transformed by the same code. Summed over tiles the element-wise products
//! become `n²` matrix products `M[p] += V[p]ᵀ · W[p]` (input channels × tiles times tiles ×
//! output channels) done by gemm over blocks of tiles ([`block`]). Each thread sums its
//! share of the tiles; the partial sums are added in a fixed order, then transformed back
//! in f64.

use rayon::prelude::*;

use super::im2col::ConvGeom;
use super::winograd::{fits, plane, Shape};
use super::winograd_tile::{Tile, F2, F4};
use super::winograd_tile3::{F2R3, F4R3};

/// Tiles transformed together before their products are summed: 32 of 6×6 (2×2 tiles),
/// 18 of 8×8, so that a block's transforms take about the same room.
fn block(n: usize) -> usize {
    1152 / (n * n)
}

/// The filter gradient (HWIO, `r·r·c·k`) of the convolution `g` of `x` giving `dy`, when
/// this path takes `g` ([`fits`]); `None` otherwise.
pub fn backprop_filter(g: &ConvGeom, x: &[f32], dy: &[f32]) -> Option<Vec<f32>> {
    if !fits(g) {
        return None;
    }
    let s = Shape::forward(g);
    assert_eq!(x.len(), s.n * s.ih * s.iw * s.c, "winograd: input size");
    assert_eq!(dy.len(), s.n * s.oh * s.ow * s.k, "winograd: gradient size");
    match (s.r, s.tile()) {
        (3, 4) => gradient::<F4R3, 4, 6>(&s, x, dy),
        (3, _) => gradient::<F2R3, 2, 4>(&s, x, dy),
        (_, 4) => gradient::<F4, 4, 8>(&s, x, dy),
        _ => gradient::<F2, 2, 6>(&s, x, dy),
    }
}

/// [`backprop_filter`] with the tile `T`.
fn gradient<T: Tile<M, N>, const M: usize, const N: usize>(s: &Shape, x: &[f32], dy: &[f32]) -> Option<Vec<f32>> {
    let total = s.n * s.tiles(M);
    let threads = rayon::current_num_threads().max(1);
    let parts = if threads > 1 && total >= 2 * block(N) { threads } else { 1 };
    let per = total.div_ceil(parts.max(1)).max(1);
    let partials: Vec<Vec<f32>> = (0..parts)
        .into_par_iter()
        .map(|p| sums::<T, M, N>(s, x, dy, (p * per).min(total), ((p + 1) * per).min(total)))
        .collect::<Option<_>>()?;
    let mut m = vec![0f32; N * N * s.c * s.k];
    for part in &partials {
        for (a, &b) in m.iter_mut().zip(part) {
            *a += b;
        }
    }
    Some(output_transform(T::ATR, &m, s.c, s.k))
}

/// `M = Σ V[p]ᵀ · W[p]` over the tiles `begin..end` (numbered across the batch), or `None`
/// without AVX2.
fn sums<T: Tile<M, N>, const M: usize, const N: usize>(
    s: &Shape,
    x: &[f32],
    dy: &[f32],
    begin: usize,
    end: usize,
) -> Option<Vec<f32>> {
    let (c, k, block) = (s.c, s.k, block(N));
    let mut m = vec![0f32; N * N * c * k];
    let mut v = vec![0f32; N * N * plane(block, c)];
    let mut w = vec![0f32; N * N * plane(block, k)];
    let mut t0 = begin;
    while t0 < end {
        let n = block.min(end - t0);
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the path was detected with these features (or chosen lower); the sizes
        // were checked by the caller and the buffers sized above.
        unsafe {
            let tiles = simd::Tiles { s, x, dy, t0, n, block };
            match crate::isa::current() {
                crate::isa::Isa::Avx512 => simd::transform512::<T, M, N>(&tiles, &mut v, &mut w),
                crate::isa::Isa::Avx2 => simd::transform256::<T, M, N>(&tiles, &mut v, &mut w),
                crate::isa::Isa::Portable => return None,
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        return None;
        for p in 0..N * N {
            let (pv, pw) = (p * plane(block, c), p * plane(block, k));
            let a = super::gemm::Mat::row_major(&v[pv..pv + n * c], c, true);
            let b = super::gemm::Mat::row_major(&w[pw..pw + n * k], k, false);
            <f32 as super::gemm::GemmScalar>::gemm(c, k, n, a, b, &mut m[p * c * k..(p + 1) * c * k], k, true, false);
        }
        t0 += n;
    }
    Some(m)
}

/// `dw[ky][kx][ci][co] = Σ_ij A_Rᵀ[ky][i] · M[i][j][ci][co] · A_Rᵀ[kx][j]`, in f64; the rows
/// `ky` in parallel.
fn output_transform(at: &[&[f64]], m: &[f32], c: usize, k: usize) -> Vec<f32> {
    let (r, n) = (at.len(), at.first().map_or(0, |row| row.len()));
    let mut dw = vec![0f32; r * r * c * k];
    if dw.is_empty() {
        return dw;
    }
    dw.par_chunks_mut(r * c * k).zip(at.par_iter()).for_each(|(dwy, a)| {
        let mut t = vec![0f64; n * k];
        let mut acc = vec![0f64; k];
        crate::isa::vectorized(|| {
            for ci in 0..c {
                // t[j] = Σ_i A_Rᵀ[ky][i] · M[i][j]
                for j in 0..n {
                    let out = &mut t[j * k..(j + 1) * k];
                    out.fill(0.0);
                    for (i, &av) in a.iter().enumerate() {
                        let row = &m[((i * n + j) * c + ci) * k..((i * n + j) * c + ci + 1) * k];
                        for (o, &x) in out.iter_mut().zip(row) {
                            *o += av * x as f64;
                        }
                    }
                }
                // dw[ky][kx] = Σ_j t[j] · A_Rᵀ[kx][j]
                for (kx, ax) in at.iter().enumerate() {
                    acc.fill(0.0);
                    for (j, &av) in ax.iter().enumerate() {
                        for (s, &x) in acc.iter_mut().zip(&t[j * k..(j + 1) * k]) {
                            *s += x * av;
                        }
                    }
                    for (o, &s) in dwy[(kx * c + ci) * k..(kx * c + ci + 1) * k].iter_mut().zip(&acc) {
                        *o = s as f32;
                    }
                }
            }
        });
    });
    dw
}

#[cfg(target_arch = "x86_64")]
mod simd {
    use super::super::simd::{isa_entry_points, F32Vec, Y, Z};
    use super::super::winograd::plane;
    use super::super::winograd_simd::input_tile;
    use super::super::winograd_tile::Tile;
    use super::Shape;

    /// `W[p][t]` (`w`: `N²` planes of `block` rows of `k`) for the `M × M` tile (ty, tx) of
    /// one image's `dy` (zero outside the image).
    ///
    /// # Safety
    /// The CPU must support `V`'s instructions; `dy` is one image of `s`'s output, `t <
    /// block`, `w` holds `N²` such planes and `k` is a multiple of `V::LANES`.
    #[inline(always)]
    unsafe fn grad_tile<V: F32Vec, T: Tile<M, N>, const M: usize, const N: usize>(
        s: &Shape,
        dy: &[f32],
        (ty, tx): (usize, usize),
        (t, pw): (usize, usize),
        w: &mut [f32],
    ) {
        let k = s.k;
        // SAFETY: reads of output pixels inside the image (checked), channels g0..g0 +
        // LANES <= k; writes inside w (p < N², t < block).
        unsafe {
            for g0 in (0..k).step_by(V::LANES) {
                let mut rows = [[V::zero(); N]; M];
                for (a, row) in rows.iter_mut().enumerate() {
                    let oy = M * ty + a;
                    let mut d = [V::zero(); M];
                    for (b, db) in d.iter_mut().enumerate() {
                        let ox = M * tx + b;
                        if oy < s.oh && ox < s.ow {
                            *db = V::load(dy.as_ptr().add((oy * s.ow + ox) * k + g0));
                        }
                    }
                    *row = T::grad_1d(d);
                }
                for j in 0..N {
                    for (i, wi) in T::grad_1d(rows.map(|r| r[j])).iter().enumerate() {
                        wi.store(w.as_mut_ptr().add((i * N + j) * pw + t * k + g0));
                    }
                }
            }
        }
    }

    /// A block of tiles to transform: `n` tiles from `t0` (numbered across the batch) of
    /// the convolution `s` of `x` (the whole batch) whose output gradient is `dy`, into
    /// planes of `block` rows.
    pub(super) struct Tiles<'a> {
        pub s: &'a Shape,
        pub x: &'a [f32],
        pub dy: &'a [f32],
        pub t0: usize,
        pub n: usize,
        pub block: usize,
    }

    /// Transforms the block's input patches into `v` and its gradient tiles into `w`.
    ///
    /// # Safety
    /// The CPU must support `V`'s instructions; `x` and `dy` are the whole batch of `s`,
    /// `n <= block`, `v` and `w` hold `N²` planes of `block` rows of `c` and `k`.
    #[inline(always)]
    unsafe fn transform<V: F32Vec, T: Tile<M, N>, const M: usize, const N: usize>(
        b: &Tiles,
        v: &mut [f32],
        w: &mut [f32],
    ) {
        let s = b.s;
        let (per, tw) = (s.tiles(M), s.tiles_x(M));
        let (il, ol) = (s.ih * s.iw * s.c, s.oh * s.ow * s.k);
        let (pv, pw) = (plane(b.block, s.c), plane(b.block, s.k));
        for t in 0..b.n {
            let (img, local) = ((b.t0 + t) / per, (b.t0 + t) % per);
            let tile = (local / tw, local % tw);
            // SAFETY: as this function's contract (t < n <= block).
            unsafe {
                input_tile::<V, T, M, N>(s, &b.x[img * il..(img + 1) * il], tile, (t, pv), v);
                grad_tile::<V, T, M, N>(s, &b.dy[img * ol..(img + 1) * ol], tile, (t, pw), w);
            }
        }
    }

    isa_entry_points! {
        [T: Tile<M, N>, const M: usize, const N: usize](b: &Tiles, v: &mut [f32], w: &mut [f32]);
        /// [`transform`] with AVX2 vectors.
        ///
        /// # Safety
        /// The CPU must support AVX2 and FMA; sizes as [`transform`].
        pub(super) fn transform256 {
            // SAFETY: the caller upholds this function's `# Safety` contract.
            unsafe { transform::<Y, T, M, N>(b, v, w) }
        }
        /// [`transform`] with AVX-512 vectors.
        ///
        /// # Safety
        /// The CPU must support AVX-512 F/BW/VL, AVX2 and FMA; sizes as [`transform`].
        pub(super) fn transform512 {
            // SAFETY: the caller upholds this function's `# Safety` contract.
            unsafe { transform::<Z, T, M, N>(b, v, w) }
        }
    }
}
