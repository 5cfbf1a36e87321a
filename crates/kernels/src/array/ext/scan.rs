//! Cumsum, Cumprod and CumulativeLogsumexp: inclusive or exclusive scans along one axis,
//! forward or reversed. The input is viewed as `[outer, len, inner]`; each step combines a
//! whole contiguous `inner` row, so the loop vectorizes; outer blocks run in parallel.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};
use rayon::prelude::*;

use super::util::{kernel_dtype, norm_axis, PAR_MIN};
use crate::array::util::{checked_index_scalar, product};
use crate::dispatch::dispatch;
use crate::math::elem::{Float, Num};
use crate::math::reduce_loops::{ProdR, Reducer, SumR};
use crate::{KernelRegistry, OpContext, OpKernel};

#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    Sum,
    Prod,
    LogSumExp,
}

/// log(exp(a) + exp(x)) without overflow: max + log1p(exp(min - max)).
#[derive(Clone, Copy)]
struct LseR;

impl<T: Float> Reducer<T> for LseR {
    fn init() -> T {
        T::MAX_INIT
    }
    #[inline(always)]
    fn combine(a: T, x: T) -> T {
        let (hi, lo) = if a > x { (a, x) } else { (x, a) };
        if lo == T::MAX_INIT {
            return hi;
        }
        hi + (lo - hi).exp().ln_1p()
    }
}

/// Scans one `[len, inner]` block from `x` into `out`.
fn scan_block<T: Num, R: Reducer<T>>(x: &[T], out: &mut [T], len: usize, inner: usize, excl: bool, rev: bool) {
    let mut acc = vec![R::init(); inner];
    for step in 0..len {
        let j = if rev { len - 1 - step } else { step };
        let (xr, orow) = (&x[j * inner..(j + 1) * inner], &mut out[j * inner..(j + 1) * inner]);
        if excl {
            for ((o, a), &v) in orow.iter_mut().zip(acc.iter_mut()).zip(xr) {
                *o = *a;
                *a = R::combine(*a, v);
            }
        } else {
            for ((o, a), &v) in orow.iter_mut().zip(acc.iter_mut()).zip(xr) {
                *a = R::combine(*a, v);
                *o = *a;
            }
        }
    }
}

/// Scans `x` (of shape `shape`, taken as `dims` = `[outer, len, inner]`).
fn scan<T: Num, R: Reducer<T>>(
    x: &[T],
    shape: &[usize],
    dims: [usize; 3],
    excl: bool,
    rev: bool,
) -> Result<Vec<T>, Status> {
    let [outer, len, inner] = dims;
    let block = len * inner;
    let mut out = ferroflow_core::alloc::zeroed::<T>(shape)?;
    if block == 0 {
        return Ok(out);
    }
    let f = |(o, ob): (usize, &mut [T])| scan_block::<T, R>(&x[o * block..(o + 1) * block], ob, len, inner, excl, rev);
    if x.len() >= PAR_MIN && outer > 1 {
        out.par_chunks_mut(block).enumerate().for_each(f);
    } else {
        out.chunks_mut(block).enumerate().for_each(f);
    }
    Ok(out)
}

struct Scan {
    kind: Kind,
    ty: DataType,
    exclusive: bool,
    reverse: bool,
}

impl Scan {
    fn run<T: Num>(&self, ctx: &mut OpContext, x: &Tensor, dims: [usize; 3]) -> Result<(), Status> {
        let xs = x.as_slice::<T>()?;
        let out = match self.kind {
            Kind::Sum => scan::<T, SumR>(xs, x.dims(), dims, self.exclusive, self.reverse)?,
            _ => scan::<T, ProdR>(xs, x.dims(), dims, self.exclusive, self.reverse)?,
        };
        ctx.set_output(0, Tensor::new(x.shape().clone(), out)?)
    }

    fn run_lse<T: Float>(&self, ctx: &mut OpContext, x: &Tensor, dims: [usize; 3]) -> Result<(), Status> {
        let out = scan::<T, LseR>(x.as_slice::<T>()?, x.dims(), dims, self.exclusive, self.reverse)?;
        ctx.set_output(0, Tensor::new(x.shape().clone(), out)?)
    }
}

impl OpKernel for Scan {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = ctx.input(0)?;
        let axis_t = ctx.input(1)?;
        let a = checked_index_scalar(ctx, &axis_t, |t| format!("ScanOp: axis must be a scalar, not {}", t.shape()))?;
        let r = x.rank();
        let axis = norm_axis(a, r).ok_or_else(|| {
            ctx.error(format!("ScanOp: Expected scan axis in the range [{}, {r}), but got {a}", -(r as i64)))
        })?;
        if x.dtype() != self.ty {
            return Err(ctx.error(format!("x is {} but T is {}", x.dtype(), self.ty)));
        }
        let d = x.dims();
        let dims = [product(&d[..axis]), d[axis], product(&d[axis + 1..])];
        if self.kind == Kind::LogSumExp {
            return dispatch!(self.ty, ctx, [f32, f64], |T| self.run_lse::<T>(ctx, &x, dims));
        }
        dispatch!(self.ty, ctx, [f32, f64, i32, i64, u8, i8, i16, u16, u32, u64], |T| self.run::<T>(ctx, &x, dims))
    }
}

fn make(n: &NodeDef, kind: Kind) -> Result<Box<dyn OpKernel>, Status> {
    use DataType::*;
    let allowed: &[DataType] = if kind == Kind::LogSumExp {
        &[Float, Double]
    } else {
        &[Float, Double, Int32, Int64, UInt8, Int8, Int16, UInt16, UInt32, UInt64]
    };
    kernel_dtype(n, "Tidx", &[Int32, Int64])?;
    Ok(Box::new(Scan {
        kind,
        ty: kernel_dtype(n, "T", allowed)?,
        exclusive: n.attr_bool("exclusive")?,
        reverse: n.attr_bool("reverse")?,
    }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("Cumsum", |n| make(n, Kind::Sum));
    r.add("Cumprod", |n| make(n, Kind::Prod));
    r.add("CumulativeLogsumexp", |n| make(n, Kind::LogSumExp));
}
