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
        let mut out = vec![T::ZERO; dims.iter().product()];
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
        let mut dx = vec![T::ZERO; shape.iter().product()];
        avg_pool_grad(&g, grad.as_slice::<T>()?, &mut dx);
        ctx.set_output(0, Tensor::new(shape, dx)?)
    }
}

float_kernel!(Pool<AvgPoolGrad>, [(1, "grad")]);

#[cfg(test)]
mod tests {
    use ferroflow_core::DataType;

    use super::*;
    use crate::testutil::{pool_node, run_kernel};

    #[test]
    fn same_padding_counts_only_covered_pixels() {
        let x = Tensor::new(vec![1, 3, 3, 1], vec![1.0f32, 5., 2., 4., 3., 9., 7., 8., 6.]).unwrap();
        let y = run_kernel(pool_node("AvgPool", DataType::Float, 2, 2, "SAME"), vec![x], 1).unwrap().remove(0);
        assert_eq!(y.as_slice::<f32>().unwrap(), &[13. / 4., 11. / 2., 15. / 2., 6.]);
        let gr = Tensor::new(vec![1, 2, 2, 1], vec![4.0f32, 2., 2., 1.]).unwrap();
        let dx = run_kernel(
            pool_node("AvgPoolGrad", DataType::Float, 2, 2, "SAME"),
            vec![Tensor::vec(vec![1i32, 3, 3, 1]), gr],
            1,
        )
        .unwrap()
        .remove(0);
        assert_eq!(dx.as_slice::<f32>().unwrap(), &[1., 1., 1., 1., 1., 1., 1., 1., 1.]);
    }

    #[test]
    fn grad_shape_errors() {
        let gr = Tensor::zeros(DataType::Float, vec![1, 2, 2, 1]).unwrap();
        let e = run_kernel(
            pool_node("AvgPoolGrad", DataType::Float, 2, 2, "SAME"),
            vec![Tensor::vec(vec![1i32, 3, 3]), gr.clone()],
            1,
        );
        assert!(e.unwrap_err().message.contains("4 elements"));
        let e = run_kernel(
            pool_node("AvgPoolGrad", DataType::Float, 2, 2, "VALID"),
            vec![Tensor::vec(vec![1i32, 3, 3, 1]), gr],
            1,
        );
        assert!(e.unwrap_err().message.contains("Expected grad shape"));
    }
}
