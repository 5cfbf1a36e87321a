//! `MaxPoolGradGrad` (NHWC): the gradient of `MaxPoolGrad` with respect to its `grad` input.
//! For each pooling window it picks the entry of `grad` (shaped like `orig_input`) at the
//! window's maximum; the result is shaped like `orig_output`. The maximum is the first one
//! in row-major order, as in `MaxPoolGrad`, so the two ops are adjoint.

use ferroflow_core::{Status, Tensor, TensorType};

use super::common::dims_str;
use super::common::float_kernel;
use super::pool::{par_units, Pool, PoolGeom};
use crate::OpContext;

/// Marks the `MaxPoolGradGrad` kernel, [`Pool<MaxPoolGradGrad>`].
pub(crate) enum MaxPoolGradGrad {}

fn gather_at_max<T: TensorType + Copy + PartialOrd + Default + Send + Sync>(
    g: &PoolGeom,
    x: &[T],
    grad: &[T],
    out: &mut [T],
) {
    let (c, w, oh, ow) = (g.c, g.x.input, g.y.output, g.x.output);
    let work = out.len() * g.y.size * g.x.size;
    par_units(out, ow * c, work, |row, orow| {
        let (b, oy) = (row / oh, row % oh);
        let (y0, y1) = g.y.range(oy);
        let base = b * g.image_len();
        let mut best = vec![T::default(); c];
        let mut arg = vec![0usize; c];
        for (ox, o) in orow.chunks_exact_mut(c).enumerate() {
            let (x0, x1) = g.x.range(ox);
            let mut first = true;
            for iy in y0..y1 {
                for ix in x0..x1 {
                    let p = base + (iy * w + ix) * c;
                    let src = &x[p..p + c];
                    if first {
                        best.copy_from_slice(src);
                        arg.iter_mut().enumerate().for_each(|(ch, a)| *a = p + ch);
                        first = false;
                    } else {
                        for (ch, (bv, &v)) in best.iter_mut().zip(src).enumerate() {
                            if *bv < v {
                                *bv = v;
                                arg[ch] = p + ch;
                            }
                        }
                    }
                }
            }
            if !first {
                for (d, &a) in o.iter_mut().zip(&arg) {
                    *d = grad[a];
                }
            }
        }
    });
}

impl Pool<MaxPoolGradGrad> {
    fn run<T: TensorType + Copy + PartialOrd + Default + Send + Sync>(
        &self,
        ctx: &mut OpContext,
    ) -> Result<(), Status> {
        let (x, y, grad) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?);
        let g = self.attrs.geom(ctx, x.dims())?;
        let dims = g.out_dims();
        if y.dims() != dims.as_slice() {
            return Err(ctx.error(format!(
                "orig_output shape {} does not match the pooled shape {} of orig_input {}",
                y.shape(),
                dims_str(&dims),
                x.shape()
            )));
        }
        if grad.dims() != x.dims() {
            return Err(ctx.error(format!(
                "grad must have the shape of orig_input {}, got {}",
                x.shape(),
                grad.shape()
            )));
        }
        let mut out = ferroflow_core::alloc::zeroed::<T>(&dims)?;
        gather_at_max(&g, x.as_slice::<T>()?, grad.as_slice::<T>()?, &mut out);
        ctx.set_output(0, Tensor::new(dims, out)?)
    }
}

float_kernel!(Pool<MaxPoolGradGrad>, [(0, "orig_input"), (1, "orig_output"), (2, "grad")]);
