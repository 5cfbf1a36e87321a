//! `_MaxPoolWithIndex` and `_MaxPoolGradWithIndex`: max pooling that also records, for each
//! pooled element, where in its window the maximum was, so that the gradient never reads
//! the pooled input again. The graph rewrite in the runtime crate (`remap_pool.rs`) puts
//! them in place of `MaxPool` + `MaxPoolGrad` (+ `ReluGrad`) when a graph is prepared.
//!
//! The index is one byte per pooled element: the low 7 bits are the position of the first
//! maximum (row-major within the window clipped to the input, ties to the first, as
//! `MaxPool`), bit 7 is set when that maximum is greater than zero. With the `relu` attr the
//! gradient applies `ReluGrad` too: `ReluGrad(g, x)` passes `g` where `x > 0`, and the only
//! elements of `x` that receive a gradient are window maxima, whose sign the bit holds.
//! Results equal those of the ops they replace bit for bit.

use std::mem::MaybeUninit;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};
use rayon::prelude::*;

use super::common::float_kernel;
use super::common::{check_dtype, dims_str, PAR_MIN};
use super::pool::{check_grad, par_units, pool_type, PoolAttrs, PoolGeom};
use crate::dispatch::dispatch;
use crate::{OpContext, OpKernel};

/// Bit 7 of an index byte: the window's maximum is greater than zero.
const POSITIVE: u8 = 0x80;

/// Largest window (elements) whose positions fit the index byte.
pub const MAX_WINDOW: usize = 127;

/// Element types of the indexed pooling.
trait Elem:
    ferroflow_core::TensorType
    + Copy
    + PartialOrd
    + Default
    + std::ops::AddAssign
    + std::ops::Mul<Output = Self>
    + Send
    + Sync
{
    const ONE: Self;
}
impl Elem for f32 {
    const ONE: f32 = 1.0;
}
impl Elem for f64 {
    const ONE: f64 = 1.0;
}

fn parse(node: &NodeDef) -> Result<(PoolAttrs, DataType), Status> {
    let attrs = PoolAttrs::parse(node)?;
    if attrs.ksize.0 * attrs.ksize.1 > MAX_WINDOW {
        return Err(node.node_error(format!(
            "windows of {}x{} elements are too large for an index byte (at most {MAX_WINDOW})",
            attrs.ksize.0, attrs.ksize.1
        )));
    }
    Ok((attrs, pool_type(node, false)?))
}

struct MaxPoolWithIndex {
    attrs: PoolAttrs,
    dtype: DataType,
}

pub(crate) fn max_pool_with_index_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let (attrs, dtype) = parse(node)?;
    Ok(Box::new(MaxPoolWithIndex { attrs, dtype }))
}

/// One output row (image, oy): the maxima into `orow`, their index bytes into `irow`.
struct IndexRow<'a, T> {
    g: &'a PoolGeom,
    x: &'a [T],
    row: usize,
    orow: &'a mut [T],
    irow: &'a mut [u8],
}

impl<T: Elem> crate::isa::PathKernel for IndexRow<'_, T> {
    #[inline(always)]
    fn run(self) {
        let IndexRow { g, x, row, orow, irow } = self;
        let (c, w, oh) = (g.c, g.x.input, g.y.output);
        let (b, oy) = (row / oh, row % oh);
        let (y0, y1) = g.y.range(oy);
        let mut arg = vec![0u32; c];
        for (ox, (acc, idx)) in orow.chunks_exact_mut(c).zip(irow.chunks_exact_mut(c)).enumerate() {
            let (x0, x1) = g.x.range(ox);
            let mut k = 0u32;
            for iy in y0..y1 {
                for ix in x0..x1 {
                    let p = ((b * g.y.input + iy) * w + ix) * c;
                    let src = &x[p..p + c];
                    if k == 0 {
                        acc.copy_from_slice(src);
                        arg.fill(0);
                    } else {
                        // Selects, not branches, so the channel loop vectorizes.
                        for ((a, m), &v) in acc.iter_mut().zip(arg.iter_mut()).zip(src) {
                            let more = v > *a;
                            *m = if more { k } else { *m };
                            *a = if more { v } else { *a };
                        }
                    }
                    k += 1;
                }
            }
            if k == 0 {
                acc.fill(T::default());
                idx.fill(0);
                continue;
            }
            for ((i, &m), &a) in idx.iter_mut().zip(arg.iter()).zip(acc.iter()) {
                *i = m as u8 | if a > T::default() { POSITIVE } else { 0 };
            }
        }
    }
}

impl MaxPoolWithIndex {
    fn run<T: Elem>(&self, ctx: &mut OpContext, x: &Tensor) -> Result<(), Status> {
        let g = self.attrs.geom(ctx, x.dims())?;
        let dims = g.out_dims();
        let len: usize = dims.iter().product();
        let mut out = ferroflow_core::alloc::zeroed::<T>(&dims)?;
        let mut index = ferroflow_core::alloc::zeroed::<u8>(&dims)?;
        let xs = x.as_slice::<T>()?;
        let unit = (g.x.output * g.c).max(1);
        let row = |(row, (orow, irow)): (usize, (&mut [T], &mut [u8]))| {
            crate::isa::run(IndexRow { g: &g, x: xs, row, orow, irow })
        };
        if len * g.y.size * g.x.size >= PAR_MIN && rayon::current_num_threads() > 1 {
            out.par_chunks_mut(unit).zip(index.par_chunks_mut(unit)).enumerate().for_each(row);
        } else {
            out.chunks_mut(unit).zip(index.chunks_mut(unit)).enumerate().for_each(row);
        }
        ctx.set_output(0, Tensor::new(dims.clone(), out)?)?;
        ctx.set_output(1, Tensor::new(dims, index)?)
    }
}

impl OpKernel for MaxPoolWithIndex {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = ctx.input(0)?;
        check_dtype(ctx.node(), "input", x.dtype(), self.dtype)?;
        dispatch!(self.dtype, ctx, [f32, f64], |T| self.run::<T>(ctx, &x))
    }
}

struct MaxPoolGradWithIndex {
    attrs: PoolAttrs,
    dtype: DataType,
    relu: bool,
}

pub(crate) fn max_pool_grad_with_index_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let (attrs, dtype) = parse(node)?;
    let relu = node.has_attr("relu") && node.attr_bool("relu")?;
    if relu && !attrs.disjoint() {
        return Err(node.node_error(format!(
            "relu needs windows that do not overlap (strides >= ksize), got ksize {:?} and strides {:?}",
            attrs.ksize, attrs.strides
        )));
    }
    Ok(Box::new(MaxPoolGradWithIndex { attrs, dtype, relu }))
}

/// The input gradient of one image `b`.
struct GradImage<'a, T> {
    g: &'a PoolGeom,
    index: &'a [u8],
    grad: &'a [T],
    relu: bool,
    tiled: bool,
    disjoint: bool,
    b: usize,
    dxi: &'a mut [MaybeUninit<T>],
}

impl<T: Elem> crate::isa::PathKernel for GradImage<'_, T> {
    #[inline(always)]
    fn run(self) {
        let GradImage { g, index, grad, relu, tiled, disjoint, b, dxi } = self;
        if !tiled {
            for d in dxi.iter_mut() {
                d.write(T::default());
            }
        }
        // The gradient at a window's maximum: `g`, or ReluGrad's `g * (max > 0)`, which
        // keeps its signed zeros and NaNs.
        let value = |i: u8, gv: T| if relu { gv * if i & POSITIVE != 0 { T::ONE } else { T::default() } } else { gv };
        let (c, w, oh, ow) = (g.c, g.x.input, g.y.output, g.x.output);
        let base = b * g.out_image_len();
        for oy in 0..oh {
            let (y0, y1) = g.y.range(oy);
            for ox in 0..ow {
                let (x0, x1) = g.x.range(ox);
                let o = base + (oy * ow + ox) * c;
                let (idx, go) = (&index[o..o + c], &grad[o..o + c]);
                let mut k = 0u8;
                for iy in y0..y1 {
                    for ix in x0..x1 {
                        let dxs = &mut dxi[(iy * w + ix) * c..][..c];
                        if tiled {
                            // Every element once: a select that vectorizes.
                            for ((d, &i), &gv) in dxs.iter_mut().zip(idx).zip(go) {
                                d.write(if i & !POSITIVE == k { value(i, gv) } else { T::default() });
                            }
                        } else {
                            for ((d, &i), &gv) in dxs.iter_mut().zip(idx).zip(go) {
                                if i & !POSITIVE == k {
                                    // SAFETY: windows that do not tile the input had the
                                    // image zero-filled above.
                                    let d = unsafe { d.assume_init_mut() };
                                    if disjoint {
                                        *d = value(i, gv);
                                    } else {
                                        *d += gv;
                                    }
                                }
                            }
                        }
                        k += 1;
                    }
                }
            }
        }
    }
}

impl MaxPoolGradWithIndex {
    fn run<T: Elem>(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let (x, index, grad) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?);
        let g = self.attrs.geom(ctx, x.dims())?;
        check_grad(ctx, &g, grad.dims())?;
        if index.dtype() != DataType::UInt8 || index.dims() != g.out_dims().as_slice() {
            return Err(ctx.error(format!(
                "index must be uint8 of the pooled shape {}, got {} {}",
                dims_str(&g.out_dims()),
                index.dtype(),
                index.shape()
            )));
        }
        let (tiled, disjoint) = (g.y.tiles() && g.x.tiles(), self.attrs.disjoint());
        let (index, grad) = (index.as_slice::<u8>()?, grad.as_slice::<T>()?);
        let len = x.num_elements();
        let mut dx: Vec<T> = ferroflow_core::alloc::with_capacity(x.dims())?;
        let (relu, work) = (self.relu, grad.len() * g.y.size * g.x.size);
        par_units(&mut dx.spare_capacity_mut()[..len], g.image_len(), work, |b, dxi| {
            crate::isa::run(GradImage { g: &g, index, grad, relu, tiled, disjoint, b, dxi })
        });
        // SAFETY: the units cover the `len` elements image by image, and `GradImage`
        // initializes every element of its image (by the tiling windows, or a zero fill).
        unsafe { dx.set_len(len) };
        ctx.set_output(0, Tensor::new(x.dims().to_vec(), dx)?)
    }
}

float_kernel!(MaxPoolGradWithIndex, [(0, "orig_input"), (2, "grad")]);
