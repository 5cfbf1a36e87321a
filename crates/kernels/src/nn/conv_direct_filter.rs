//! Direct filter gradient for inputs with few channels (the companion of `conv_direct`):
//! `dw[tap, :] = Σ_pixels x[pixel + tap] · dy[pixel, :]`, accumulated in AVX2 or AVX-512
//! registers along each output row, with no patch matrix. f32 on x86-64 on an ISA path with AVX2 and
//! FMA ([`crate::isa::current`]) only; other cases use im2col + gemm.

use rayon::prelude::*;

use super::conv_direct::direct_applies;
use super::gemm::PAR_GEMM_MIN;
use super::im2col::ConvGeom;

/// `dw[K × oc]`, or `None` when the direct kernel does not apply on this CPU or geometry.
pub(crate) fn backprop_filter_direct_f32(g: &ConvGeom, x: &[f32], dy: &[f32]) -> Option<Vec<f32>> {
    #[cfg(target_arch = "x86_64")]
    if direct_applies(g) && crate::isa::current().has_avx2_fma() {
        let rows = g.n * g.y.output;
        let threads = rayon::current_num_threads();
        let parts = if threads > 1 && g.rows() * g.k() * g.oc >= PAR_GEMM_MIN { threads.min(rows) } else { 1 };
        let per = rows.div_ceil(parts);
        let part = |p: usize| {
            let mut dw = vec![0.0f32; g.k() * g.oc];
            let range = p * per..((p + 1) * per).min(rows);
            if crate::isa::current() == crate::isa::Isa::Avx512 {
                // SAFETY: the CPU supports AVX-512 (the ISA path was detected with it).
                unsafe { avx::rows512(g, x, dy, range, &mut dw) };
            } else {
                // SAFETY: the CPU supports AVX2 and FMA (the ISA path was detected with them).
                unsafe { avx::rows(g, x, dy, range, &mut dw) };
            }
            dw
        };
        if parts == 1 {
            return Some(part(0));
        }
        let partials: Vec<Vec<f32>> = (0..parts).into_par_iter().map(part).collect();
        let mut dw = vec![0.0f32; g.k() * g.oc];
        for p in partials {
            dw.iter_mut().zip(p).for_each(|(a, v)| *a += v);
        }
        return Some(dw);
    }
    let _ = (g, x, dy);
    None
}

#[cfg(target_arch = "x86_64")]
mod avx {
    use std::ops::Range;

    use super::super::simd::{F32Vec, Y, Z};
    use super::ConvGeom;

    /// Output columns whose window column `kx` falls inside the input.
    #[inline(always)]
    fn columns(g: &ConvGeom, kx: usize) -> Range<usize> {
        let (s, pad) = (g.x.stride as isize, g.x.pad as isize);
        let lo = (pad - kx as isize).max(0);
        let lo = (lo + s - 1) / s;
        let lim = g.x.input as isize + pad - kx as isize;
        let hi = if lim <= 0 { 0 } else { (lim + s - 1) / s };
        (lo as usize).min(g.x.output)..(hi as usize).min(g.x.output)
    }

    /// `dw[t, ob..ob + w] += Σ_ox x[ix(ox)] · dy[ox, ob..ob + w]` (`w = V::LANES·L`) over one
    /// output row, `H` interleaved accumulator sets to hide the FMA latency.
    ///
    /// # Safety
    /// The CPU must support `V`'s instructions; only called from the entry points below.
    #[inline(always)]
    unsafe fn tap<V: F32Vec, const L: usize, const H: usize>(
        g: &ConvGeom,
        xrow: &[f32],
        dyrow: &[f32],
        (kx, ci, ob): (usize, usize, usize),
        dw: &mut [f32],
    ) {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            let (c, oc, sx, w) = (g.c, g.oc, g.x.stride, V::LANES * L);
            let cols = columns(g, kx);
            if cols.is_empty() {
                return;
            }
            // Input element of output column ox: ((ox·s + kx - pad)·c + ci).
            let first = (cols.start * sx + kx - g.x.pad) * c + ci;
            let n = cols.len();
            let xs = &xrow[first..first + (n - 1) * sx * c + 1];
            let ds = &dyrow[cols.start * oc + ob..(cols.start + n - 1) * oc + ob + w];
            let mut acc = [[V::zero(); L]; H];
            let (xp, dp) = (xs.as_ptr(), ds.as_ptr());
            // In bounds: i < n and the slices above cover x[i·s·c] and dy[i·oc + w).
            let mut i = 0;
            while i + H <= n {
                for (h, ah) in acc.iter_mut().enumerate() {
                    let xv = V::splat(*xp.add((i + h) * sx * c));
                    let d = dp.add((i + h) * oc);
                    for (l, a) in ah.iter_mut().enumerate() {
                        *a = a.mul_add(xv, V::load(d.add(l * V::LANES)));
                    }
                }
                i += H;
            }
            for (h, ah) in acc.iter_mut().enumerate().take(n - i) {
                let xv = V::splat(*xp.add((i + h) * sx * c));
                let d = dp.add((i + h) * oc);
                for (l, a) in ah.iter_mut().enumerate() {
                    *a = a.mul_add(xv, V::load(d.add(l * V::LANES)));
                }
            }
            let out = &mut dw[..w];
            for l in 0..L {
                let o = out.as_mut_ptr().add(l * V::LANES);
                let mut sum = acc[0][l];
                for ah in &acc[1..] {
                    sum = sum.add(ah[l]);
                }
                V::load(o).add(sum).store(o);
            }
        }
    }

    /// Accumulates the filter gradient of output rows `rows` (row = (image, oy)) into `dw`;
    /// `taps` handles one (kx, ci, ob) and returns the width of channels it did.
    #[inline(always)]
    fn each_tap(
        g: &ConvGeom,
        x: &[f32],
        dy: &[f32],
        rows: Range<usize>,
        dw: &mut [f32],
        mut taps: impl FnMut(&[f32], &[f32], (usize, usize, usize), &mut [f32]) -> usize,
    ) {
        let (c, oc, kw, w) = (g.c, g.oc, g.x.size, g.x.input);
        let row_len = g.x.output * oc;
        for r in rows {
            let (b, oy) = (r / g.y.output, r % g.y.output);
            let dyrow = &dy[r * row_len..(r + 1) * row_len];
            for ky in 0..g.y.size {
                let iy = (oy * g.y.stride + ky) as isize - g.y.pad as isize;
                if iy < 0 || iy >= g.y.input as isize {
                    continue;
                }
                let xs = (b * g.y.input + iy as usize) * w * c;
                let xrow = &x[xs..xs + w * c];
                for kx in 0..kw {
                    for ci in 0..c {
                        let t = (ky * kw + kx) * c + ci;
                        let mut ob = 0;
                        while ob < oc {
                            ob += taps(xrow, dyrow, (kx, ci, ob), &mut dw[t * oc + ob..]);
                        }
                    }
                }
            }
        }
    }

    /// The AVX2 form of [`each_tap`].
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn rows(g: &ConvGeom, x: &[f32], dy: &[f32], rows: Range<usize>, dw: &mut [f32]) {
        let oc = g.oc;
        each_tap(g, x, dy, rows, dw, |xrow, dyrow, t, d| {
            let left = oc - t.2;
            // SAFETY: this function runs with AVX2 and FMA.
            unsafe {
                if left >= 32 {
                    tap::<Y, 4, 2>(g, xrow, dyrow, t, d);
                    32
                } else if left >= 16 {
                    tap::<Y, 2, 2>(g, xrow, dyrow, t, d);
                    16
                } else {
                    tap::<Y, 1, 2>(g, xrow, dyrow, t, d);
                    8
                }
            }
        })
    }

    /// The AVX-512 form of [`each_tap`] (AVX2 for a block of 8 channels).
    ///
    /// # Safety
    /// The CPU must support AVX-512 F/BW/VL, AVX2 and FMA.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,fma")]
    pub(super) unsafe fn rows512(g: &ConvGeom, x: &[f32], dy: &[f32], rows: Range<usize>, dw: &mut [f32]) {
        let oc = g.oc;
        each_tap(g, x, dy, rows, dw, |xrow, dyrow, t, d| {
            let left = oc - t.2;
            // SAFETY: this function runs with AVX-512, AVX2 and FMA.
            unsafe {
                if left >= 32 {
                    tap::<Z, 2, 4>(g, xrow, dyrow, t, d);
                    32
                } else if left >= 16 {
                    tap::<Z, 1, 4>(g, xrow, dyrow, t, d);
                    16
                } else {
                    tap::<Y, 1, 2>(g, xrow, dyrow, t, d);
                    8
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nn::common::{Padding, Window};

    #[test]
    fn matches_the_definition() {
        for (h, c, k, oc, s, p) in [
            (28, 1, 5, 32, 1, Padding::Same),
            (9, 3, 3, 24, 2, Padding::Same),
            (8, 2, 3, 8, 1, Padding::Valid),
            (7, 4, 2, 56, 3, Padding::Valid),
            (6, 1, 5, 16, 2, Padding::Same),
        ] {
            let g =
                ConvGeom { n: 3, c, oc, y: Window::new(h, k, s, p).unwrap(), x: Window::new(h + 1, k, s, p).unwrap() };
            let x: Vec<f32> = (0..g.n * g.image_len()).map(|i| ((i * 7) % 13) as f32 - 6.0).collect();
            let dy: Vec<f32> = (0..g.rows() * oc).map(|i| ((i * 5) % 11) as f32 - 5.0).collect();
            let Some(got) = backprop_filter_direct_f32(&g, &x, &dy) else { return };
            let mut want = vec![0.0f32; g.k() * oc];
            for r in 0..g.rows() {
                let per = g.rows_per_image();
                let (b, oy, ox) = (r / per, (r % per) / g.x.output, r % g.x.output);
                for ky in 0..k {
                    for kx in 0..k {
                        let iy = (oy * s + ky) as isize - g.y.pad as isize;
                        let ix = (ox * s + kx) as isize - g.x.pad as isize;
                        if iy < 0 || ix < 0 || iy >= g.y.input as isize || ix >= g.x.input as isize {
                            continue;
                        }
                        for ci in 0..c {
                            let xv = x[((b * g.y.input + iy as usize) * g.x.input + ix as usize) * c + ci];
                            for o in 0..oc {
                                want[((ky * k + kx) * c + ci) * oc + o] += xv * dy[r * oc + o];
                            }
                        }
                    }
                }
            }
            assert_eq!(got, want, "{:?}", (h, c, k, oc, s, p));
        }
    }
}
