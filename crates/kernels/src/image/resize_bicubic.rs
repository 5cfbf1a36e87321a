//! `ResizeBicubic` and `ResizeBicubicGrad`: TensorFlow's cubic convolution with its
//! 1024-entry coefficient table (a = -0.75 for the legacy coordinates; Keys' a = -0.5 with
//! `half_pixel_centers`, where out-of-image taps get weight 0 and the rest renormalize).

use std::sync::OnceLock;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, Status, Tensor};

use super::common::{
    check_type, dtype_attr, for_rows, image_dims, is_real, resize_images, resize_scale, resize_to_float, zeros,
};
use super::common::{source, ResizeAttrs};
use super::resize::{per_image, Acc};
use crate::array::util::scratch_vec;
use crate::{OpContext, OpKernel};

const TABLE: usize = 1024;

/// Coefficient table: entry `i` holds the weights at distances `i / 1024` and `1 + i / 1024`.
fn table(keys: bool) -> &'static [[f32; 2]] {
    static LEGACY: OnceLock<Vec<[f32; 2]>> = OnceLock::new();
    static KEYS: OnceLock<Vec<[f32; 2]>> = OnceLock::new();
    let make = |a: f64| {
        (0..=TABLE)
            .map(|i| {
                let x = i as f64 / TABLE as f64;
                let near = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
                let x = x + 1.0;
                let far = ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a;
                [near as f32, far as f32]
            })
            .collect::<Vec<_>>()
    };
    if keys {
        KEYS.get_or_init(|| make(-0.5))
    } else {
        LEGACY.get_or_init(|| make(-0.75))
    }
}

/// The four taps of one output coordinate.
#[derive(Clone, Copy, Debug, Default)]
struct Taps {
    index: [usize; 4],
    weight: [f32; 4],
}

fn taps(out_loc: usize, scale: f32, limit: usize, keys: bool) -> Taps {
    let t = table(keys);
    let s = source(out_loc, scale, keys);
    let base = s.floor();
    let delta = s - base;
    let base = base as i64;
    let off = ((delta * TABLE as f32).round_ties_even() as i64).clamp(0, TABLE as i64) as usize;
    let raw = [t[off][1], t[off][0], t[TABLE - off][0], t[TABLE - off][1]];
    let mut r = Taps::default();
    for (k, &w) in raw.iter().enumerate() {
        let want = base + k as i64 - 1;
        let bounded = want.clamp(0, limit as i64 - 1);
        r.index[k] = bounded as usize;
        r.weight[k] = if !keys || bounded == want { w } else { 0.0 };
    }
    if keys {
        let sum = r.weight[0] + r.weight[1] + r.weight[2] + r.weight[3];
        if sum.abs() >= 1000.0 * f32::MIN_POSITIVE {
            let inv = 1.0 / sum;
            r.weight.iter_mut().for_each(|w| *w *= inv);
        }
    }
    r
}

fn all_taps(out: usize, inp: usize, scale: f32, keys: bool) -> Result<Vec<Taps>, Status> {
    let mut v = scratch_vec(out, "bicubic taps")?;
    v.extend((0..out).map(|i| taps(i, scale, inp, keys)));
    Ok(v)
}

#[inline(always)]
fn dot4(v: [f32; 4], w: &[f32; 4]) -> f32 {
    v[0] * w[0] + v[1] * w[1] + v[2] * w[2] + v[3] * w[3]
}

op_kernel! {
    /// `ResizeBicubic`: float output for every real input type.
    struct ResizeBicubic { attrs: ResizeAttrs }
    fn compute(&self, ctx) {
        let (img, d) = resize_images(ctx)?;
        let [_, ih, iw, c] = d;
        if ih >= 1 << 24 || iw >= 1 << 24 {
            return Err(ctx.error("ResizeBicubic expects an input image with height and width less than 2^24"));
        }
        resize_to_float(ctx, &img, d, self.attrs.align_corners, |x, (oh, ow), (hs, ws), out| {
            let keys = self.attrs.half_pixel_centers;
            let (ys, xs) = (all_taps(oh, ih, hs, keys)?, all_taps(ow, iw, ws, keys)?);
            let row_len = iw * c;
            for_rows(out, ow * c, |r, row| {
                let (b, y) = (r / oh, r % oh);
                let ty = &ys[y];
                let rows = ty.index.map(|i| &x[(b * ih + i) * row_len..][..row_len]);
                for (o, tx) in row.chunks_exact_mut(c).zip(&xs) {
                    for (k, ok) in o.iter_mut().enumerate() {
                        let col = tx.index.map(|xi| {
                            let p = xi * c + k;
                            dot4([rows[0][p], rows[1][p], rows[2][p], rows[3][p]], &ty.weight)
                        });
                        *ok = dot4(col, &tx.weight);
                    }
                }
            });
            Ok(())
        })
    }
}

/// `ResizeBicubicGrad`: spreads each gradient over the 4×4 taps it interpolated.
struct ResizeBicubicGrad {
    attrs: ResizeAttrs,
    dtype: DataType,
}

impl ResizeBicubicGrad {
    fn run<A: Acc + std::ops::Mul<Output = A>>(
        &self,
        g: &[f32],
        gd: [usize; 4],
        o: [usize; 4],
    ) -> Result<Vec<A>, Status> {
        let [_, rh, rw, c] = gd;
        let [_, oh, ow, _] = o;
        let mut out = zeros::<A>(&o, self.dtype)?;
        let keys = self.attrs.half_pixel_centers;
        let (hs, ws) = (resize_scale(oh, rh, self.attrs.align_corners), resize_scale(ow, rw, self.attrs.align_corners));
        let (ys, xs) = (all_taps(rh, oh, hs, keys)?, all_taps(rw, ow, ws, keys)?);
        per_image(&mut out, oh * ow * c, |b, img| {
            for (y, ty) in ys.iter().enumerate() {
                for (x, tx) in xs.iter().enumerate() {
                    let src = &g[((b * rh + y) * rw + x) * c..][..c];
                    for i in 0..4 {
                        for j in 0..4 {
                            let w = A::of(ty.weight[i]) * A::of(tx.weight[j]);
                            let dst = &mut img[(ty.index[i] * ow + tx.index[j]) * c..][..c];
                            for (d, &s) in dst.iter_mut().zip(src) {
                                *d += A::of(s) * w;
                            }
                        }
                    }
                }
            }
        });
        Ok(out)
    }
}

impl OpKernel for ResizeBicubicGrad {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let (grads, orig) = (ctx.input(0)?, ctx.input(1)?);
        let gd = image_dims(ctx, &grads, "input_grad")?;
        if grads.dtype() != DataType::Float {
            return Err(ctx.error(format!("input_grad must be of type float, got {}", grads.dtype())));
        }
        if gd[1] == 0 || gd[2] == 0 {
            return Err(ctx.error(format!("resized dimensions must be positive, got shape {}", grads.shape())));
        }
        let od = image_dims(ctx, &orig, "original_image")?;
        if od[1] == 0 || od[2] == 0 || od[1] > i32::MAX as usize || od[2] > i32::MAX as usize {
            return Err(ctx.error(format!("original dimensions must be positive int32s, got shape {}", orig.shape())));
        }
        check_type(ctx, &orig, "original_image", "T", self.dtype)?;
        if od[0] != gd[0] || od[3] != gd[3] {
            return Err(ctx.error(format!(
                "input_grad {} and original_image {} must have the same batch size and channels",
                grads.shape(),
                orig.shape()
            )));
        }
        let o = [gd[0], od[1], od[2], gd[3]];
        let gv = grads.as_slice::<f32>()?;
        let t = match self.dtype {
            DataType::Double => Tensor::new(o.to_vec(), self.run::<f64>(gv, gd, o)?)?,
            _ => Tensor::new(o.to_vec(), self.run::<f32>(gv, gd, o)?)?,
        };
        ctx.set_output(0, t)
    }
}

pub(crate) fn bicubic_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    dtype_attr(node, "T", is_real)?;
    Ok(Box::new(ResizeBicubic { attrs: ResizeAttrs::parse(node)? }))
}

pub(crate) fn bicubic_grad_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let dtype = dtype_attr(node, "T", |d| matches!(d, DataType::Float | DataType::Double))?;
    Ok(Box::new(ResizeBicubicGrad { attrs: ResizeAttrs::parse(node)?, dtype }))
}
