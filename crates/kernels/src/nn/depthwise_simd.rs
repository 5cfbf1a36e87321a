//! Hand-vectorized float32 depthwise kernels (channel multiplier 1, AVX2 or AVX-512), used by
//! `depthwise.rs` and `depthwise_backprop.rs` when they apply.
//!
//! The portable kernels keep one pixel's channels in memory and load, add and store them once
//! per filter tap. Here a block of channels (`L` vectors) of `P` adjacent output pixels stays
//! in registers for the whole window: each tap loads one filter vector per block and one
//! input vector per pixel (the forward kernel is in `depthwise_forward_simd.rs`). The filter
//! gradient keeps one block of every column tap of a filter row in registers while it walks
//! an output row; its edge pixels and channels past the last whole vector take a scalar path.
//!
//! The input gradient at stride 1 is the forward convolution of the output gradient with the
//! filter turned 180° and the padding mirrored (`k - 1 - pad`); other strides gather
//! (`depthwise_strided.rs`).

use super::common::Window;
use super::depthwise::DwGeom;
use crate::real::Real;

/// Element types whose depthwise kernels may have a vectorized path; each method returns
/// false when it did not compute (then the portable kernel runs).
pub(crate) trait DwScalar: Real {
    /// The forward convolution into `out`.
    fn forward_simd(_g: &DwGeom, _x: &[Self], _f: &[Self], _out: &mut [Self]) -> bool {
        false
    }

    /// The input gradient into `dx`.
    fn backprop_input_simd(_g: &DwGeom, _f: &[Self], _dy: &[Self], _dx: &mut [Self]) -> bool {
        false
    }

    /// The filter gradient into `df` (zeroed by the caller).
    fn backprop_filter_simd(_g: &DwGeom, _x: &[Self], _dy: &[Self], _df: &mut [Self]) -> bool {
        false
    }
}

impl DwScalar for f64 {}

impl DwScalar for f32 {
    fn forward_simd(g: &DwGeom, x: &[f32], f: &[f32], out: &mut [f32]) -> bool {
        #[cfg(target_arch = "x86_64")]
        if applies(g) && x.len() >= g.n * g.y.input * g.x.input * g.c && out.len() >= out_len(g) {
            return super::depthwise_forward_simd::forward(g, x, f, out);
        }
        false
    }

    fn backprop_input_simd(g: &DwGeom, f: &[f32], dy: &[f32], dx: &mut [f32]) -> bool {
        #[cfg(target_arch = "x86_64")]
        if let Some(t) = transposed(g) {
            let (kh, kw, c) = (g.y.size, g.x.size, g.c);
            if f.len() < kh * kw * c || dy.len() < out_len(g) {
                return false;
            }
            // The filter turned 180°: tap (ky, kx) becomes (kh-1-ky, kw-1-kx).
            let mut flipped = vec![0.0f32; kh * kw * c];
            for (t, dst) in flipped.chunks_exact_mut(c).enumerate() {
                let src = kh * kw - 1 - t;
                dst.copy_from_slice(&f[src * c..(src + 1) * c]);
            }
            return Self::forward_simd(&t, dy, &flipped, dx);
        }
        super::depthwise_strided::backprop_input(g, f, dy, dx)
    }

    fn backprop_filter_simd(g: &DwGeom, x: &[f32], dy: &[f32], df: &mut [f32]) -> bool {
        #[cfg(target_arch = "x86_64")]
        if applies(g) && x.len() >= g.n * g.y.input * g.x.input * g.c && dy.len() >= out_len(g) {
            return avx::filter(g, x, dy, df);
        }
        false
    }
}

fn out_len(g: &DwGeom) -> usize {
    g.out_dims().iter().product()
}

/// Multiplier 1, a vector ISA, at least one AVX2 vector of channels and a non-empty output.
fn applies(g: &DwGeom) -> bool {
    g.m == 1 && g.c >= 8 && crate::isa::current().has_avx2_fma() && out_len(g) > 0 && g.x.input > 0
}

/// The geometry whose forward convolution is the input gradient of `g` (stride 1 only):
/// input = the output gradient, output = the input's size, padding `k - 1 - pad` before.
fn transposed(g: &DwGeom) -> Option<DwGeom> {
    if g.m != 1 {
        return None;
    }
    let t = DwGeom { n: g.n, c: g.c, m: 1, y: g.y.turned()?, x: g.x.turned()? };
    applies(&t).then_some(t)
}

/// The output columns whose window lies inside the input row: `lo..hi`.
pub(super) fn interior(w: &Window) -> (usize, usize) {
    let lo = w.pad.div_ceil(w.stride).min(w.output);
    let hi = if w.input + w.pad >= w.size { ((w.input + w.pad - w.size) / w.stride + 1).min(w.output) } else { 0 };
    (lo, hi.max(lo))
}

#[cfg(target_arch = "x86_64")]
mod avx {
    use rayon::prelude::*;

    use super::super::depthwise::DwGeom;
    use super::super::simd::{isa_entry_points, F32Vec, Y, Z};
    use super::interior;
    /// Adds one filter row's gradient over an output row's interior pixels for channels
    /// `c0..c0 + V::LANES·L` into `acc` (the filter-shaped buffer): `K` column taps.
    ///
    /// # Safety
    /// The CPU must support `V`'s instructions; `g.x.size == K`; input row `iy` exists;
    /// sizes as [`fwd_px`].
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn filter_row<V: F32Vec, const L: usize, const K: usize>(
        g: &DwGeom,
        xrow: &[f32],
        dyrow: &[f32],
        ky: usize,
        (lo, hi): (usize, usize),
        c0: usize,
        acc: &mut [f32],
    ) {
        let (c, s) = (g.c, g.x.stride);
        // SAFETY: the caller upholds the contract; every index is inside its slice.
        unsafe {
            let mut a = [[V::zero(); L]; K];
            let xp = xrow.as_ptr().add(c0);
            let dp = dyrow.as_ptr().add(c0);
            for ox in lo..hi {
                let d: [V; L] = std::array::from_fn(|l| V::load(dp.add(ox * c + l * V::LANES)));
                let base = xp.add((ox * s - g.x.pad) * c);
                for (kx, ak) in a.iter_mut().enumerate() {
                    for (l, al) in ak.iter_mut().enumerate() {
                        *al = al.mul_add(V::load(base.add(kx * c + l * V::LANES)), d[l]);
                    }
                }
            }
            for (kx, ak) in a.iter().enumerate() {
                let t = acc.as_mut_ptr().add((ky * K + kx) * c + c0);
                for (l, al) in ak.iter().enumerate() {
                    V::load(t.add(l * V::LANES)).add(*al).store(t.add(l * V::LANES));
                }
            }
        }
    }

    /// One output row's contribution to the filter gradient `acc`.
    ///
    /// # Safety
    /// The CPU must support `V`'s and `W`'s instructions; `g.x.size == K`.
    #[inline(always)]
    unsafe fn filter_one_row<V: F32Vec, W: F32Vec, const K: usize>(
        g: &DwGeom,
        x: &[f32],
        dy: &[f32],
        r: usize,
        acc: &mut [f32],
    ) {
        let (c, w, ow) = (g.c, g.x.input, g.x.output);
        let (b, oy) = (r / g.y.output, r % g.y.output);
        let (lo, hi) = interior(&g.x);
        let (y0, y1) = g.y.range(oy);
        let ky0 = y0 + g.y.pad - oy * g.y.stride;
        let dyrow = &dy[r * ow * c..(r + 1) * ow * c];
        for (ky, iy) in (ky0..).zip(y0..y1) {
            let xrow = &x[(b * g.y.input + iy) * w * c..(b * g.y.input + iy + 1) * w * c];
            let mut c0 = 0;
            // SAFETY: the caller's contract; each block lies inside the channels, the row exists.
            unsafe {
                while c0 + 2 * V::LANES <= c {
                    filter_row::<V, 2, K>(g, xrow, dyrow, ky, (lo, hi), c0, acc);
                    c0 += 2 * V::LANES;
                }
                while c0 + V::LANES <= c {
                    filter_row::<V, 1, K>(g, xrow, dyrow, ky, (lo, hi), c0, acc);
                    c0 += V::LANES;
                }
                while c0 + W::LANES <= c {
                    filter_row::<W, 1, K>(g, xrow, dyrow, ky, (lo, hi), c0, acc);
                    c0 += W::LANES;
                }
            }
            let vec_end = c0;
            // Channel tails of interior pixels, and every channel of edge pixels.
            for ox in lo..hi {
                let xb = (ox * g.x.stride - g.x.pad) * c;
                for kx in 0..K {
                    let t = (ky * K + kx) * c;
                    for ch in vec_end..c {
                        acc[t + ch] += xrow[xb + kx * c + ch] * dyrow[ox * c + ch];
                    }
                }
            }
            for ox in (0..lo).chain(hi..ow) {
                let (x0, x1) = g.x.range(ox);
                let kx0 = x0 + g.x.pad - ox * g.x.stride;
                for (kx, ix) in (kx0..).zip(x0..x1) {
                    let t = (ky * K + kx) * c;
                    for ch in 0..c {
                        acc[t + ch] += xrow[ix * c + ch] * dyrow[ox * c + ch];
                    }
                }
            }
        }
    }

    /// Output rows `rows` into a fresh filter-sized buffer, with `V` vectors.
    ///
    /// # Safety
    /// The CPU must support `V`'s instructions; `g.x.size == K`.
    #[inline(always)]
    unsafe fn filter_rows<V: F32Vec, W: F32Vec, const K: usize>(
        g: &DwGeom,
        x: &[f32],
        dy: &[f32],
        rows: std::ops::Range<usize>,
        len: usize,
    ) -> Vec<f32> {
        let mut acc = vec![0.0f32; len];
        for r in rows {
            // SAFETY: the caller's contract.
            unsafe { filter_one_row::<V, W, K>(g, x, dy, r, &mut acc) };
        }
        acc
    }

    isa_entry_points! {
        [const K: usize](g: &DwGeom, x: &[f32], dy: &[f32], rows: std::ops::Range<usize>, len: usize) -> Vec<f32>;
        /// # Safety
        /// The CPU must support AVX2 and FMA.
        fn filter_avx2 {
            // SAFETY: this function runs with AVX2 and FMA.
            unsafe { filter_rows::<Y, Y, K>(g, x, dy, rows, len) }
        }
        /// # Safety
        /// The CPU must support AVX-512 F/BW/VL, AVX2 and FMA.
        fn filter_avx512 {
            // SAFETY: this function runs with AVX-512, AVX2 and FMA.
            unsafe { filter_rows::<Z, Y, K>(g, x, dy, rows, len) }
        }
    }

    /// The filter gradient for 3- and 5-column filters (false for other widths).
    pub(super) fn filter(g: &DwGeom, x: &[f32], dy: &[f32], df: &mut [f32]) -> bool {
        let len = g.y.size * g.x.size * g.c;
        if df.len() != len || !matches!(g.x.size, 3 | 5) {
            return false;
        }
        let avx512 = crate::isa::current() == crate::isa::Isa::Avx512;
        let k5 = g.x.size == 5;
        let run = |rows: std::ops::Range<usize>| {
            // SAFETY: `applies` checked the CPU has the path's instructions; K is the width.
            unsafe {
                match (avx512, k5) {
                    (true, false) => filter_avx512::<3>(g, x, dy, rows, len),
                    (true, true) => filter_avx512::<5>(g, x, dy, rows, len),
                    (false, false) => filter_avx2::<3>(g, x, dy, rows, len),
                    (false, true) => filter_avx2::<5>(g, x, dy, rows, len),
                }
            }
        };
        let rows = g.n * g.y.output;
        let threads = rayon::current_num_threads();
        let per = g.rows_per_task(rows, g.x.output * g.c * g.y.size * g.x.size).max(rows.div_ceil(threads * 2));
        let tasks = rows.div_ceil(per);
        let sum = if tasks <= 1 {
            run(0..rows)
        } else {
            let add = |mut a: Vec<f32>, b: Vec<f32>| {
                a.iter_mut().zip(&b).for_each(|(p, &q)| *p += q);
                a
            };
            (0..tasks)
                .into_par_iter()
                .map(|t| run(t * per..((t + 1) * per).min(rows)))
                .reduce_with(add)
                .unwrap_or_default()
        };
        if sum.len() != len {
            return false;
        }
        df.copy_from_slice(&sum);
        true
    }
}
