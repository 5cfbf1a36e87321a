//! A batch's images copied into a zero-padded plane, for the direct convolution kernels:
//! every tap of every output pixel is then inside the plane, so their inner loops need no
//! bounds tests and treat the border pixels like the others.

use std::ops::Range;

use super::im2col::ConvGeom;

/// Images `first..` of a convolution's input, zero-padded to `hp × wp` (channels last).
pub(crate) struct Padded {
    data: Vec<f32>,
    first: usize,
    hp: usize,
    wp: usize,
    /// `((ky·wp + kx)·c + ci)` for every tap, in the filter's `[kh][kw][c]` order.
    pub offsets: Vec<usize>,
}

impl Padded {
    /// Pads input images `images` of `x`.
    pub fn new(g: &ConvGeom, x: &[f32], images: Range<usize>) -> Padded {
        let c = g.c;
        let hp = (g.y.output - 1) * g.y.stride + g.y.size;
        let wp = (g.x.output - 1) * g.x.stride + g.x.size;
        let mut data = vec![0.0f32; images.len() * hp * wp * c];
        // Input row iy sits at plane row iy + pad. With VALID padding the last input rows and
        // columns may be read by no window; they are left out.
        let cols = g.x.input.min(wp - g.x.pad);
        for (i, b) in images.clone().enumerate() {
            for iy in 0..g.y.input.min(hp - g.y.pad) {
                let src = (b * g.y.input + iy) * g.x.input * c;
                let dst = ((i * hp + iy + g.y.pad) * wp + g.x.pad) * c;
                data[dst..dst + cols * c].copy_from_slice(&x[src..src + cols * c]);
            }
        }
        let mut offsets = Vec::with_capacity(g.k());
        for ky in 0..g.y.size {
            for kx in 0..g.x.size {
                offsets.extend((0..c).map(|ci| (ky * wp + kx) * c + ci));
            }
        }
        Padded { data, first: images.start, hp, wp, offsets }
    }

    /// The plane from the first element of output row `oy`'s windows in image `b` to the end
    /// of that image: output pixel `ox`'s tap `t` is at `ox·stride·c + offsets[t]`, inside.
    pub fn row(&self, g: &ConvGeom, b: usize, oy: usize) -> &[f32] {
        let image = self.hp * self.wp * g.c;
        let b = b - self.first;
        &self.data[b * image + oy * g.y.stride * self.wp * g.c..(b + 1) * image]
    }
}
