//! Convolutions with a 5×5 filter and stride 1 by Winograd's minimal filtering F(2×2, 5×5)
//! (Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks", 2016).
//!
//! Each 2×2 block of outputs ("tile") comes from the 6×6 input patch `d` around it as
//! `Aᵀ [U ⊙ (Bᵀ d B)] A`, where `U = G g Gᵀ` is the 5×5 filter `g` transformed once per
//! call. Summed over input channels, the 36 element-wise products become 36 matrix products
//! `M[p] = V[p] · U[p]` (tiles × input channels times input × output channels): 36
//! multiply-adds per tile, input and output channel where the direct sum takes 100.
//!
//! The interpolation points are 0, 1, -1, 1/2, -2 and ∞: of the sets tried, the one with the
//! smallest float32 error (about 1e-6 of the largest output on the MNIST CNN's second layer,
//! against 1e-7 for a direct sum). The filter is transformed in f64.
//!
//! Used for `Conv2D` (and `_FusedConv2D`) and `Conv2DBackpropInput` in float32 when the
//! channel counts are multiples of 16 and the CPU has AVX2 with FMA (the products are
//! hand-written for AVX-512 and AVX2); every image is one rayon task (a batch smaller than
//! the thread count is split into bands of tile rows), its tiles taken [`TILES`] at a time
//! so their transforms and products stay in L2.

use rayon::prelude::*;

use super::im2col::ConvGeom;
use super::winograd_weights::transform_filter;

/// Channels handled together by the transforms; both channel counts must be multiples.
const GROUP: usize = 16;

/// Tiles transformed and multiplied together.
const TILES: usize = 24;

/// Floats between the 36 transformed matrices of a block of `rows` tiles of `width`
/// channels: one cache line more than they need, so that the 36 stores of one tile's
/// transform do not fall on addresses a multiple of 4 KiB apart (which share L1 sets).
pub(super) fn plane(rows: usize, width: usize) -> usize {
    rows * width + 16
}

// Bᵀ, the input transform, is written out in `simd::input_1d`:
//   [1, -1.5, -2,  1.5, 1,   0]
//   [0, -1,    0.5, 2.5, 1,   0]
//   [0,  1,   -2.5, 0.5, 1,   0]
//   [0, -2,   -1,   2,   1,   0]
//   [0,  0.5, -1,  -0.5, 1,   0]
//   [0,  1,   -1.5, -2,  1.5, 1]
// and Aᵀ, the output transform, in `simd::output_1d`:
//   [1, 1,  1, 1,    1, 0]
//   [0, 1, -1, 0.5, -2, 1]

/// One stride-1 5×5 convolution: NHWC input `n × ih × iw × c`, output `n × oh × ow × k`,
/// output (y, x) reading inputs from (y - pad_y, x - pad_x) on (zero outside the input).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    pub n: usize,
    pub ih: usize,
    pub iw: usize,
    pub c: usize,
    pub oh: usize,
    pub ow: usize,
    pub k: usize,
    pub pad_y: usize,
    pub pad_x: usize,
}

impl Shape {
    /// The forward convolution `g` (input `x`, output `y`).
    pub(super) fn forward(g: &ConvGeom) -> Shape {
        Shape {
            n: g.n,
            ih: g.y.input,
            iw: g.x.input,
            c: g.c,
            oh: g.y.output,
            ow: g.x.output,
            k: g.oc,
            pad_y: g.y.pad,
            pad_x: g.x.pad,
        }
    }

    pub(super) fn tiles_x(&self) -> usize {
        self.ow.div_ceil(2)
    }

    pub(super) fn tiles(&self) -> usize {
        self.oh.div_ceil(2) * self.tiles_x()
    }
}

/// Computes the float32 convolution `out = conv(x, f)` (HWIO filter) here when it has a
/// 5×5 filter, unit strides and channels [`applies`] takes; false otherwise.
pub(crate) fn forward(g: &ConvGeom, x: &[f32], f: &[f32], out: &mut [f32]) -> bool {
    if !fits(g) {
        return false;
    }
    let (c, k) = (g.c, g.oc);
    let u = transform_filter(c, k, |tap, ci, co| f[(tap * c + ci) * k + co]);
    conv(&Shape::forward(g), x, &u, out)
}

/// Computes the float32 input gradient `dx` of the convolution `g` from `dy` here, as the
/// convolution of `dy` with the filter turned by 180° and its channels swapped, when
/// [`forward`] would take `g`; false otherwise. Writes every element of `dx`.
pub(crate) fn backprop_input(g: &ConvGeom, f: &[f32], dy: &[f32], dx: &mut [f32]) -> bool {
    if !fits(g) {
        return false;
    }
    let (c, k) = (g.oc, g.c);
    let u = transform_filter(c, k, |tap, ci, co| f[((24 - tap) * k + co) * c + ci]);
    let s = Shape {
        n: g.n,
        ih: g.y.output,
        iw: g.x.output,
        c,
        oh: g.y.input,
        ow: g.x.input,
        k,
        pad_y: 4 - g.y.pad,
        pad_x: 4 - g.x.pad,
    };
    conv(&s, dy, &u, dx)
}

/// Output tiles below which the im2col and direct kernels are faster: the filter transform
/// costs the same for any batch, and the MNIST CNN's second layer (32 → 64 channels, 7 × 7
/// tiles per image) only gained from Winograd's algorithm from a batch of 8 (BENCHMARKS.md).
const MIN_TILES: usize = 384;

/// Whether `g` has the 5×5 filter and unit strides this path is written for, with
/// channels it takes and enough output tiles to pay for the filter transform.
pub(super) fn fits(g: &ConvGeom) -> bool {
    (g.y.size, g.x.size, g.y.stride, g.x.stride) == (5, 5, 1, 1)
        && g.y.pad <= 4
        && g.x.pad <= 4
        && g.n * g.y.output.div_ceil(2) * g.x.output.div_ceil(2) >= MIN_TILES
        && applies(g.c, g.oc)
}

/// Whether this path computes a convolution with `c` input and `k` output channels here.
pub(crate) fn applies(c: usize, k: usize) -> bool {
    c.is_multiple_of(GROUP)
        && k.is_multiple_of(GROUP)
        && c >= GROUP
        && k >= GROUP
        && crate::isa::current().has_avx2_fma()
}

/// `out` = the convolution of `x` with the transformed filter `u`. Returns false (and
/// leaves `out` alone) when the CPU has no path for it ([`applies`] was false).
pub(crate) fn conv(s: &Shape, x: &[f32], u: &[f32], out: &mut [f32]) -> bool {
    assert!(
        s.c.is_multiple_of(GROUP) && s.k.is_multiple_of(GROUP),
        "winograd: channels {} and {} must be multiples of {GROUP}",
        s.c,
        s.k
    );
    assert_eq!(x.len(), s.n * s.ih * s.iw * s.c, "winograd: input size");
    assert_eq!(u.len(), 36 * s.c * s.k, "winograd: filter size");
    assert_eq!(out.len(), s.n * s.oh * s.ow * s.k, "winograd: output size");
    #[cfg(target_arch = "x86_64")]
    {
        let isa = crate::isa::current();
        if !isa.has_avx2_fma() || out.is_empty() {
            return out.is_empty();
        }
        let (in_len, out_len) = (s.ih * s.iw * s.c, s.oh * s.ow * s.k);
        // One task per image, or, for fewer images than threads, per band of tile rows.
        let (threads, tile_rows) = (rayon::current_num_threads(), s.oh.div_ceil(2));
        let bands = if s.n >= threads { 1 } else { threads.div_ceil(s.n).min(tile_rows) };
        let band_rows = tile_rows.div_ceil(bands);
        let band_len = (2 * band_rows * s.ow * s.k).min(out_len);
        let scratch = || (vec![0f32; 36 * plane(TILES, s.c)], vec![0f32; 36 * plane(TILES, s.k)]);
        let band = |sc: &mut (Vec<f32>, Vec<f32>), (b, i, o): (usize, usize, &mut [f32])| {
            let xi = &x[b * in_len..(b + 1) * in_len];
            let rows = i * band_rows..((i + 1) * band_rows).min(tile_rows);
            // SAFETY: the path was detected with these features (or chosen lower), and the
            // sizes were checked above; `o` is output rows 2·rows.start.. of image b.
            unsafe {
                if isa == crate::isa::Isa::Avx512 {
                    simd::image512(s, xi, u, (o, rows), sc)
                } else {
                    simd::image256(s, xi, u, (o, rows), sc)
                }
            }
        };
        let units = out
            .chunks_mut(out_len)
            .enumerate()
            .flat_map(|(b, o)| o.chunks_mut(band_len).enumerate().map(move |(i, ob)| (b, i, ob)));
        if s.n * bands > 1 && threads > 1 {
            units.collect::<Vec<_>>().into_par_iter().for_each_init(scratch, band);
        } else {
            let mut sc = scratch();
            units.for_each(|u| band(&mut sc, u));
        }
        true
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (x, u);
        out.is_empty()
    }
}

#[cfg(target_arch = "x86_64")]
pub(super) mod simd {
    use std::ops::Range;

    use super::super::simd::{F32Vec, Y, Z};
    use super::{plane, Shape, TILES};

    /// `Bᵀ d` (rows of [`super::BT`], written out as multiply-adds).
    ///
    /// # Safety
    /// The CPU must support `V`'s instructions.
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

    /// `Aᵀ m` (rows of [`super::AT`], written out).
    ///
    /// # Safety
    /// The CPU must support `V`'s instructions.
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

    /// `V[p][t]` (`v`: 36 planes of `pv` floats, rows of `c`) for tile (ty, tx) of one image `x`.
    ///
    /// # Safety
    /// The CPU must support `V`'s instructions; `x` is one image of `s`, `t` fits a plane, `v`
    /// holds `36·pv` and `c` is a multiple of `V::LANES`.
    #[inline(always)]
    pub(in crate::nn) unsafe fn input_tile<V: F32Vec>(
        s: &Shape,
        x: &[f32],
        (ty, tx): (usize, usize),
        (t, pv): (usize, usize),
        v: &mut [f32],
    ) {
        let c = s.c;
        let (iy0, ix0) = ((2 * ty) as isize - s.pad_y as isize, (2 * tx) as isize - s.pad_x as isize);
        let inside = |i: isize, n: usize| i >= 0 && (i as usize) < n;
        // SAFETY: reads are of in-bounds pixels (checked) at channels g0..g0 + LANES <= c;
        // writes land in v (p < 36, t < TILES, g0 + LANES <= c).
        unsafe {
            for g0 in (0..c).step_by(V::LANES) {
                let mut rows = [[V::zero(); 6]; 6];
                for (r, row) in rows.iter_mut().enumerate() {
                    let iy = iy0 + r as isize;
                    let mut d = [V::zero(); 6];
                    if inside(iy, s.ih) {
                        for (sc, ds) in d.iter_mut().enumerate() {
                            let ix = ix0 + sc as isize;
                            if inside(ix, s.iw) {
                                *ds = V::load(x.as_ptr().add((iy as usize * s.iw + ix as usize) * c + g0));
                            }
                        }
                    }
                    *row = input_1d(d);
                }
                for j in 0..6 {
                    let col = input_1d(rows.map(|r| r[j]));
                    for (i, vi) in col.iter().enumerate() {
                        vi.store(v.as_mut_ptr().add((i * 6 + j) * pv + t * c + g0));
                    }
                }
            }
        }
    }

    /// Writes tile (ty, tx) of one image's output from `M[p][t]` (`m`: 36 planes of `TILES` rows
    /// of `k`) to `out`, which starts at output row `row0`.
    ///
    /// # Safety
    /// As [`input_tile`], with `out` the image's output rows `row0..` up to and including the
    /// tile's (or to the image's end), and `m` of `36·TILES·k`.
    #[inline(always)]
    unsafe fn output_tile<V: F32Vec>(
        s: &Shape,
        m: &[f32],
        (ty, tx): (usize, usize),
        t: usize,
        (out, row0): (&mut [f32], usize),
    ) {
        let k = s.k;
        // SAFETY: reads from m as input_tile writes v; writes only to output pixels inside
        // the image, channels g0..g0 + LANES <= k.
        unsafe {
            for g0 in (0..k).step_by(V::LANES) {
                let mut cols = [[V::zero(); 2]; 6];
                for (j, col) in cols.iter_mut().enumerate() {
                    let mut mj = [V::zero(); 6];
                    for (i, mij) in mj.iter_mut().enumerate() {
                        *mij = V::load(m.as_ptr().add((i * 6 + j) * plane(TILES, k) + t * k + g0));
                    }
                    *col = output_1d(mj);
                }
                for a in 0..2 {
                    let oy = 2 * ty + a;
                    if oy >= s.oh {
                        continue;
                    }
                    let y = output_1d(cols.map(|c| c[a]));
                    for (b, yb) in y.iter().enumerate() {
                        let ox = 2 * tx + b;
                        if ox < s.ow {
                            yb.store(out.as_mut_ptr().add(((oy - row0) * s.ow + ox) * k + g0));
                        }
                    }
                }
            }
        }
    }

    /// Rows of `M` computed together by one micro-kernel call.
    const ROWS: usize = 6;

    /// `m[t][kb..kb + L·LANES] = Σ_ci v[t][ci] · u[ci][kb..]` for the `R` rows from `t0`.
    ///
    /// # Safety
    /// The CPU must support `V`'s instructions; `v` holds rows `t0 + R` of `c`, `u` holds
    /// `c` rows of `k`, `m` rows `t0 + R` of `k`, and `kb + L·LANES <= k`.
    #[inline(always)]
    unsafe fn rows<V: F32Vec, const L: usize, const R: usize>(
        v: &[f32],
        u: &[f32],
        m: &mut [f32],
        (c, k): (usize, usize),
        (t0, kb): (usize, usize),
    ) {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            let mut acc = [[V::zero(); L]; R];
            let (vp, up) = (v.as_ptr().add(t0 * c), u.as_ptr().add(kb));
            for ci in 0..c {
                let mut w = [V::zero(); L];
                for (l, wl) in w.iter_mut().enumerate() {
                    *wl = V::load(up.add(ci * k + l * V::LANES));
                }
                for (r, ar) in acc.iter_mut().enumerate() {
                    let a = V::splat(*vp.add(r * c + ci));
                    for (al, &wl) in ar.iter_mut().zip(&w) {
                        *al = al.mul_add(a, wl);
                    }
                }
            }
            let mp = m.as_mut_ptr().add(t0 * k + kb);
            for (r, ar) in acc.iter().enumerate() {
                for (l, al) in ar.iter().enumerate() {
                    al.store(mp.add(r * k + l * V::LANES));
                }
            }
        }
    }

    /// The `L·LANES` output channels from `kb` of the first `n` rows.
    ///
    /// # Safety
    /// As [`rows`], for rows `0..n`.
    #[inline(always)]
    unsafe fn columns<V: F32Vec, const L: usize>(
        v: &[f32],
        u: &[f32],
        m: &mut [f32],
        ck: (usize, usize),
        n: usize,
        kb: usize,
    ) {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            let mut t = 0;
            while t + ROWS <= n {
                rows::<V, L, ROWS>(v, u, m, ck, (t, kb));
                t += ROWS;
            }
            match n - t {
                5 => rows::<V, L, 5>(v, u, m, ck, (t, kb)),
                4 => rows::<V, L, 4>(v, u, m, ck, (t, kb)),
                3 => rows::<V, L, 3>(v, u, m, ck, (t, kb)),
                2 => rows::<V, L, 2>(v, u, m, ck, (t, kb)),
                1 => rows::<V, L, 1>(v, u, m, ck, (t, kb)),
                _ => {}
            }
        }
    }

    /// `m = v · u` for the first `n` rows (`v`: rows of `c`, `u`: `c × k`), `LMAX` vectors
    /// of output channels at a time.
    ///
    /// # Safety
    /// The CPU must support `V`'s instructions; `k` is a multiple of `V::LANES`.
    #[inline(always)]
    unsafe fn product<V: F32Vec, const LMAX: usize>(
        v: &[f32],
        u: &[f32],
        m: &mut [f32],
        (c, k): (usize, usize),
        n: usize,
    ) {
        assert!(v.len() >= n * c && u.len() >= c * k && m.len() >= n * k && k.is_multiple_of(V::LANES));
        // SAFETY: the sizes were checked above; the caller guarantees the instructions.
        unsafe {
            let mut kb = 0;
            while kb < k {
                let left = (k - kb) / V::LANES;
                if LMAX >= 4 && left >= 4 {
                    columns::<V, 4>(v, u, m, (c, k), n, kb);
                    kb += 4 * V::LANES;
                } else if left >= 2 {
                    columns::<V, 2>(v, u, m, (c, k), n, kb);
                    kb += 2 * V::LANES;
                } else {
                    columns::<V, 1>(v, u, m, (c, k), n, kb);
                    kb += V::LANES;
                }
            }
        }
    }

    /// One band of tile rows `rows` of one image: tiles [`TILES`] at a time, transformed,
    /// multiplied and written back to `out`, the image's output from row `2·rows.start` on.
    ///
    /// # Safety
    /// The CPU must support `V`'s instructions; `x` and `u` have the sizes of one image of `s`,
    /// `out` holds the band's output rows (`2·rows.len()`, fewer at the image's end), `sc`
    /// holds `36` planes of `TILES` rows of `c` and of `k` ([`plane`]).
    #[inline(always)]
    unsafe fn image<V: F32Vec, const LMAX: usize>(
        s: &Shape,
        x: &[f32],
        u: &[f32],
        (out, rows): (&mut [f32], Range<usize>),
        sc: &mut (Vec<f32>, Vec<f32>),
    ) {
        let (c, k, tw) = (s.c, s.k, s.tiles_x());
        assert_eq!(
            out.len(),
            (2 * rows.end).min(s.oh).saturating_sub(2 * rows.start) * s.ow * k,
            "winograd: band size"
        );
        let (v, m) = (&mut sc.0, &mut sc.1);
        let (mut t0, end) = (rows.start * tw, rows.end * tw);
        while t0 < end {
            let n = TILES.min(end - t0);
            for t in 0..n {
                // SAFETY: as this function's contract (t < TILES).
                unsafe { input_tile::<V>(s, x, ((t0 + t) / tw, (t0 + t) % tw), (t, plane(TILES, c)), v) };
            }
            for p in 0..36 {
                let (vp, up, mp) = (&v[p * plane(TILES, c)..], &u[p * c * k..], &mut m[p * plane(TILES, k)..]);
                // SAFETY: the caller guarantees the instructions; `product` checks sizes.
                unsafe { product::<V, LMAX>(vp, up, mp, (c, k), n) };
            }
            for t in 0..n {
                // SAFETY: as this function's contract (t < TILES); the tile's rows are in the band.
                unsafe { output_tile::<V>(s, m, ((t0 + t) / tw, (t0 + t) % tw), t, (&mut *out, 2 * rows.start)) };
            }
            t0 += n;
        }
    }

    /// [`image`] with AVX-512 vectors.
    ///
    /// # Safety
    /// The CPU must support AVX-512 F/BW/VL, AVX2 and FMA; sizes as [`image`].
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,fma")]
    pub(super) unsafe fn image512(
        s: &Shape,
        x: &[f32],
        u: &[f32],
        out: (&mut [f32], Range<usize>),
        sc: &mut (Vec<f32>, Vec<f32>),
    ) {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe { image::<Z, 4>(s, x, u, out, sc) }
    }

    /// [`image`] with AVX2 vectors (two per row: 12 accumulators fit AVX2's 16 registers).
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA; sizes as [`image`].
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn image256(
        s: &Shape,
        x: &[f32],
        u: &[f32],
        out: (&mut [f32], Range<usize>),
        sc: &mut (Vec<f32>, Vec<f32>),
    ) {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe { image::<Y, 2>(s, x, u, out, sc) }
    }
}

#[cfg(test)]
#[path = "winograd_tests.rs"]
mod tests;
