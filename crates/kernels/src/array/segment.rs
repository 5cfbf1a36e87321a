//! UnsortedSegmentSum and DynamicStitch (and ParallelDynamicStitch): scatter rows by index.

use ferroflow_core::{Shape, Status, Tensor, TensorType};

use super::gather::multi_index;
use super::util::{check_alloc, check_node_alloc, index_scalar, index_vec, product, FnKernel};
use crate::dispatch::dispatch;
use crate::{KernelRegistry, OpContext};

/// Addition with TensorFlow's integer wrap-around.
pub trait SegAdd: Copy {
    /// `self + o`.
    fn add(self, o: Self) -> Self;
}
macro_rules! seg_add {
    (float: $($t:ty),*) => {$(impl SegAdd for $t { fn add(self, o: Self) -> Self { self + o } })*};
    (int: $($t:ty),*) => {$(impl SegAdd for $t { fn add(self, o: Self) -> Self { self.wrapping_add(o) } })*};
}
seg_add!(float: f32, f64);
seg_add!(int: i32, i64, u8);

fn segment_sum_typed<T: TensorType + SegAdd>(
    data: &Tensor,
    ids: &[i64],
    num: usize,
    out_dims: &[usize],
) -> Result<Tensor, Status> {
    let src = data.as_slice::<T>()?;
    let inner = product(&out_dims[1..]);
    let mut out = Tensor::zeros(T::DTYPE, Shape::new(out_dims.to_vec()))?;
    let dst = out.data_mut::<T>()?;
    for (i, &id) in ids.iter().enumerate() {
        if id < 0 {
            continue;
        }
        let (d, s) = (id as usize * inner, i * inner);
        debug_assert!((id as usize) < num);
        for (o, &v) in dst[d..d + inner].iter_mut().zip(&src[s..s + inner]) {
            *o = o.add(v);
        }
    }
    Ok(out)
}

/// Whether `data`'s shape starts with `ids`' shape.
fn shape_starts_with(data: &Tensor, ids: &Tensor) -> bool {
    data.rank() >= ids.rank() && data.dims()[..ids.rank()] == *ids.dims()
}

/// The inputs of an `UnsortedSegment*` op checked as TensorFlow checks them: `data`, its
/// `segment_ids` (negative ones are dropped by the reductions) and the output dims
/// `[num_segments] + data.shape[ids.rank..]`, whose allocation is checked.
pub(crate) fn unsorted_segment_args(ctx: &mut OpContext) -> Result<(Tensor, Vec<i64>, Vec<usize>), Status> {
    let data = ctx.input(0)?;
    let ids_t = ctx.input(1)?;
    let num_t = ctx.input(2)?;
    if num_t.rank() != 0 {
        return Err(ctx.error(format!("num_segments should be a scalar, not shape {}", num_t.shape())));
    }
    let r = ids_t.rank();
    if !shape_starts_with(&data, &ids_t) {
        return Err(ctx.error(format!(
            "data.shape = {} does not start with segment_ids.shape = {}",
            data.shape(),
            ids_t.shape()
        )));
    }
    let num = index_scalar(&num_t).map_err(|e| ctx.error(e.message))?;
    if num < 0 {
        return Err(ctx.error(format!("Input num_segments == {num} must not be negative.")));
    }
    let ids = index_vec(&ids_t).map_err(|e| ctx.error(e.message))?;
    if let Some(k) = ids.iter().position(|&v| v >= num) {
        return Err(ctx.error(format!(
            "segment_ids[{}] = {} is out of range [0, {num})",
            multi_index(k, ids_t.dims()),
            ids[k]
        )));
    }
    let mut out_dims = vec![usize::try_from(num).map_err(|_| ctx.error(format!("too many segments: {num}")))?];
    out_dims.extend_from_slice(&data.dims()[r..]);
    check_alloc(&out_dims, data.dtype()).map_err(|e| ctx.error_with(e))?;
    Ok((data, ids, out_dims))
}

fn unsorted_segment_sum(ctx: &mut OpContext) -> Result<(), Status> {
    let (data, ids, out_dims) = unsorted_segment_args(ctx)?;
    let out = dispatch!(data.dtype(), ctx, [f32, f64, i32, i64, u8], |T| segment_sum_typed::<T>(
        &data,
        &ids,
        out_dims[0],
        &out_dims
    ))?;
    ctx.set_output(0, out)
}

fn stitch_typed<T: TensorType>(data: &[Tensor], idx: &[Vec<i64>], out_dims: &[usize]) -> Result<Tensor, Status> {
    let inner = product(&out_dims[1..]);
    let mut out = Tensor::zeros(T::DTYPE, Shape::new(out_dims.to_vec()))?;
    let dst = out.data_mut::<T>()?;
    for (d, ix) in data.iter().zip(idx) {
        let src = d.as_slice::<T>()?;
        for (i, &k) in ix.iter().enumerate() {
            let k = k as usize;
            dst[k * inner..(k + 1) * inner].clone_from_slice(&src[i * inner..(i + 1) * inner]);
        }
    }
    Ok(out)
}

fn dynamic_stitch(ctx: &mut OpContext) -> Result<(), Status> {
    let n = ctx.num_inputs() / 2;
    let indices: Vec<Tensor> = (0..n).map(|i| ctx.input(i)).collect::<Result<_, _>>()?;
    let data: Vec<Tensor> = (n..2 * n).map(|i| ctx.input(i)).collect::<Result<_, _>>()?;
    let (r0, d0) = (indices[0].rank(), &data[0]);
    if !shape_starts_with(d0, &indices[0]) {
        return Err(ctx.error(format!(
            "data[0].shape = {} does not start with indices[0].shape = {}",
            d0.shape(),
            indices[0].shape()
        )));
    }
    let tail = &d0.dims()[r0..];
    let mut idx = Vec::with_capacity(n);
    let mut max = -1i64;
    for i in 0..n {
        let (ix, d) = (&indices[i], &data[i]);
        let r = ix.rank();
        if !shape_starts_with(d, ix) {
            return Err(ctx.error(format!(
                "data[{i}].shape = {} does not start with indices[{i}].shape = {}",
                d.shape(),
                ix.shape()
            )));
        }
        if d.dims()[r..] != *tail {
            return Err(ctx.error(format!(
                "Need data[0].shape[{r0}:] = data[{i}].shape[{r}:], got data[0].shape = {}, data[{i}].shape = {}, \
                 indices[0].shape = {}, indices[{i}].shape = {}",
                d0.shape(),
                d.shape(),
                indices[0].shape(),
                ix.shape()
            )));
        }
        if d.dtype() != d0.dtype() {
            return Err(ctx.error(format!("data[{i}] is {} but data[0] is {}", d.dtype(), d0.dtype())));
        }
        let v = index_vec(ix).map_err(|e| ctx.error(e.message))?;
        max = v.iter().copied().fold(max, i64::max);
        idx.push(v);
    }
    // Indices are int32 in TensorFlow: it refuses an output of more than 2^31-1 rows.
    if max >= i32::MAX as i64 {
        return Err(ctx.error(format!(
            "the largest index is {max}, so the output would have {} rows; at most {} are possible",
            max + 1,
            i32::MAX
        )));
    }
    let first = (max + 1) as usize;
    for v in &idx {
        if let Some(k) = v.iter().position(|&x| x < 0 || x as usize >= first) {
            return Err(ctx.error(format!("indices[{k}] is out of range")));
        }
    }
    let mut out_dims = vec![first];
    out_dims.extend_from_slice(tail);
    check_node_alloc(ctx, &out_dims, d0.dtype())?;
    let out = ferroflow_core::with_dtype!(d0.dtype(), T => stitch_typed::<T>(&data, &idx, &out_dims))?;
    ctx.set_output(0, out)
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("UnsortedSegmentSum", |_| Ok(FnKernel::expensive(unsorted_segment_sum)));
    r.add("DynamicStitch", |_| Ok(FnKernel::expensive(dynamic_stitch)));
    // The same result when indices do not repeat (TensorFlow leaves the winner of a
    // repeated index unspecified there; here the last one wins, as in DynamicStitch).
    r.add("ParallelDynamicStitch", |_| Ok(FnKernel::expensive(dynamic_stitch)));
}
