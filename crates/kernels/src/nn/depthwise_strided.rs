//! `DepthwiseConv2dNativeBackpropInput` at strides above 1 (float32, channel multiplier 1,
//! AVX2 or AVX-512): the stride-1 input gradient is a forward convolution
//! (`depthwise_simd.rs`), a strided one is not, so each input pixel gathers the output
//! gradients whose windows cover it (`taps`: at stride 2 a 3×3 window reaches an input pixel
//! from one or two output rows and columns). A block of up to four vectors of channels stays
//! in registers over the pixel's taps; channels past the last whole vector are summed one by
//! one. MobileNetV2's stride-2 layers took the portable kernel before (the 81×81×96 layer at
//! batch 16: 52 ms in a traced training step against TensorFlow's 5.5).

use super::depthwise::DwGeom;

/// The input gradient of `g` into `dx` ([n, rows, cols, c]) when this path applies (returns
/// false otherwise and leaves `dx` alone).
pub(crate) fn backprop_input(g: &DwGeom, f: &[f32], dy: &[f32], dx: &mut [f32]) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        let isa = crate::isa::current();
        let (c, w) = (g.c, g.x.input);
        let dx_len = g.n * g.y.input * w * c;
        let sizes_fit =
            dy.len() >= g.n * g.y.output * g.x.output * c && f.len() >= g.y.size * g.x.size * c && dx.len() >= dx_len;
        if g.m == 1 && c >= 8 && isa.has_avx2_fma() && sizes_fit {
            if dx_len == 0 {
                return true;
            }
            let row_len = w * c;
            let work = row_len * g.y.size.div_ceil(g.y.stride) * g.x.size.div_ceil(g.x.stride);
            let avx512 = isa == crate::isa::Isa::Avx512;
            g.for_each_row(&mut dx[..dx_len], (g.n * g.y.input, row_len), work, |r, drow| {
                // SAFETY: the CPU has the path's instructions (checked above); the slices
                // hold the geometry's sizes (checked above).
                unsafe {
                    if avx512 {
                        avx::row512(g, f, dy, r, drow)
                    } else {
                        avx::row(g, f, dy, r, drow)
                    }
                }
            });
            return true;
        }
    }
    let _ = (g, f, dy, dx);
    false
}

#[cfg(target_arch = "x86_64")]
mod avx {
    use super::super::depthwise::DwGeom;
    use super::super::depthwise_backprop::taps;
    use super::super::simd::{isa_entry_points, F32Vec, Y, Z};

    /// The taps of one input pixel: `(k, o)` pairs of its rows and of its columns.
    struct Taps<'a> {
        rows: &'a [(usize, usize)],
        cols: &'a [(usize, usize)],
    }

    /// Channels `c0..c0 + V::LANES·L` of one input pixel (batch `b`) into `out`.
    ///
    /// # Safety
    /// The CPU must support `V`'s instructions; the block lies inside `g.c`; every tap is
    /// inside the filter and the output gradient; `out` holds the pixel's `g.c` channels.
    #[inline(always)]
    unsafe fn block<V: F32Vec, const L: usize>(
        g: &DwGeom,
        f: &[f32],
        dy: &[f32],
        b: usize,
        t: &Taps,
        c0: usize,
        out: *mut f32,
    ) {
        let (c, oh, ow, kw) = (g.c, g.y.output, g.x.output, g.x.size);
        // SAFETY: the caller upholds the contract; every index below is inside its slice.
        unsafe {
            let mut acc = [V::zero(); L];
            for &(ky, oy) in t.rows {
                let drow = dy.as_ptr().add((b * oh + oy) * ow * c + c0);
                let frow = f.as_ptr().add(ky * kw * c + c0);
                for &(kx, ox) in t.cols {
                    let (dp, fp) = (drow.add(ox * c), frow.add(kx * c));
                    for (l, a) in acc.iter_mut().enumerate() {
                        *a = a.mul_add(V::load(dp.add(l * V::LANES)), V::load(fp.add(l * V::LANES)));
                    }
                }
            }
            for (l, a) in acc.iter().enumerate() {
                a.store(out.add(c0 + l * V::LANES));
            }
        }
    }

    /// Input row `r` (batch-major) of the gradient into `drow`.
    ///
    /// # Safety
    /// As [`block`]; `drow` is the row's `g.x.input · g.c` elements.
    #[inline(always)]
    unsafe fn row_with<V: F32Vec>(g: &DwGeom, f: &[f32], dy: &[f32], r: usize, drow: &mut [f32]) {
        let (c, kw, ow) = (g.c, g.x.size, g.x.output);
        let (b, iy) = (r / g.y.input, r % g.y.input);
        let rows: Vec<(usize, usize)> = taps(iy, &g.y).collect();
        let mut cols = Vec::with_capacity(kw);
        for (ix, px) in drow.chunks_exact_mut(c).enumerate() {
            cols.clear();
            cols.extend(taps(ix, &g.x));
            let t = Taps { rows: &rows, cols: &cols };
            let out = px.as_mut_ptr();
            let mut c0 = 0;
            // SAFETY: the caller upholds the contract; blocks stay inside `c`.
            unsafe {
                while c0 + 4 * V::LANES <= c {
                    block::<V, 4>(g, f, dy, b, &t, c0, out);
                    c0 += 4 * V::LANES;
                }
                while c0 + V::LANES <= c {
                    block::<V, 1>(g, f, dy, b, &t, c0, out);
                    c0 += V::LANES;
                }
            }
            for (ch, o) in px.iter_mut().enumerate().skip(c0) {
                let mut acc = 0.0f32;
                for &(ky, oy) in t.rows {
                    for &(kx, ox) in t.cols {
                        acc += dy[((b * g.y.output + oy) * ow + ox) * c + ch] * f[(ky * kw + kx) * c + ch];
                    }
                }
                *o = acc;
            }
        }
    }

    isa_entry_points! {
        [](g: &DwGeom, f: &[f32], dy: &[f32], r: usize, drow: &mut [f32]);
        /// [`row_with`] with AVX2 vectors.
        ///
        /// # Safety
        /// The CPU must support AVX2 and FMA; as [`row_with`].
        pub(super) fn row {
            // SAFETY: this function runs with AVX2 and FMA.
            unsafe { row_with::<Y>(g, f, dy, r, drow) }
        }
        /// [`row_with`] with AVX-512 vectors.
        ///
        /// # Safety
        /// The CPU must support AVX-512F, AVX2 and FMA; as [`row_with`].
        pub(super) fn row512 {
            // SAFETY: this function runs with AVX-512, AVX2 and FMA.
            unsafe { row_with::<Z>(g, f, dy, r, drow) }
        }
    }
}
