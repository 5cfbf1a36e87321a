//! `MaxPool` and `MaxPoolGrad` (NHWC). The gradient goes to the first maximum of each window
//! in row-major order, like TensorFlow's CPU kernel (ties resolved by a strict `<`).

use crate::dispatch::dispatch;
use std::mem::MaybeUninit;
use std::ops::AddAssign;

use ferroflow_core::{Status, Tensor, TensorType};

use super::common::check_dtype;
use super::common::float_kernel;
use super::pool::{check_grad, par_units, Pool, PoolGeom};
use crate::{OpContext, OpKernel};

/// Element types of max pooling.
trait MaxElem: TensorType + Copy + PartialOrd + Default {}
impl MaxElem for f32 {}
impl MaxElem for f64 {}
impl MaxElem for i32 {}
impl MaxElem for i64 {}

/// Marks the `MaxPool` kernel, [`Pool<MaxPool>`].
pub(crate) enum MaxPool {}

fn max_pool<T: MaxElem>(g: &PoolGeom, x: &[T], out: &mut [T]) {
    let work = out.len() * g.y.size * g.x.size;
    par_units(out, g.x.output * g.c, work, |row, orow| crate::isa::run(PoolRow { g, x, row, orow }));
}

/// One output row `row` (image, oy) of the max pooling.
struct PoolRow<'a, T> {
    g: &'a PoolGeom,
    x: &'a [T],
    row: usize,
    orow: &'a mut [T],
}

impl<T: MaxElem> crate::isa::PathKernel for PoolRow<'_, T> {
    #[inline(always)]
    fn run(self) {
        let PoolRow { g, x, row, orow } = self;
        let (c, w, oh) = (g.c, g.x.input, g.y.output);
        let (b, oy) = (row / oh, row % oh);
        let (y0, y1) = g.y.range(oy);
        for (ox, acc) in orow.chunks_exact_mut(c).enumerate() {
            let (x0, x1) = g.x.range(ox);
            let mut first = true;
            for iy in y0..y1 {
                for ix in x0..x1 {
                    let p = ((b * g.y.input + iy) * w + ix) * c;
                    let src = &x[p..p + c];
                    if first {
                        acc.copy_from_slice(src);
                        first = false;
                    } else {
                        // A select, not a conditional store, so it vectorizes.
                        for (a, &v) in acc.iter_mut().zip(src) {
                            *a = if v > *a { v } else { *a };
                        }
                    }
                }
            }
        }
    }
}

impl Pool<MaxPool> {
    fn run<T: MaxElem>(&self, ctx: &mut OpContext, x: &Tensor) -> Result<(), Status> {
        let g = self.attrs.geom(ctx, x.dims())?;
        let dims = g.out_dims();
        let mut out = ferroflow_core::alloc::zeroed::<T>(&dims)?;
        max_pool(&g, x.as_slice::<T>()?, &mut out);
        ctx.set_output(0, Tensor::new(dims, out)?)
    }
}

impl OpKernel for Pool<MaxPool> {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = ctx.input(0)?;
        check_dtype(ctx.node(), "input", x.dtype(), self.dtype)?;
        dispatch!(self.dtype, ctx, [f32, f64, i32, i64], |T| self.run::<T>(ctx, &x))
    }
}

/// Marks the `MaxPoolGrad` kernel, [`Pool<MaxPoolGrad>`].
pub(crate) enum MaxPoolGrad {}

/// The input gradient of the max pooling, `n` images of `g.image_len()` elements.
/// Windows that never overlap (`disjoint`, as in 2×2 stride-2 pooling) write each gradient
/// element once; when they also tile the input, every element of `dx` is written exactly
/// once and it needs no zero fill first.
fn max_pool_grad<T: MaxElem + AddAssign + Send + Sync>(
    g: &PoolGeom,
    disjoint: bool,
    (x, dims): (&[T], &[usize]),
    grad: &[T],
) -> Result<Vec<T>, Status> {
    let len = x.len();
    let work = grad.len() * g.y.size * g.x.size;
    let tiled = g.y.tiles() && g.x.tiles();
    let mut dx: Vec<T> = ferroflow_core::alloc::with_capacity(dims)?;
    par_units(&mut dx.spare_capacity_mut()[..len], g.image_len(), work, |b, dxi| {
        crate::isa::run(GradImage { g, x, grad, disjoint, tiled, b, dxi })
    });
    // SAFETY: the units cover the `len` elements image by image, and `GradImage` initializes
    // every element of its image (all of them by the tiling windows, or a zero fill first).
    unsafe { dx.set_len(len) };
    Ok(dx)
}

/// The input gradient of one image `b` of the max pooling.
struct GradImage<'a, T> {
    g: &'a PoolGeom,
    x: &'a [T],
    grad: &'a [T],
    disjoint: bool,
    tiled: bool,
    b: usize,
    dxi: &'a mut [MaybeUninit<T>],
}

impl<T: MaxElem + AddAssign> crate::isa::PathKernel for GradImage<'_, T> {
    #[inline(always)]
    fn run(self) {
        let GradImage { g, x, grad, disjoint, tiled, b, dxi } = self;
        if !tiled {
            for d in dxi.iter_mut() {
                d.write(T::default());
            }
        }
        let (c, w, oh, ow) = (g.c, g.x.input, g.y.output, g.x.output);
        let xi = &x[b * g.image_len()..(b + 1) * g.image_len()];
        let gi = &grad[b * g.out_image_len()..(b + 1) * g.out_image_len()];
        let mut best = vec![T::default(); c];
        let mut arg = vec![0u32; c];
        for oy in 0..oh {
            let (y0, y1) = g.y.range(oy);
            for ox in 0..ow {
                let (x0, x1) = g.x.range(ox);
                let mut first = true;
                for iy in y0..y1 {
                    for ix in x0..x1 {
                        let p = (iy * w + ix) * c;
                        let src = &xi[p..p + c];
                        if first {
                            best.copy_from_slice(src);
                            arg.fill(p as u32);
                            first = false;
                        } else {
                            // Branch-free (mask arithmetic) so the loop vectorizes.
                            let pu = p as u32;
                            for ((bv, a), &v) in best.iter_mut().zip(arg.iter_mut()).zip(src) {
                                let b = *bv;
                                let mask = ((b < v) as u32).wrapping_neg();
                                *a = (pu & mask) | (*a & !mask);
                                *bv = if b < v { v } else { b };
                            }
                        }
                    }
                }
                if first {
                    continue;
                }
                let go = &gi[(oy * ow + ox) * c..(oy * ow + ox + 1) * c];
                if disjoint {
                    // Each input element is in this window only: store the gradient or 0 at
                    // every position of the window, a select that vectorizes.
                    for iy in y0..y1 {
                        for ix in x0..x1 {
                            let p = (iy * w + ix) * c;
                            let pu = p as u32;
                            for ((d, &a), &gv) in dxi[p..p + c].iter_mut().zip(arg.iter()).zip(go) {
                                d.write(if a == pu { gv } else { T::default() });
                            }
                        }
                    }
                } else {
                    for (ch, (&a, &gv)) in arg.iter().zip(go).enumerate() {
                        // SAFETY: overlapping windows are never tiling, so the image was
                        // zero-filled above and the element is initialized.
                        unsafe { *dxi[a as usize + ch].assume_init_mut() += gv };
                    }
                }
            }
        }
    }
}

impl Pool<MaxPoolGrad> {
    fn run<T: MaxElem + AddAssign + Send + Sync>(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let (x, y, grad) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?);
        let g = self.attrs.geom(ctx, x.dims())?;
        if y.dims() != g.out_dims().as_slice() {
            return Err(ctx.error(format!(
                "orig_output shape {} does not match the pooled shape {:?} of orig_input {}",
                y.shape(),
                g.out_dims(),
                x.shape()
            )));
        }
        check_grad(ctx, &g, grad.dims())?;
        if g.image_len() > u32::MAX as usize {
            return Err(ctx.error(format!("images of {} elements are too large for MaxPoolGrad", g.image_len())));
        }
        let dx = max_pool_grad(&g, self.attrs.disjoint(), (x.as_slice::<T>()?, x.dims()), grad.as_slice::<T>()?)?;
        ctx.set_output(0, Tensor::new(x.dims().to_vec(), dx)?)
    }
}

float_kernel!(Pool<MaxPoolGrad>, [(0, "orig_input"), (1, "orig_output"), (2, "grad")]);
