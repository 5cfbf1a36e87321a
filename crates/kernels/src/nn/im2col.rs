//! Convolution geometry and the patch matrix ("im2col") of an NHWC input, built a block of
//! output rows at a time so it stays in cache, plus its adjoint ("col2im", scatter-add).
//!
//! Output row `r` of a convolution is the output pixel `(b, oy, ox)` in row-major order;
//! its patch row holds `K = kh·kw·c` values ordered `(ky, kx, ci)` — the same order as the
//! rows of an HWIO filter viewed as a `[K, out_depth]` matrix, so `out = patches · filter`.

use super::common::Window;

/// Shapes of one NHWC convolution (filter HWIO).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConvGeom {
    /// Batch.
    pub n: usize,
    /// Input depth.
    pub c: usize,
    /// Output depth.
    pub oc: usize,
    /// Vertical window (input rows, filter rows, stride, output rows, padding).
    pub y: Window,
    /// Horizontal window.
    pub x: Window,
}

impl ConvGeom {
    /// Number of output pixels (rows of the patch matrix).
    pub fn rows(&self) -> usize {
        self.n * self.y.output * self.x.output
    }

    /// Output pixels per image.
    pub fn rows_per_image(&self) -> usize {
        self.y.output * self.x.output
    }

    /// Patch length `kh·kw·c`.
    pub fn k(&self) -> usize {
        self.y.size * self.x.size * self.c
    }

    /// Elements of one input image.
    pub fn image_len(&self) -> usize {
        self.y.input * self.x.input * self.c
    }

    /// Whether the patch matrix is the input itself (1×1 filter, stride 1, no padding).
    pub fn is_pointwise(&self) -> bool {
        self.y.size == 1 && self.x.size == 1 && self.y.stride == 1 && self.x.stride == 1
    }

    /// Rows per block so one block of patches is about `bytes` large, at least 8.
    pub fn block_rows(&self, elem_bytes: usize, bytes: usize) -> usize {
        (bytes / (self.k() * elem_bytes).max(1)).max(8)
    }

    /// Decodes output row `r` into (image, oy, ox).
    #[inline(always)]
    pub fn pixel(&self, r: usize) -> (usize, usize, usize) {
        let per = self.rows_per_image();
        let (b, p) = (r / per, r % per);
        (b, p / self.x.output, p % self.x.output)
    }

    /// Whether the patch of output row `r` lies wholly inside the input (no padding).
    #[inline(always)]
    fn patch_inside(&self, r: usize) -> bool {
        let (_, oy, ox) = self.pixel(r);
        let inside = |o: usize, w: &Window| o * w.stride >= w.pad && o * w.stride - w.pad + w.size <= w.input;
        inside(oy, &self.y) && inside(ox, &self.x)
    }

    /// Calls `f(patch_offset, input_offset, len)` for each contiguous in-range run of the
    /// patch of output row `r` (input offsets relative to the whole input); the rest of the
    /// patch lies in the padding.
    #[inline(always)]
    fn runs(&self, r: usize, mut f: impl FnMut(usize, usize, usize)) {
        let (b, oy, ox) = self.pixel(r);
        let (c, kw) = (self.c, self.x.size);
        let iy0 = (oy * self.y.stride) as isize - self.y.pad as isize;
        let ix0 = (ox * self.x.stride) as isize - self.x.pad as isize;
        let kx_lo = (-ix0).max(0) as usize;
        let kx_hi = ((self.x.input as isize - ix0).max(0) as usize).min(kw);
        if kx_lo >= kx_hi {
            return;
        }
        for ky in 0..self.y.size {
            let iy = iy0 + ky as isize;
            if iy < 0 || iy >= self.y.input as isize {
                continue;
            }
            let src = ((b * self.y.input + iy as usize) * self.x.input + (ix0 + kx_lo as isize) as usize) * c;
            f((ky * kw + kx_lo) * c, src, (kx_hi - kx_lo) * c);
        }
    }
}

/// Writes the patches of output rows `start..start + count` into `buf` (`count × K`,
/// row-major; padding positions become zero). Only patches that reach into the padding are
/// zeroed first (with SAME padding, the border rows); the others are written whole.
pub fn im2col<T: Copy + Default>(g: &ConvGeom, input: &[T], start: usize, count: usize, buf: &mut [T]) {
    let k = g.k();
    for (i, row) in buf[..count * k].chunks_exact_mut(k).enumerate() {
        if !g.patch_inside(start + i) {
            row.fill(T::default());
        }
        g.runs(start + i, |dst, src, len| copy_run(&mut row[dst..dst + len], &input[src..src + len]));
    }
}

/// Copies a run; short runs (first-layer convolutions with one or three channels) are
/// copied element by element, which is much faster than a `memcpy` call.
#[inline(always)]
fn copy_run<T: Copy>(dst: &mut [T], src: &[T]) {
    if dst.len() <= 16 {
        for (d, &s) in dst.iter_mut().zip(src) {
            *d = s;
        }
    } else {
        dst.copy_from_slice(src);
    }
}

/// Adds the patch gradients of output rows `start..start + count` (`cols`, `count × K`) back
/// into the input gradient `dx`, whose first element is input element `dx_base`.
pub fn col2im_add<T: Copy + std::ops::AddAssign>(
    g: &ConvGeom,
    cols: &[T],
    start: usize,
    count: usize,
    dx: &mut [T],
    dx_base: usize,
) {
    let k = g.k();
    for (i, row) in cols[..count * k].chunks_exact(k).enumerate() {
        g.runs(start + i, |src, dst, len| {
            let d = &mut dx[dst - dx_base..dst - dx_base + len];
            for (a, &b) in d.iter_mut().zip(&row[src..src + len]) {
                *a += b;
            }
        });
    }
}
