//! `SparseSegment{Sum,Mean,SqrtN}[WithNumSegments]`: segment reductions of the rows
//! `data[indices[i]]` by sorted `segment_ids` (what `tf.nn.embedding_lookup_sparse` and the
//! embedding feature columns compute), and their gradient ops
//! `SparseSegment{Sum,Mean,SqrtN}Grad` (dense, `output_dim0` rows) and `...GradV2` (the rows
//! of the sorted unique indices only).

use ferroflow_core::{DataType, Shape, Status, Tensor};

use super::elem::SegElem;
use super::segment_reduce::{fill_runs, runs, Reduce};
use crate::array::util::{check_alloc, checked_index_scalar, index_tensor, index_vec, product};
use crate::dispatch::dispatch;
use crate::{KernelRegistry, OpContext};

/// Checks `indices` and `segment_ids`: vectors of one size.
fn ids_pair(ctx: &OpContext, indices: &Tensor, seg: &Tensor) -> Result<(Vec<i64>, Vec<i64>), Status> {
    if indices.rank() != 1 {
        return Err(ctx.error(format!("indices should be a vector, got shape {}", indices.shape())));
    }
    if seg.rank() != 1 {
        return Err(ctx.error(format!("segment_ids should be a vector, got shape {}", seg.shape())));
    }
    if indices.dims()[0] != seg.dims()[0] {
        return Err(ctx.error("segment_ids and indices should have same size."));
    }
    let i = index_vec(indices).map_err(|e| ctx.error(e.message))?;
    let s = index_vec(seg).map_err(|e| ctx.error(e.message))?;
    Ok((i, s))
}

fn reduce_typed<T: SegElem>(
    data: &Tensor,
    indices: &[i64],
    seg: &[i64],
    out_dims: &[usize],
    kind: Reduce,
) -> Result<Tensor, Status> {
    let src = data.as_slice::<T>()?;
    let inner = product(&out_dims[1..]);
    let mut dst = ferroflow_core::alloc::zeroed::<T>(out_dims)?;
    let row = |i: usize| {
        let r = indices[i] as usize;
        &src[r * inner..(r + 1) * inner]
    };
    fill_runs(&mut dst, inner, &runs(seg), indices.len() * inner, |acc, first, end| {
        acc.copy_from_slice(row(first));
        for i in first + 1..end {
            kind.combine(acc, row(i));
        }
        kind.finish(acc, end - first);
    });
    Tensor::new(Shape::new(out_dims.to_vec()), dst)
}

op_kernel! {
    /// `SparseSegment{kind}`, with `num_segments` (input 3) when `with_num`.
    struct SparseSegmentReduce { kind: Reduce, with_num: bool }
    fn compute(&self, ctx) {
        let data = ctx.input(0)?;
        let (indices, seg) = ids_pair(ctx, &ctx.input(1)?, &ctx.input(2)?)?;
        if data.rank() == 0 {
            return Err(ctx.error("data must be at least 1-D, got a scalar"));
        }
        let last = seg.last().copied();
        let rows = if self.with_num {
            let n = checked_index_scalar(ctx, &ctx.input(3)?, |t| {
                format!("num_segments should be a scalar, not shape {}", t.shape())
            })?;
            if last.is_some_and(|l| l >= n) {
                return Err(ctx.error("segment ids must be < num_segments"));
            }
            n
        } else {
            last.map_or(0, |l| l.saturating_add(1))
        };
        if rows < 0 {
            return Err(ctx.error(format!("num_segments must be >= 0, got {rows}")));
        }
        super::segment_reduce::check_sorted_ids(ctx, &seg, rows)?;
        let n0 = data.dims()[0];
        if let Some(k) = indices.iter().position(|&x| x < 0 || x as u64 >= n0 as u64) {
            return Err(ctx.error(format!("Bad: indices[{k}] == {} out of range [0, {n0})", indices[k])));
        }
        let mut out_dims = data.dims().to_vec();
        out_dims[0] = usize::try_from(rows).map_err(|_| ctx.error(format!("too many segments: {rows}")))?;
        check_alloc(&out_dims, data.dtype()).map_err(|e| ctx.error_with(e))?;
        let kind = self.kind;
        let out = if kind == Reduce::Sum {
            dispatch!(data.dtype(), ctx, [f32, f64, i32, i64, u8, i8, i16, u16, u32, u64], |T| reduce_typed::<T>(
                &data, &indices, &seg, &out_dims, kind
            ))?
        } else {
            dispatch!(data.dtype(), ctx, [f32, f64], |T| reduce_typed::<T>(&data, &indices, &seg, &out_dims, kind))?
        };
        ctx.set_output(0, out)
    }
}

/// The weight of each segment's gradient: 1, 1/n or 1/sqrt(n) (n at least 1).
fn weights(kind: Reduce, seg: &[i64], segments: usize) -> Vec<f64> {
    if kind == Reduce::Sum {
        return vec![1.0; segments];
    }
    let mut n = vec![0usize; segments];
    for &s in seg {
        n[s as usize] += 1;
    }
    n.into_iter()
        .map(|c| {
            let c = c.max(1) as f64;
            if kind == Reduce::Mean {
                1.0 / c
            } else {
                1.0 / c.sqrt()
            }
        })
        .collect()
}

/// `dst[slot(i)] += grad[seg[i]] * w[seg[i]]` for every i.
fn scatter_typed<T: SegElem>(
    grad: &Tensor,
    seg: &[i64],
    slots: &[usize],
    w: &[f64],
    out_dims: &[usize],
) -> Result<Tensor, Status> {
    let src = grad.as_slice::<T>()?;
    let inner = product(&out_dims[1..]);
    let mut dst = ferroflow_core::alloc::zeroed::<T>(out_dims)?;
    if inner > 0 {
        for (i, &s) in seg.iter().enumerate() {
            let s = s as usize;
            let wt = T::from_f64(w[s]);
            let d = slots[i] * inner;
            let g = &src[s * inner..(s + 1) * inner];
            dst[d..d + inner].iter_mut().zip(g).for_each(|(o, &v)| *o = o.add(v.mul(wt)));
        }
    }
    Tensor::new(Shape::new(out_dims.to_vec()), dst)
}

op_kernel! {
    /// `SparseSegment{kind}Grad` (V1: dense) or `...GradV2` (the sorted unique rows).
    struct SparseSegmentGrad { kind: Reduce, v2: bool }
    fn compute(&self, ctx) {
        let [grad, idx_t] = ctx.inputs()?;
        let (indices, seg) = ids_pair(ctx, &idx_t, &ctx.input(2)?)?;
        let dim0 = checked_index_scalar(ctx, &ctx.input(3)?, |t| {
            format!("output_dim0 should be a scalar, not shape {}", t.shape())
        })?;
        if dim0 < 0 {
            return Err(ctx.error(format!("output_dim0 must be >= 0, got {dim0}")));
        }
        if grad.rank() == 0 {
            return Err(ctx.error("grad must be at least 1-D, got a scalar"));
        }
        let segments = grad.dims()[0];
        if seg.last().is_some_and(|&l| l < 0 || l as u64 >= segments as u64) {
            return Err(ctx.error("Invalid number of segments"));
        }
        if let Some(&s) = seg.iter().find(|&&s| s < 0 || s as u64 >= segments as u64) {
            return Err(ctx.error(format!("Segment id {s} out of range [0, {segments}).")));
        }
        if let Some(&x) = indices.iter().find(|&&x| x < 0 || x >= dim0) {
            return Err(ctx.error(format!("Index {x} out of range [0, {dim0}).")));
        }
        let mut out_dims = grad.dims().to_vec();
        let (slots, unique) = if self.v2 {
            let mut u = indices.clone();
            u.sort_unstable();
            u.dedup();
            let slots = indices.iter().map(|x| u.binary_search(x).unwrap_or(0)).collect();
            (slots, Some(u))
        } else {
            (indices.iter().map(|&x| x as usize).collect::<Vec<_>>(), None)
        };
        out_dims[0] = unique.as_ref().map_or(dim0 as usize, |u| u.len());
        check_alloc(&out_dims, grad.dtype()).map_err(|e| ctx.error_with(e))?;
        let w = weights(self.kind, &seg, segments);
        let out = dispatch!(grad.dtype(), ctx, [f32, f64], |T| scatter_typed::<T>(&grad, &seg, &slots, &w, &out_dims))?;
        ctx.set_output(0, out)?;
        if let Some(u) = unique {
            let dt = if idx_t.dtype() == DataType::Int64 { DataType::Int64 } else { DataType::Int32 };
            let n = u.len();
            ctx.set_output(1, index_tensor(dt, vec![n], u).map_err(|e| ctx.error_with(e))?)?;
        }
        Ok(())
    }
}

/// The reduction an op's name says: `…Mean…`, `…SqrtN…`, else a sum.
fn kind_of(op: &str) -> Reduce {
    if op.contains("Mean") {
        Reduce::Mean
    } else if op.contains("SqrtN") {
        Reduce::SqrtN
    } else {
        Reduce::Sum
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    for op in ["SparseSegmentSum", "SparseSegmentMean", "SparseSegmentSqrtN"] {
        r.add(op, |n| Ok(Box::new(SparseSegmentReduce { kind: kind_of(&n.op), with_num: false })));
    }
    for op in
        ["SparseSegmentSumWithNumSegments", "SparseSegmentMeanWithNumSegments", "SparseSegmentSqrtNWithNumSegments"]
    {
        r.add(op, |n| Ok(Box::new(SparseSegmentReduce { kind: kind_of(&n.op), with_num: true })));
    }
    for op in ["SparseSegmentSumGrad", "SparseSegmentMeanGrad", "SparseSegmentSqrtNGrad"] {
        r.add(op, |n| Ok(Box::new(SparseSegmentGrad { kind: kind_of(&n.op), v2: false })));
    }
    for op in ["SparseSegmentSumGradV2", "SparseSegmentMeanGradV2", "SparseSegmentSqrtNGradV2"] {
        r.add(op, |n| Ok(Box::new(SparseSegmentGrad { kind: kind_of(&n.op), v2: true })));
    }
}
