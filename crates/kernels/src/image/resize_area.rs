//! `ResizeArea`: each output pixel is the area-weighted mean of the input pixels its
//! footprint covers (legacy coordinates; `align_corners` only changes the scale).

use ferroflow_core::proto::NodeDef;
use ferroflow_core::Status;

use super::common::{dtype_attr, for_rows, is_real, resize_images, resize_to_float};
use crate::array::util::scratch_vec;
use crate::OpKernel;

/// One output coordinate's footprint: input cells `start..end` (clamped when read), the
/// coverage of the first and last cell (the others count 1).
#[derive(Clone, Copy, Debug)]
struct Span {
    start: i64,
    end: i64,
    first: f32,
    last: f32,
}

/// Coverage of cell `v` by `[a, b)` (cells of a footprint of size `scale`).
fn coverage(v: i64, a: f32, b: f32, scale: f32) -> f32 {
    let vf = v as f32;
    if vf < a {
        if vf + 1.0 > b {
            scale
        } else {
            vf + 1.0 - a
        }
    } else if vf + 1.0 > b {
        b - vf
    } else {
        1.0
    }
}

fn spans(out: usize, scale: f32) -> Result<Vec<Span>, Status> {
    let mut v = scratch_vec(out, "area spans")?;
    v.extend((0..out).map(|i| {
        let a = i as f32 * scale;
        let b = (i + 1) as f32 * scale;
        let start = a.floor() as i64;
        let end = (b.ceil() as i64).max(start + 1);
        Span { start, end, first: coverage(start, a, b, scale), last: coverage(end - 1, a, b, scale) }
    }));
    Ok(v)
}

op_kernel! {
    struct ResizeArea { align_corners: bool }
    fn compute(&self, ctx) {
        let (img, d) = resize_images(ctx)?;
        let [_, ih, iw, c] = d;
        resize_to_float(ctx, &img, d, self.align_corners, |x, (oh, ow), (hs, ws), out| {
            let norm = (1.0f64 / f64::from(hs * ws)) as f32;
            let (ys, xs) = (spans(oh, hs)?, spans(ow, ws)?);
            let bound = |v: i64, limit: usize| v.clamp(0, limit as i64 - 1) as usize;
            let row_len = iw * c;
            for_rows(out, ow * c, |r, row| {
                let (b, y) = (r / oh, r % oh);
                let sy = ys[y];
                let (a, bb) = (y as f32 * hs, (y + 1) as f32 * hs);
                row.iter_mut().for_each(|v| *v = 0.0);
                for i in sy.start..sy.end {
                    let wy = coverage(i, a, bb, hs);
                    let src = &x[(b * ih + bound(i, ih)) * row_len..][..row_len];
                    for (o, sx) in row.chunks_exact_mut(c).zip(&xs) {
                        let first = &src[bound(sx.start, iw) * c..][..c];
                        for k in 0..c {
                            let mut sum = first[k] * sx.first;
                            if sx.start + 1 != sx.end {
                                for xi in sx.start + 1..sx.end - 1 {
                                    sum += src[bound(xi, iw) * c + k];
                                }
                                sum += src[bound(sx.end - 1, iw) * c + k] * sx.last;
                            }
                            o[k] += sum * wy;
                        }
                    }
                }
                row.iter_mut().for_each(|v| *v *= norm);
            });
            Ok(())
        })
    }
}

pub(crate) fn area_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    use ferroflow_core::NodeAttrs;
    dtype_attr(node, "T", is_real)?;
    Ok(Box::new(ResizeArea { align_corners: node.attr_bool("align_corners")? }))
}
