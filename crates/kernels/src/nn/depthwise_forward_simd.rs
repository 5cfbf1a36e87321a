//! The float32 depthwise forward convolution with AVX2 or AVX-512 (`depthwise_simd.rs`
//! decides when it applies): a block of channels (`L` vectors) of `P` adjacent output pixels
//! stays in registers for the whole window. Edge pixels, whose window is clipped to the
//! input row, take the same vector blocks over their clipped taps; channels past the last
//! whole vector take a scalar path.

use super::depthwise::DwGeom;

/// One output pixel's channels `c0..c1` by scalar arithmetic (edges and channel tails).
#[allow(clippy::too_many_arguments)]
fn pixel_scalar(g: &DwGeom, x: &[f32], f: &[f32], b: usize, oy: usize, ox: usize, out: &mut [f32], c0: usize) {
    let c = g.c;
    let (y0, y1) = g.y.range(oy);
    let (x0, x1) = g.x.range(ox);
    let ky0 = y0 + g.y.pad - oy * g.y.stride;
    let kx0 = x0 + g.x.pad - ox * g.x.stride;
    for (ch, o) in (c0..).zip(out.iter_mut()) {
        let mut acc = 0.0f32;
        for (ky, iy) in (ky0..).zip(y0..y1) {
            for (kx, ix) in (kx0..).zip(x0..x1) {
                acc += x[((b * g.y.input + iy) * g.x.input + ix) * c + ch] * f[(ky * g.x.size + kx) * c + ch];
            }
        }
        *o = acc;
    }
}

pub(super) fn forward(g: &DwGeom, x: &[f32], f: &[f32], out: &mut [f32]) -> bool {
    let (oc, ow, oh) = (g.c, g.x.output, g.y.output);
    let row_len = ow * oc;
    let avx512 = crate::isa::current() == crate::isa::Isa::Avx512;
    g.for_each_row(out, (g.n * oh, row_len), row_len * g.y.size * g.x.size, |r, orow| {
        // SAFETY: `applies` checked the CPU has the path's instructions; the slices were
        // checked against the geometry by the caller.
        unsafe {
            if avx512 {
                avx::forward_row512(g, x, f, r, orow)
            } else {
                avx::forward_row(g, x, f, r, orow)
            }
        }
    });
    true
}

mod avx {
    use super::super::depthwise::DwGeom;
    use super::super::depthwise_simd::interior;
    use super::super::simd::{isa_entry_points, F32Vec, Y, Z};
    use super::pixel_scalar;

    /// Channels `c0..c0 + V::LANES·L` of the `P` output pixels `ox..ox + P` of output row
    /// `(b, oy)`, every pixel's window inside the input row.
    ///
    /// # Safety
    /// The CPU must support `V`'s instructions; the pixels are interior (`interior`), the
    /// channel block lies inside `g.c`, and `x`, `f`, `orow` have the geometry's sizes.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn fwd_px<V: F32Vec, const L: usize, const P: usize>(
        g: &DwGeom,
        x: &[f32],
        f: &[f32],
        b: usize,
        oy: usize,
        ox: usize,
        c0: usize,
        orow: &mut [f32],
    ) {
        let (c, s, kw, w) = (g.c, g.x.stride, g.x.size, g.x.input);
        let (y0, y1) = g.y.range(oy);
        let ky0 = y0 + g.y.pad - oy * g.y.stride;
        // SAFETY: the caller upholds the contract; every index below is inside its slice.
        unsafe {
            let mut acc = [[V::zero(); L]; P];
            for (ky, iy) in (ky0..).zip(y0..y1) {
                let xrow = x.as_ptr().add((b * g.y.input + iy) * w * c + c0);
                let frow = f.as_ptr().add(ky * kw * c + c0);
                for kx in 0..kw {
                    let fv: [V; L] = std::array::from_fn(|l| V::load(frow.add(kx * c + l * V::LANES)));
                    let xp = xrow.add((ox * s + kx - g.x.pad) * c);
                    for (p, ap) in acc.iter_mut().enumerate() {
                        for (l, a) in ap.iter_mut().enumerate() {
                            *a = a.mul_add(V::load(xp.add(p * s * c + l * V::LANES)), fv[l]);
                        }
                    }
                }
            }
            let op = orow.as_mut_ptr().add(ox * c + c0);
            for (p, ap) in acc.iter().enumerate() {
                for (l, a) in ap.iter().enumerate() {
                    a.store(op.add(p * c + l * V::LANES));
                }
            }
        }
    }

    /// Channels `c0..c0 + V::LANES·L` of the edge output pixel `ox` of row `(b, oy)`, whose
    /// window is clipped to the input row (padding columns contribute nothing).
    ///
    /// # Safety
    /// As [`fwd_px`], except that the pixel may be an edge pixel.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn fwd_edge_px<V: F32Vec, const L: usize>(
        g: &DwGeom,
        x: &[f32],
        f: &[f32],
        (b, oy): (usize, usize),
        ox: usize,
        c0: usize,
        orow: &mut [f32],
    ) {
        let (c, kw, w) = (g.c, g.x.size, g.x.input);
        let (y0, y1) = g.y.range(oy);
        let (x0, x1) = g.x.range(ox);
        let ky0 = y0 + g.y.pad - oy * g.y.stride;
        let kx0 = x0 + g.x.pad - ox * g.x.stride;
        // SAFETY: the caller upholds the contract; the taps stay inside the clipped window.
        unsafe {
            let mut acc = [V::zero(); L];
            for (ky, iy) in (ky0..).zip(y0..y1) {
                let xrow = x.as_ptr().add((b * g.y.input + iy) * w * c + c0);
                let frow = f.as_ptr().add(ky * kw * c + c0);
                for (kx, ix) in (kx0..).zip(x0..x1) {
                    for (l, a) in acc.iter_mut().enumerate() {
                        let fv = V::load(frow.add(kx * c + l * V::LANES));
                        *a = a.mul_add(V::load(xrow.add(ix * c + l * V::LANES)), fv);
                    }
                }
            }
            let op = orow.as_mut_ptr().add(ox * c + c0);
            for (l, a) in acc.iter().enumerate() {
                a.store(op.add(l * V::LANES));
            }
        }
    }

    /// The vector channel blocks of edge pixel `ox`; returns where the scalar tail starts.
    ///
    /// # Safety
    /// As [`fwd_edge_px`], for `V` and `W`.
    #[inline(always)]
    unsafe fn fwd_edge<V: F32Vec, W: F32Vec>(
        g: &DwGeom,
        x: &[f32],
        f: &[f32],
        bo: (usize, usize),
        ox: usize,
        orow: &mut [f32],
    ) -> usize {
        let c = g.c;
        let mut c0 = 0;
        // SAFETY: as the caller's contract; each block ends inside the channels.
        unsafe {
            while c0 + 2 * V::LANES <= c {
                fwd_edge_px::<V, 2>(g, x, f, bo, ox, c0, orow);
                c0 += 2 * V::LANES;
            }
            while c0 + V::LANES <= c {
                fwd_edge_px::<V, 1>(g, x, f, bo, ox, c0, orow);
                c0 += V::LANES;
            }
            while c0 + W::LANES <= c {
                fwd_edge_px::<W, 1>(g, x, f, bo, ox, c0, orow);
                c0 += W::LANES;
            }
        }
        c0
    }

    /// The interior pixels `lo..hi` of one row for channels `c0..c0 + V::LANES·L`.
    ///
    /// # Safety
    /// As [`fwd_px`].
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn fwd_block<V: F32Vec, const L: usize, const P: usize>(
        g: &DwGeom,
        x: &[f32],
        f: &[f32],
        (b, oy): (usize, usize),
        (lo, hi): (usize, usize),
        c0: usize,
        orow: &mut [f32],
    ) {
        // SAFETY: as the caller's contract; groups of P end at or before hi.
        unsafe {
            let mut ox = lo;
            while ox + P <= hi {
                fwd_px::<V, L, P>(g, x, f, b, oy, ox, c0, orow);
                ox += P;
            }
            while ox < hi {
                fwd_px::<V, L, 1>(g, x, f, b, oy, ox, c0, orow);
                ox += 1;
            }
        }
    }

    /// One forward output row: the vector blocks (`V` two and one vectors wide, then one
    /// `W`), the edge pixels and the channels past the last block scalar.
    ///
    /// # Safety
    /// The CPU must support `V`'s and `W`'s instructions; sizes as [`fwd_px`].
    #[inline(always)]
    unsafe fn forward_row_with<V: F32Vec, W: F32Vec, const P: usize>(
        g: &DwGeom,
        x: &[f32],
        f: &[f32],
        r: usize,
        orow: &mut [f32],
    ) {
        let (b, oy) = (r / g.y.output, r % g.y.output);
        let bo = (b, oy);
        let span = interior(&g.x);
        let c = g.c;
        let mut c0 = 0;
        // SAFETY: the caller upholds the contract; each block ends inside the channels.
        unsafe {
            while c0 + 2 * V::LANES <= c {
                fwd_block::<V, 2, P>(g, x, f, bo, span, c0, orow);
                c0 += 2 * V::LANES;
            }
            while c0 + V::LANES <= c {
                fwd_block::<V, 1, 6>(g, x, f, bo, span, c0, orow);
                c0 += V::LANES;
            }
            while c0 + W::LANES <= c {
                fwd_block::<W, 1, 6>(g, x, f, bo, span, c0, orow);
                c0 += W::LANES;
            }
        }
        for ox in (0..span.0).chain(span.1..g.x.output) {
            // SAFETY: as above; the edge pixel's window is clipped to the input row.
            let e0 = unsafe { fwd_edge::<V, W>(g, x, f, bo, ox, orow) };
            if e0 < c {
                pixel_scalar(g, x, f, b, oy, ox, &mut orow[ox * c + e0..(ox + 1) * c], e0);
            }
        }
        if c0 < c {
            for ox in span.0..span.1 {
                pixel_scalar(g, x, f, b, oy, ox, &mut orow[ox * c + c0..(ox + 1) * c], c0);
            }
        }
    }

    isa_entry_points! {
        [](g: &DwGeom, x: &[f32], f: &[f32], r: usize, orow: &mut [f32]);
        /// One forward output row with AVX2 vectors.
        ///
        /// # Safety
        /// The CPU must support AVX2 and FMA; sizes as [`fwd_px`].
        pub(super) fn forward_row {
            // SAFETY: this function runs with AVX2 and FMA.
            unsafe { forward_row_with::<Y, Y, 4>(g, x, f, r, orow) }
        }
        /// One forward output row with AVX-512 vectors (AVX2 for a last block of 8 channels).
        ///
        /// # Safety
        /// The CPU must support AVX-512 F/BW/VL, AVX2 and FMA; sizes as [`fwd_px`].
        pub(super) fn forward_row512 {
            // SAFETY: this function runs with AVX-512, AVX2 and FMA.
            unsafe { forward_row_with::<Z, Y, 6>(g, x, f, r, orow) }
        }
    }
}
