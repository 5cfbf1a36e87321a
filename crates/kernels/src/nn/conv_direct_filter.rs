//! Direct filter gradient for inputs with few channels (the companion of `conv_direct`):
//! `dw[tap, :] = Σ_pixels x[pixel + tap] · dy[pixel, :]`, with no patch matrix. f32 on x86-64
//! on an ISA path with AVX2 and FMA ([`crate::isa::current`]) only; other cases use im2col +
//! gemm.
//!
//! Each part of the batch first copies its images into a zero-padded plane
//! (`conv_padded.rs`). Then, per output row, a block of [`TAPS`] taps keeps
//! `TAPS × L` vector accumulators in registers while it walks the row's pixels: one pixel's
//! output-gradient vectors are loaded once and multiplied by the five broadcast inputs of the
//! block's taps. Each row's sums are added to the part's `dw`, the parts' `dw`s in a fixed order.

use rayon::prelude::*;

use super::conv_direct::direct_applies;
use super::gemm::PAR_GEMM_MIN;
use super::im2col::ConvGeom;

/// Taps per register block.
const TAPS: usize = 5;

/// `dw[K × oc]`, or `None` when the direct kernel does not apply on this CPU or geometry.
pub fn backprop_filter_direct_f32(g: &ConvGeom, x: &[f32], dy: &[f32]) -> Option<Vec<f32>> {
    #[cfg(target_arch = "x86_64")]
    if direct_applies(g) && crate::isa::current().has_avx2_fma() {
        let rows = g.n * g.y.output;
        let threads = rayon::current_num_threads();
        let parts = if threads > 1 && g.rows() * g.k() * g.oc >= PAR_GEMM_MIN { threads.min(rows) } else { 1 };
        let per = rows.div_ceil(parts);
        let part = |p: usize| {
            let range = p * per..((p + 1) * per).min(rows);
            let plane =
                super::conv_padded::Padded::new(g, x, range.start / g.y.output..(range.end - 1) / g.y.output + 1);
            let mut dw = vec![0.0f32; g.k() * g.oc];
            if crate::isa::current() == crate::isa::Isa::Avx512 {
                // SAFETY: the CPU supports AVX-512 (the ISA path was detected with it).
                unsafe { avx::rows512(g, &plane, dy, range, &mut dw) };
            } else {
                // SAFETY: the CPU supports AVX2 and FMA (the ISA path was detected with them).
                unsafe { avx::rows(g, &plane, dy, range, &mut dw) };
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

    use super::super::conv_padded::Padded;
    use super::super::simd::{isa_entry_points, F32Vec, Y, Z};
    use super::{ConvGeom, TAPS};

    /// Adds the filter gradient of output rows `rows` (row = (image, oy)) for output channels
    /// `ob..ob + V::LANES·L` to `dw`.
    ///
    /// # Safety
    /// The CPU must support `V`'s instructions; only called from the entry points below.
    #[inline(always)]
    unsafe fn channels<V: F32Vec, const L: usize>(
        g: &ConvGeom,
        p: &Padded,
        dy: &[f32],
        rows: Range<usize>,
        ob: usize,
        dw: &mut [f32],
    ) {
        let (oc, ow, oh) = (g.oc, g.x.output, g.y.output);
        let (step, k) = (g.x.stride * g.c, g.k());
        assert!(dy.len() >= rows.end * ow * oc && ob + V::LANES * L <= oc && dw.len() == k * oc);
        for r in rows {
            let xrow = p.row(g, r / oh, r % oh);
            let dyrow = &dy[r * ow * oc + ob..(r + 1) * ow * oc];
            for (tb, block) in p.offsets.chunks(TAPS).enumerate() {
                // A short last block repeats tap offset 0; its sums are not stored.
                let mut offs = [0; TAPS];
                offs[..block.len()].copy_from_slice(block);
                // SAFETY: the CPU has `V`'s instructions (the caller's contract). Reads are
                // in bounds: the padded image holds the last tap of the row's last pixel,
                // ((oy·s + kh-1)·wp + (ow-1)·s + kw-1)·c + c-1 < hp·wp·c, and the dy row
                // holds ow pixels of oc channels from ob, with ob + LANES·L <= oc.
                unsafe {
                    let mut acc = [[V::zero(); L]; TAPS];
                    let (xp, dp) = (xrow.as_ptr(), dyrow.as_ptr());
                    for ox in 0..ow {
                        let d: [V; L] = std::array::from_fn(|l| V::load(dp.add(ox * oc + l * V::LANES)));
                        let xo = xp.add(ox * step);
                        for (a, &o) in acc.iter_mut().zip(&offs) {
                            let xv = V::splat(*xo.add(o));
                            for (al, &dl) in a.iter_mut().zip(&d) {
                                *al = al.mul_add(xv, dl);
                            }
                        }
                    }
                    for (t, a) in acc.iter().enumerate() {
                        let tap = tb * TAPS + t;
                        if tap >= k {
                            break;
                        }
                        for (l, al) in a.iter().enumerate() {
                            let o = dw.as_mut_ptr().add(tap * oc + ob + l * V::LANES);
                            V::load(o).add(*al).store(o);
                        }
                    }
                }
            }
        }
    }

    /// Blocks of two `V` vectors of output channels, then (when `V` is wider than AVX2) one,
    /// then the last 8 with one AVX2 vector.
    ///
    /// # Safety
    /// The CPU must support `V`'s instructions and AVX2 with FMA.
    #[inline(always)]
    unsafe fn rows_with<V: F32Vec>(g: &ConvGeom, p: &Padded, dy: &[f32], rows: Range<usize>, dw: &mut [f32]) {
        let mut ob = 0;
        // SAFETY: the caller's contract.
        unsafe {
            while ob + 2 * V::LANES <= g.oc {
                channels::<V, 2>(g, p, dy, rows.clone(), ob, dw);
                ob += 2 * V::LANES;
            }
            if V::LANES > Y::LANES && ob + V::LANES <= g.oc {
                channels::<V, 1>(g, p, dy, rows.clone(), ob, dw);
                ob += V::LANES;
            }
            if ob < g.oc {
                channels::<Y, 1>(g, p, dy, rows, ob, dw);
            }
        }
    }

    isa_entry_points! {
        [](g: &ConvGeom, p: &Padded, dy: &[f32], rows: Range<usize>, dw: &mut [f32]);
        /// The AVX2 form: blocks of 16 output channels, then 8.
        ///
        /// # Safety
        /// The CPU must support AVX2 and FMA.
        pub(super) fn rows {
            // SAFETY: this function runs with AVX2 and FMA.
            unsafe { rows_with::<Y>(g, p, dy, rows, dw) }
        }
        /// The AVX-512 form: blocks of 32 output channels, then 16, then 8 (AVX2).
        ///
        /// # Safety
        /// The CPU must support AVX-512 F/BW/VL, AVX2 and FMA.
        pub(super) fn rows512 {
            // SAFETY: this function runs with AVX-512, AVX2 and FMA.
            unsafe { rows_with::<Z>(g, p, dy, rows, dw) }
        }
    }
}
