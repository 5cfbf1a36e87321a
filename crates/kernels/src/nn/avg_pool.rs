//! `AvgPool` and `AvgPoolGrad` (NHWC). Each window averages only the input pixels it
//! covers (SAME padding is not counted), like TensorFlow.

use ferroflow_core::{Status, Tensor};

use super::common::float_kernel;
use super::pool::{check_grad, par_units, shape_input, Pool, PoolGeom};
use crate::real::Real;
use crate::OpContext;

/// Marks the `AvgPool` kernel, [`Pool<AvgPool>`].
pub(crate) enum AvgPool {}

fn avg_pool<T: Real>(g: &PoolGeom, x: &[T], out: &mut [T]) {
    let (c, w, oh, ow) = (g.c, g.x.input, g.y.output, g.x.output);
    let work = out.len() * g.y.size * g.x.size;
    par_units(out, ow * c, work, |row, orow| {
        let (b, oy) = (row / oh, row % oh);
        let (y0, y1) = g.y.range(oy);
        for (ox, acc) in orow.chunks_exact_mut(c).enumerate() {
            let (x0, x1) = g.x.range(ox);
            acc.fill(T::ZERO);
            for iy in y0..y1 {
                for ix in x0..x1 {
                    let p = ((b * g.y.input + iy) * w + ix) * c;
                    for (a, &v) in acc.iter_mut().zip(&x[p..p + c]) {
                        *a += v;
                    }
                }
            }
            let count = T::from_usize((y1 - y0) * (x1 - x0));
            acc.iter_mut().for_each(|a| *a = *a / count);
        }
    });
}

impl Pool<AvgPool> {
    fn run<T: Real>(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = ctx.input(0)?;
        let g = self.attrs.geom(ctx, x.dims())?;
        let dims = g.out_dims();
        let mut out = ferroflow_core::alloc::zeroed::<T>(&dims)?;
        avg_pool(&g, x.as_slice::<T>()?, &mut out);
        ctx.set_output(0, Tensor::new(dims, out)?)
    }
}

float_kernel!(Pool<AvgPool>, [(0, "value")]);

/// Marks the `AvgPoolGrad` kernel, [`Pool<AvgPoolGrad>`].
pub(crate) enum AvgPoolGrad {}

fn avg_pool_grad<T: Real>(g: &PoolGeom, grad: &[T], dx: &mut [T]) {
    let (c, w, oh, ow) = (g.c, g.x.input, g.y.output, g.x.output);
    let work = grad.len() * g.y.size * g.x.size;
    par_units(dx, g.image_len(), work, |b, dxi| {
        let gi = &grad[b * g.out_image_len()..(b + 1) * g.out_image_len()];
        for oy in 0..oh {
            let (y0, y1) = g.y.range(oy);
            for ox in 0..ow {
                let (x0, x1) = g.x.range(ox);
                let inv = T::ONE / T::from_usize((y1 - y0) * (x1 - x0));
                let go = &gi[(oy * ow + ox) * c..(oy * ow + ox + 1) * c];
                for iy in y0..y1 {
                    for ix in x0..x1 {
                        let p = (iy * w + ix) * c;
                        for (d, &v) in dxi[p..p + c].iter_mut().zip(go) {
                            *d += v * inv;
                        }
                    }
                }
            }
        }
    });
}

impl Pool<AvgPoolGrad> {
    fn run<T: Real>(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let (sz, grad) = (ctx.input(0)?, ctx.input(1)?);
        let shape = shape_input(ctx, &sz, "orig_input_shape")?;
        let g = self.attrs.geom(ctx, &shape)?;
        check_grad(ctx, &g, grad.dims())?;
        let mut dx = ferroflow_core::alloc::zeroed::<T>(&shape)?;
        avg_pool_grad(&g, grad.as_slice::<T>()?, &mut dx);
        ctx.set_output(0, Tensor::new(shape, dx)?)
    }
}

float_kernel!(Pool<AvgPoolGrad>, [(1, "grad")]);
