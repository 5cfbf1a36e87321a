//! TopKV2: the `k` largest entries of each last-dimension row, largest first, ties by the
//! lower index (TensorFlow's order), with their int16/int32/int64 indices.

use std::cmp::Ordering;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};
use rayon::prelude::*;

use super::util::{kernel_dtype, PAR_MIN};
use crate::array::util::{check_alloc, collect_vec, index_scalar, product};
use crate::dispatch::dispatch;
use crate::math::elem::Num;
use crate::{KernelRegistry, OpContext, OpKernel};

struct TopK {
    ty: DataType,
    index_type: DataType,
}

/// Larger values first; equal values (and unordered pairs) by lower index.
#[inline]
fn before<T: Num>(row: &[T], a: u32, b: u32) -> Ordering {
    match row[b as usize].partial_cmp(&row[a as usize]) {
        Some(Ordering::Equal) | None => a.cmp(&b),
        Some(o) => o,
    }
}

/// Writes the top `k` of `row` into `vals`/`idx`, using `scratch` for the candidate indices.
fn top_row<T: Num>(row: &[T], k: usize, scratch: &mut Vec<u32>, vals: &mut [T], idx: &mut [i64]) {
    let n = row.len();
    if k == 1 {
        let mut best = 0usize;
        for (j, v) in row.iter().enumerate().skip(1) {
            if *v > row[best] {
                best = j;
            }
        }
        vals[0] = row[best];
        idx[0] = best as i64;
        return;
    }
    scratch.clear();
    scratch.extend(0..n as u32);
    if k < n {
        scratch.select_nth_unstable_by(k - 1, |&a, &b| before(row, a, b));
    }
    let top = &mut scratch[..k];
    top.sort_unstable_by(|&a, &b| before(row, a, b));
    for (j, &i) in top.iter().enumerate() {
        vals[j] = row[i as usize];
        idx[j] = i as i64;
    }
}

impl TopK {
    fn run<T: Num>(&self, ctx: &mut OpContext, x: &Tensor, k: usize) -> Result<(), Status> {
        let n = *x.dims().last().unwrap_or(&0);
        let rows = product(&x.dims()[..x.rank() - 1]);
        let xs = x.as_slice::<T>()?;
        let mut dims = x.dims().to_vec();
        if let Some(last) = dims.last_mut() {
            *last = k;
        }
        let mut vals = ferroflow_core::alloc::zeroed::<T>(&dims)?;
        let mut idx = ferroflow_core::alloc::zeroed::<i64>(&dims)?;
        if k > 0 {
            let per_chunk =
                if rows * n >= PAR_MIN { rows.div_ceil(4 * rayon::current_num_threads().max(1)) } else { rows };
            let per_chunk = per_chunk.max(1);
            vals.par_chunks_mut(per_chunk * k).zip(idx.par_chunks_mut(per_chunk * k)).enumerate().for_each(
                |(c, (vc, ic))| {
                    let mut scratch = Vec::with_capacity(n);
                    for (r, (vr, ir)) in vc.chunks_mut(k).zip(ic.chunks_mut(k)).enumerate() {
                        let row = (c * per_chunk + r) * n;
                        top_row(&xs[row..row + n], k, &mut scratch, vr, ir);
                    }
                },
            );
        }
        let indices = match self.index_type {
            DataType::Int16 => Tensor::new(dims.clone(), collect_vec(&dims, idx.iter().map(|&i| i as i16))?)?,
            DataType::Int32 => Tensor::new(dims.clone(), collect_vec(&dims, idx.iter().map(|&i| i as i32))?)?,
            _ => Tensor::new(dims.clone(), idx)?,
        };
        ctx.set_output(0, Tensor::new(dims, vals)?)?;
        ctx.set_output(1, indices)
    }
}

impl OpKernel for TopK {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = ctx.input(0)?;
        let k_t = ctx.input(1)?;
        if k_t.rank() != 0 {
            return Err(ctx.error(format!("k must be 0-D, got shape {}", k_t.shape())));
        }
        let k = match k_t.dtype() {
            DataType::Int16 => k_t.as_slice::<i16>()?[0] as i64,
            _ => index_scalar(&k_t).map_err(|e| ctx.error(e.message))?,
        };
        if k < 0 {
            return Err(ctx.error(format!("Need k >= 0, got {k}")));
        }
        if x.rank() < 1 {
            return Err(ctx.error(format!("input must be at least 1-D, got shape {}", x.shape())));
        }
        let n = x.dims()[x.rank() - 1];
        if (n as i64) < k {
            return Err(ctx.error(format!("input must have at least k columns. Had {n}, needed {k}")));
        }
        if self.index_type == DataType::Int16 && n > i16::MAX as usize + 1 {
            return Err(ctx.error(format!("last dimension {n} does not fit index_type int16")));
        }
        if x.dtype() != self.ty {
            return Err(ctx.error(format!("input is {} but T is {}", x.dtype(), self.ty)));
        }
        let k = k as usize;
        let mut od = x.dims().to_vec();
        od[x.rank() - 1] = k;
        check_alloc(&od, DataType::Int64).map_err(|e| ctx.error_with(e))?;
        dispatch!(self.ty, ctx, [f32, f64, i32, i64, u8, i8, i16, u16, u32, u64], |T| self.run::<T>(ctx, &x, k))
    }
}

fn make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    use DataType::*;
    kernel_dtype(n, "Tk", &[Int16, Int32, Int64])?;
    let ty = kernel_dtype(n, "T", &[Float, Double, Int32, Int64, UInt8, Int8, Int16, UInt16, UInt32, UInt64])?;
    let _ = n.attr_bool("sorted")?;
    Ok(Box::new(TopK { ty, index_type: kernel_dtype(n, "index_type", &[Int16, Int32, Int64])? }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("TopKV2", make);
}
