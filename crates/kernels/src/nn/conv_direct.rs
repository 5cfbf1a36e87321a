//! Direct convolution for inputs with few channels (first layers, e.g. MNIST's 1-channel
//! images): each output pixel accumulates its output channels in registers over the window,
//! with no patch matrix. With K = kh·kw·c that small a gemm is mostly overhead.
//!
//! On x86-64 when the process's path ([`crate::isa::current`]) has AVX2 and FMA the kernel
//! is compiled with those features (and with 16-lane vectors on the AVX-512 path) so the
//! multiply-adds fuse (results then differ from the unfused portable ones in the last bits,
//! like TensorFlow's own FMA kernels; the AVX2 and AVX-512 paths sum in the same order).

use super::im2col::ConvGeom;
use super::pool::par_units;
use crate::real::Real;

/// Inputs with at most this many channels use the direct kernel.
pub(crate) const DIRECT_MAX_CHANNELS: usize = 4;

/// Whether the direct kernel handles this geometry.
pub fn direct_applies(g: &ConvGeom) -> bool {
    g.c <= DIRECT_MAX_CHANNELS && g.oc & 7 == 0 && g.oc > 0 && g.rows() > 0
}

/// Output channels `ob..ob + B` of output pixel (b, oy, ox); `wb` is the filter's block of
/// B output channels packed as `[K][B]`.
#[inline(always)]
fn pixel<T: Real, const B: usize, const FMA: bool>(
    g: &ConvGeom,
    x: &[T],
    wb: &[T],
    (b, oy, ox): (usize, usize, usize),
    out: &mut [T],
) {
    let (c, kw) = (g.c, g.x.size);
    let mut acc = [T::ZERO; B];
    let (y0, y1) = g.y.range(oy);
    let (x0, x1) = g.x.range(ox);
    let ky0 = y0 + g.y.pad - oy * g.y.stride;
    let kx0 = x0 + g.x.pad - ox * g.x.stride;
    let run = (x1 - x0) * c;
    for (ky, iy) in (ky0..).zip(y0..y1) {
        // The window row is contiguous in the input and in the packed filter.
        let xs = ((b * g.y.input + iy) * g.x.input + x0) * c;
        let ws = (ky * kw + kx0) * c * B;
        for (&xv, wr) in x[xs..xs + run].iter().zip(wb[ws..ws + run * B].chunks_exact(B)) {
            for (a, &wv) in acc.iter_mut().zip(wr) {
                *a = if FMA { xv.mul_add(wv, *a) } else { xv * wv + *a };
            }
        }
    }
    out[..B].copy_from_slice(&acc);
}

/// The filter `[K][oc]` split into output-channel blocks of 32, 16 and 8, each packed as
/// `[K][width]`: (first channel, width, packed weights).
fn pack_blocks<T: Real>(w: &[T], k: usize, oc: usize) -> Vec<(usize, usize, Vec<T>)> {
    let mut blocks = Vec::new();
    let mut ob = 0;
    for width in [32, 16, 8] {
        while ob + width <= oc {
            let mut p = Vec::with_capacity(k * width);
            for r in 0..k {
                p.extend_from_slice(&w[r * oc + ob..r * oc + ob + width]);
            }
            blocks.push((ob, width, p));
            ob += width;
        }
    }
    blocks
}

/// One output row (b, oy): every pixel, every channel block.
#[inline(always)]
fn row<T: Real, const FMA: bool>(g: &ConvGeom, x: &[T], blocks: &[(usize, usize, Vec<T>)], r: usize, orow: &mut [T]) {
    let (b, oy) = (r / g.y.output, r % g.y.output);
    for (ox, o) in orow.chunks_exact_mut(g.oc).enumerate() {
        for (ob, width, wb) in blocks {
            let (p, o) = ((b, oy, ox), &mut o[*ob..]);
            match width {
                32 => pixel::<T, 32, FMA>(g, x, wb, p, o),
                16 => pixel::<T, 16, FMA>(g, x, wb, p, o),
                _ => pixel::<T, 8, FMA>(g, x, wb, p, o),
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn row_fma<T: Real>(g: &ConvGeom, x: &[T], blocks: &[(usize, usize, Vec<T>)], r: usize, orow: &mut [T]) {
    row::<T, true>(g, x, blocks, r, orow)
}

/// Element types with a direct convolution; `f32` has hand-vectorized AVX2 and AVX-512
/// kernels.
pub trait DirectScalar: Real {
    /// `out[rows × oc]` = conv(x, w) computed directly; requires [`direct_applies`].
    fn conv2d_direct(g: &ConvGeom, x: &[Self], w: &[Self], out: &mut [Self]) {
        direct_generic(g, x, w, out)
    }

    /// The input gradient by Winograd's minimal filtering (`winograd.rs`) when it applies
    /// (float32 only); false otherwise.
    fn backprop_input_winograd(_g: &ConvGeom, _filter: &[Self], _dy: &[Self], _dx: &mut [Self]) -> bool {
        false
    }

    /// The filter gradient computed directly, when a direct kernel applies.
    fn backprop_filter_direct(_g: &ConvGeom, _x: &[Self], _dy: &[Self]) -> Option<Vec<Self>> {
        None
    }
}

impl DirectScalar for f64 {}

impl DirectScalar for f32 {
    fn conv2d_direct(g: &ConvGeom, x: &[f32], w: &[f32], out: &mut [f32]) {
        #[cfg(target_arch = "x86_64")]
        if crate::isa::current() == crate::isa::Isa::Avx512 {
            let (blocks, x) = (pack_blocks(w, g.k(), g.oc), super::conv_padded::Padded::new(g, x, 0..g.n));
            let rows = avx::Rows { g, x: &x, blocks: &blocks };
            // SAFETY: the CPU supports AVX-512 (the ISA path was detected with it).
            par_units(out, g.x.output * g.oc, work(g), |r, orow| unsafe { avx::row512(&rows, r, orow) });
            return;
        }
        #[cfg(target_arch = "x86_64")]
        if crate::isa::current().has_avx2_fma() {
            let (blocks, x) = (pack_blocks(w, g.k(), g.oc), super::conv_padded::Padded::new(g, x, 0..g.n));
            let rows = avx::Rows { g, x: &x, blocks: &blocks };
            // SAFETY: the CPU supports AVX2 and FMA (the ISA path was detected with them).
            par_units(out, g.x.output * g.oc, work(g), |r, orow| unsafe { avx::row(&rows, r, orow) });
            return;
        }
        direct_generic(g, x, w, out)
    }

    fn backprop_input_winograd(g: &ConvGeom, filter: &[f32], dy: &[f32], dx: &mut [f32]) -> bool {
        super::winograd::backprop_input(g, filter, dy, dx)
    }

    fn backprop_filter_direct(g: &ConvGeom, x: &[f32], dy: &[f32]) -> Option<Vec<f32>> {
        super::winograd_filter::backprop_filter(g, x, dy)
            .or_else(|| super::conv_direct_filter::backprop_filter_direct_f32(g, x, dy))
    }
}

fn work(g: &ConvGeom) -> usize {
    g.rows() * g.k() * g.oc / 4
}

fn direct_generic<T: Real>(g: &ConvGeom, x: &[T], w: &[T], out: &mut [T]) {
    let row_len = g.x.output * g.oc;
    let blocks = pack_blocks(w, g.k(), g.oc);
    #[cfg(target_arch = "x86_64")]
    if crate::isa::current().has_avx2_fma() {
        // SAFETY: the CPU supports AVX2 and FMA (the ISA path was detected with them).
        par_units(out, row_len, work(g), |r, orow| unsafe { row_fma(g, x, &blocks, r, orow) });
        return;
    }
    par_units(out, row_len, work(g), |r, orow| row::<T, false>(g, x, &blocks, r, orow));
}

#[cfg(target_arch = "x86_64")]
mod avx {
    use super::super::conv_padded::Padded;
    use super::super::simd::{isa_entry_points, F32Vec, Y, Z};
    use super::ConvGeom;

    /// A padded input row ([`Padded::row`]) and the filter taps' offsets in it.
    type Input<'a> = (&'a [f32], &'a [usize]);
    /// An output row and the first channel of the block written.
    type Output<'a> = (&'a mut [f32], usize);

    /// `P` adjacent output pixels (ox..ox + P) of one output row, one block of `V::LANES·L`
    /// output channels from `ob`: `P·L` independent accumulators hide the FMA latency.
    ///
    /// # Safety
    /// The CPU must support `V`'s instructions; `ox + P <= ow`; `xrow` is the padded row of
    /// [`Padded::row`] and `wb` holds `offsets.len()` taps of `V::LANES·L` weights.
    #[inline(always)]
    unsafe fn pixels<V: F32Vec, const L: usize, const P: usize>(
        g: &ConvGeom,
        (xrow, offsets): Input,
        wb: &[f32],
        ox: usize,
        (orow, ob): Output,
    ) {
        // SAFETY: the caller upholds this function's `# Safety` contract; the padded row holds
        // every tap of every pixel of the row (`conv_padded.rs`).
        unsafe {
            let (oc, w, step) = (g.oc, V::LANES * L, g.x.stride * g.c);
            let mut acc = [[V::zero(); L]; P];
            let xp = xrow.as_ptr().add(ox * step);
            for (t, &o) in offsets.iter().enumerate() {
                let wp = wb.as_ptr().add(t * w);
                let wv: [V; L] = std::array::from_fn(|l| V::load(wp.add(l * V::LANES)));
                for (p, ap) in acc.iter_mut().enumerate() {
                    let xv = V::splat(*xp.add(p * step + o));
                    for (a, &wl) in ap.iter_mut().zip(&wv) {
                        *a = a.mul_add(xv, wl);
                    }
                }
            }
            for (p, ap) in acc.iter().enumerate() {
                let o = &mut orow[(ox + p) * oc + ob..(ox + p) * oc + ob + w];
                for (l, a) in ap.iter().enumerate() {
                    a.store(o.as_mut_ptr().add(l * V::LANES));
                }
            }
        }
    }

    /// One block of `V::LANES·L` output channels of an output row, `P` pixels at a time (the
    /// last group overlaps the one before and writes the same values again).
    ///
    /// # Safety
    /// The CPU must support `V`'s instructions; only called from the entry points below.
    #[inline(always)]
    unsafe fn block<V: F32Vec, const L: usize, const P: usize>(g: &ConvGeom, x: Input, wb: &[f32], out: Output) {
        let ow = g.x.output;
        assert!(wb.len() >= x.1.len() * V::LANES * L && out.0.len() >= ow * g.oc && out.1 + V::LANES * L <= g.oc);
        // SAFETY: the CPU has `V`'s instructions (the caller's contract); every group ends at
        // or before ow, and the slices were checked above.
        unsafe {
            if ow < P {
                for ox in 0..ow {
                    pixels::<V, L, 1>(g, x, wb, ox, (&mut *out.0, out.1));
                }
                return;
            }
            let mut ox = 0;
            while ox < ow {
                pixels::<V, L, P>(g, x, wb, ox.min(ow - P), (&mut *out.0, out.1));
                ox += P;
            }
        }
    }

    /// What every output row of one direct convolution reads: the geometry, the padded input
    /// and the filter's channel blocks (`pack_blocks`).
    pub(super) struct Rows<'a> {
        pub g: &'a ConvGeom,
        pub x: &'a Padded,
        pub blocks: &'a [(usize, usize, Vec<f32>)],
    }

    /// Output row `r` (image, oy): every channel block through `block(width, ...)`, the ISA
    /// path's kernel for that width.
    #[inline(always)]
    fn each_block(w: &Rows, r: usize, orow: &mut [f32], mut block: impl FnMut(usize, Input, &[f32], Output)) {
        let xr = (w.x.row(w.g, r / w.g.y.output, r % w.g.y.output), w.x.offsets.as_slice());
        for (ob, width, wb) in w.blocks {
            block(*width, xr, wb, (&mut *orow, *ob));
        }
    }

    /// Output row `r` with `V` vectors: blocks of 32 channels as `L32` vectors by `P32`
    /// pixels, of 16 as `L16` by `P16`, and of 8 with one AVX2 vector by 8 pixels.
    ///
    /// # Safety
    /// The CPU must support `V`'s instructions and AVX2 with FMA.
    #[inline(always)]
    unsafe fn row_with<V: F32Vec, const L32: usize, const P32: usize, const L16: usize, const P16: usize>(
        w: &Rows,
        r: usize,
        orow: &mut [f32],
    ) {
        // SAFETY: the caller's contract, and the blocks are inlined into its entry point.
        each_block(w, r, orow, |width, xr, wb, out| unsafe {
            match width {
                32 => block::<V, L32, P32>(w.g, xr, wb, out),
                16 => block::<V, L16, P16>(w.g, xr, wb, out),
                _ => block::<Y, 1, 8>(w.g, xr, wb, out),
            }
        })
    }

    isa_entry_points! {
        [](w: &Rows, r: usize, orow: &mut [f32]);
        /// One output row with AVX2 vectors.
        ///
        /// # Safety
        /// The CPU must support AVX2 and FMA.
        pub(super) fn row {
            // SAFETY: this function runs with AVX2 and FMA.
            unsafe { row_with::<Y, 4, 2, 2, 4>(w, r, orow) }
        }
        /// One output row with AVX-512 vectors (AVX2 for a block of 8 channels).
        ///
        /// # Safety
        /// The CPU must support AVX-512 F/BW/VL, AVX2 and FMA.
        pub(super) fn row512 {
            // SAFETY: this function runs with AVX-512, AVX2 and FMA.
            unsafe { row_with::<Z, 2, 6, 1, 8>(w, r, orow) }
        }
    }
}
