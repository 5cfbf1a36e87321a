//! `MaxPoolWithArgmax` (`tf.nn.max_pool_with_argmax`), `MaxPoolGradWithArgmax` and
//! `MaxPoolGradGradWithArgmax` (NHWC).
//!
//! The argmax of a pooled element is the flat position of its window's maximum,
//! `(y * width + x) * channels + c`, plus `b * height * width * channels` when
//! `include_batch_in_index` is set. Windows are clipped to the input (SAME padding never
//! wins) and the first maximum in row-major order is taken (a later element replaces it only
//! if strictly greater), as in TensorFlow's CPU kernel. The gradients read positions from
//! `argmax`; a position outside its image is an InvalidArgument error, never a write
//! elsewhere.

use std::ops::AddAssign;

use ferroflow_core::alloc::with_capacity;
use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor, TensorType};

use super::common::dims_str;
use super::common::{type_attr, REALS};
use super::pool::{check_grad, par_units, PoolAttrs, PoolGeom};
use crate::array::util::{collect_vec, scratch_vec};
use crate::dispatch::dispatch;
use crate::{OpContext, OpKernel};

/// Element types of the argmax pooling.
trait Elem: TensorType + Copy + PartialOrd + Default + AddAssign + Send + Sync {}
impl Elem for f32 {}
impl Elem for f64 {}
impl Elem for i32 {}
impl Elem for i64 {}

#[derive(Clone, Copy, PartialEq)]
enum Which {
    Forward,
    Grad,
    GradGrad,
}

struct ArgmaxPool {
    which: Which,
    attrs: PoolAttrs,
    dtype: DataType,
    /// `Targmax`: int32 or int64.
    index: DataType,
    include_batch: bool,
}

/// The max and the argmax (flat position within its image) of every pooled element of `x`.
fn forward<T: Elem>(g: &PoolGeom, x: &[T]) -> Result<(Vec<T>, Vec<i64>), Status> {
    let (c, w, oh, ow) = (g.c, g.x.input, g.y.output, g.x.output);
    let n = g.n * g.out_image_len();
    let mut out: Vec<(T, i64)> = scratch_vec(n, "pooled values and their positions")?;
    out.resize(n, (T::default(), 0));
    let work = n * g.y.size * g.x.size;
    par_units(&mut out, g.out_image_len(), work, |b, o| {
        let xi = &x[b * g.image_len()..(b + 1) * g.image_len()];
        for oy in 0..oh {
            let (y0, y1) = g.y.range(oy);
            for ox in 0..ow {
                let (x0, x1) = g.x.range(ox);
                let cell = &mut o[(oy * ow + ox) * c..(oy * ow + ox + 1) * c];
                let mut first = true;
                for iy in y0..y1 {
                    for ix in x0..x1 {
                        let p = (iy * w + ix) * c;
                        for (ch, slot) in cell.iter_mut().enumerate() {
                            let v = xi[p + ch];
                            if first || slot.0 < v {
                                *slot = (v, (p + ch) as i64);
                            }
                        }
                        first = false;
                    }
                }
            }
        }
    });
    let dims = g.out_dims();
    let (mut vals, mut args) = (with_capacity::<T>(&dims)?, with_capacity::<i64>(&dims)?);
    for (v, a) in out {
        vals.push(v);
        args.push(a);
    }
    Ok((vals, args))
}

/// The flat position within image `b` that `argmax` entry `a` names, checked against the
/// image's `len` elements.
fn position(ctx: &OpContext, a: i64, b: usize, len: usize, include_batch: bool) -> Result<usize, Status> {
    let (start, end) = (b * len, (b + 1) * len);
    let global = if include_batch { a } else { a + start as i64 };
    if global < start as i64 || global >= end as i64 {
        return Err(ctx.error(format!("Invalid output gradient index: {global}, {start}, {end}")));
    }
    Ok(global as usize - start)
}

impl ArgmaxPool {
    fn argmax_of(&self, ctx: &OpContext, t: &Tensor, g: &PoolGeom) -> Result<Vec<i64>, Status> {
        if t.dims() != g.out_dims().as_slice() {
            return Err(ctx.error(format!(
                "Expected argmax shape to be {}, but got {}",
                dims_str(&g.out_dims()),
                dims_str(t.dims())
            )));
        }
        if t.dtype() != self.index {
            return Err(ctx.error(format!("argmax must be {}, got {}", self.index, t.dtype())));
        }
        Ok(match t.dtype() {
            DataType::Int32 => t.as_slice::<i32>()?.iter().map(|&a| a as i64).collect(),
            _ => t.as_slice::<i64>()?.to_vec(),
        })
    }

    fn index_tensor(&self, dims: Vec<usize>, v: Vec<i64>) -> Result<Tensor, Status> {
        match self.index {
            DataType::Int32 => Tensor::new(dims.clone(), collect_vec(&dims, v.into_iter().map(|a| a as i32))?),
            _ => Tensor::new(dims, v),
        }
    }

    fn run<T: Elem>(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = ctx.input(0)?;
        let g = self.attrs.geom(ctx, x.dims())?;
        let (len, olen) = (g.image_len(), g.out_image_len());
        match self.which {
            Which::Forward => {
                let (out, mut arg) = forward(&g, x.as_slice::<T>()?)?;
                if self.include_batch {
                    for (i, a) in arg.iter_mut().enumerate() {
                        *a += ((i / olen.max(1)) * len) as i64;
                    }
                }
                if self.index == DataType::Int32 && g.n * len > i32::MAX as usize {
                    return Err(ctx.error(format!("input of {} elements is too large for an int32 argmax", g.n * len)));
                }
                ctx.set_output(0, Tensor::new(g.out_dims(), out)?)?;
                ctx.set_output(1, self.index_tensor(g.out_dims(), arg)?)
            }
            Which::Grad => {
                let grad = ctx.input(1)?;
                check_grad(ctx, &g, grad.dims())?;
                let arg = self.argmax_of(ctx, &ctx.input(2)?, &g)?;
                let gv = grad.as_slice::<T>()?;
                let mut dx = ferroflow_core::alloc::zeroed::<T>(x.dims())?;
                for (i, (&a, &v)) in arg.iter().zip(gv).enumerate() {
                    let b = i / olen.max(1);
                    let p = position(ctx, a, b, len, self.include_batch)?;
                    dx[b * len + p] += v;
                }
                ctx.set_output(0, Tensor::new(x.dims().to_vec(), dx)?)
            }
            Which::GradGrad => {
                let grad = ctx.input(1)?;
                if grad.dims() != x.dims() {
                    return Err(ctx.error(format!(
                        "input and grad must have the same shape, got {} and {}",
                        dims_str(x.dims()),
                        dims_str(grad.dims())
                    )));
                }
                let arg = self.argmax_of(ctx, &ctx.input(2)?, &g)?;
                let gv = grad.as_slice::<T>()?;
                let mut out = with_capacity::<T>(&g.out_dims())?;
                for (i, &a) in arg.iter().enumerate() {
                    let b = i / olen.max(1);
                    out.push(gv[b * len + position(ctx, a, b, len, self.include_batch)?]);
                }
                ctx.set_output(0, Tensor::new(g.out_dims(), out)?)
            }
        }
    }
}

impl OpKernel for ArgmaxPool {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let inputs: &[(usize, &str)] = match self.which {
            Which::Forward => &[(0, "input")],
            _ => &[(0, "input"), (1, "grad")],
        };
        for &(i, what) in inputs {
            let t = ctx.input(i)?;
            if t.dtype() != self.dtype {
                return Err(ctx.error(format!("{what} must be {}, got {}", self.dtype, t.dtype())));
            }
        }
        dispatch!(self.dtype, ctx, [f32, f64, i32, i64], |T| self.run::<T>(ctx))
    }
}

fn make(node: &NodeDef, which: Which) -> Result<Box<dyn OpKernel>, Status> {
    let dtype = type_attr(node, REALS)?;
    let index = node.attr_type("Targmax")?;
    if index != DataType::Int32 && index != DataType::Int64 {
        return Err(node.node_error(format!("Targmax must be int32 or int64, got {index}")));
    }
    let include_batch = node.attr_bool("include_batch_in_index")?;
    Ok(Box::new(ArgmaxPool { which, attrs: PoolAttrs::parse(node)?, dtype, index, include_batch }))
}

pub(crate) fn register(r: &mut crate::KernelRegistry) {
    r.add("MaxPoolWithArgmax", |n| make(n, Which::Forward));
    r.add("MaxPoolGradWithArgmax", |n| make(n, Which::Grad));
    r.add("MaxPoolGradGradWithArgmax", |n| make(n, Which::GradGrad));
}
