//! ArgMax / ArgMin along one axis (`dimension`: a scalar int32/int64), as `output_type`
//! (int32 or int64). Ties give the first index; NaN never wins (Eigen's reducer starting at
//! `lowest()` / `highest()` with strict comparisons).

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, Shape, Status, Tensor, TensorType};
use rayon::prelude::*;

use super::bcast::{chunk_len, PAR_THRESHOLD};
use super::common::{kernel_type, typed};
use crate::array::util::collect_vec;
use crate::dispatch::dispatch;
use crate::{KernelRegistry, OpContext, OpKernel};

/// Elements ArgMax/ArgMin accept.
trait ArgElem: TensorType + Copy + PartialOrd + Send + Sync {
    const LOWEST: Self;
    const HIGHEST: Self;
}
macro_rules! arg_elem {
    ($($t:ty: $lo:expr, $hi:expr);*) => {$(
        impl ArgElem for $t {
            const LOWEST: Self = $lo;
            const HIGHEST: Self = $hi;
        }
    )*};
}
arg_elem!(f32: f32::MIN, f32::MAX; f64: f64::MIN, f64::MAX; i32: i32::MIN, i32::MAX; i64: i64::MIN, i64::MAX;
    u8: 0, u8::MAX; bool: false, true);

const ARG_TYPES: &[DataType] =
    &[DataType::Float, DataType::Double, DataType::Int32, DataType::Int64, DataType::UInt8, DataType::Bool];

struct Arg {
    max: bool,
    ty: DataType,
    out: DataType,
}

/// Index of the best element of `[outer, r, inner]` along `r`, into `out` (`outer * inner`).
fn arg_block<T: ArgElem>(x: &[T], r: usize, inner: usize, out: &mut [i64], max: bool) {
    let better = |a: T, b: T| if max { a > b } else { a < b };
    let start = if max { T::LOWEST } else { T::HIGHEST };
    let block = r * inner;
    if inner == 1 {
        for (o, row) in out.iter_mut().zip(x.chunks_exact(block)) {
            let (mut best, mut idx) = (start, 0usize);
            for (i, &v) in row.iter().enumerate() {
                if better(v, best) {
                    best = v;
                    idx = i;
                }
            }
            *o = idx as i64;
        }
        return;
    }
    let mut best = vec![start; inner];
    for (o, xb) in out.chunks_exact_mut(inner).zip(x.chunks_exact(block)) {
        best.fill(start);
        o.fill(0);
        for (i, row) in xb.chunks_exact(inner).enumerate() {
            for ((b, oi), &v) in best.iter_mut().zip(o.iter_mut()).zip(row) {
                if better(v, *b) {
                    *b = v;
                    *oi = i as i64;
                }
            }
        }
    }
}

fn compute_arg<T: ArgElem>(ctx: &mut OpContext, k: &Arg) -> Result<(), Status> {
    let x = ctx.input(0)?;
    let d = ctx.input(1)?;
    if d.rank() != 0 {
        return Err(ctx.error(format!("dim must be a scalar, but received tensor of shape: {}", d.shape())));
    }
    let dim = match d.dtype() {
        DataType::Int32 => typed::<i32>(ctx, &d)?[0] as i64,
        DataType::Int64 => typed::<i64>(ctx, &d)?[0],
        t => return Err(ctx.error(format!("dimension must be int32 or int64, got {t}"))),
    };
    let rank = x.rank() as i64;
    if dim < -rank || dim >= rank {
        return Err(ctx.error(format!("Expected dimension in the range [{}, {rank}), but got {dim}", -rank)));
    }
    let axis = if dim < 0 { dim + rank } else { dim } as usize;
    let dims = x.dims();
    let r = dims[axis];
    if r == 0 {
        return Err(ctx.error(format!("Reduction axis {axis} is empty in shape {}", x.shape())));
    }
    let outer: usize = dims[..axis].iter().product();
    let inner: usize = dims[axis + 1..].iter().product();
    let xs = typed::<T>(ctx, &x)?;
    let mut out = ferroflow_core::alloc::zeroed::<i64>(&[outer, inner])?;
    if xs.len() > PAR_THRESHOLD && outer >= 2 && inner > 0 {
        let per = (chunk_len(xs.len()) / (r * inner)).max(1);
        out.par_chunks_mut(per * inner)
            .zip(xs.par_chunks(per * r * inner))
            .for_each(|(o, xb)| arg_block(xb, r, inner, o, k.max));
    } else if xs.len() > PAR_THRESHOLD && inner >= 2 {
        // One outer block: split the columns (each column keeps its own running best).
        let w = chunk_len(inner).min(inner);
        out.par_chunks_mut(w).enumerate().for_each(|(c, o)| {
            let cols: Vec<T> =
                xs.chunks_exact(inner).flat_map(|row| row[c * w..c * w + o.len()].iter().copied()).collect();
            arg_block(&cols, r, o.len(), o, k.max);
        });
    } else if inner > 0 {
        arg_block(xs, r, inner, &mut out, k.max);
    }
    let shape = Shape::new(dims.iter().enumerate().filter(|&(i, _)| i != axis).map(|(_, &d)| d).collect::<Vec<_>>());
    let t = match k.out {
        DataType::Int32 => {
            let narrow = collect_vec(shape.dims(), out.into_iter().map(|v| v as i32))?;
            Tensor::new(shape, narrow)?
        }
        _ => Tensor::new(shape, out)?,
    };
    ctx.set_output(0, t)
}

impl OpKernel for Arg {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        dispatch!(self.ty, ctx, [f32, f64, i32, i64, u8, bool], |T| compute_arg::<T>(ctx, self))
    }
}

fn make(n: &NodeDef, max: bool) -> Result<Box<dyn OpKernel>, Status> {
    kernel_type(n, "Tidx", &[DataType::Int32, DataType::Int64])?;
    Ok(Box::new(Arg {
        max,
        ty: kernel_type(n, "T", ARG_TYPES)?,
        out: kernel_type(n, "output_type", &[DataType::Int32, DataType::Int64])?,
    }))
}

/// Registers ArgMax and ArgMin.
pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("ArgMax", |n| make(n, true));
    r.add("ArgMin", |n| make(n, false));
}
