//! `Segment{Sum,Mean,Max,Min,Prod}` (ids sorted, one output row per id up to the last; the
//! rows of ids that do not occur are 0, or 1 for the product) and
//! `UnsortedSegment{Max,Min,Prod}` (`num_segments` rows, negative ids dropped, empty
//! segments the reduction's identity: lowest, highest, 1).

use ferroflow_core::{Shape, Status, Tensor};
use rayon::prelude::*;

use super::elem::SegElem;
use crate::array::util::{check_alloc, index_vec, product, PAR_THRESHOLD};
use crate::dispatch::dispatch;
use crate::{KernelRegistry, OpContext};

/// The reduction of a segment's rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reduce {
    Sum,
    Mean,
    SqrtN,
    Max,
    Min,
    Prod,
}

impl Reduce {
    /// The value of an output row no input row reaches.
    #[inline(always)]
    fn identity<T: SegElem>(self) -> T {
        match self {
            Reduce::Sum | Reduce::Mean | Reduce::SqrtN => T::ZERO,
            Reduce::Prod => T::ONE,
            Reduce::Max => T::LOWEST,
            Reduce::Min => T::HIGHEST,
        }
    }

    /// `acc[k] = acc[k] (op) row[k]`: one contiguous loop per kind, so it vectorizes.
    #[inline(always)]
    pub(crate) fn combine<T: SegElem>(self, acc: &mut [T], row: &[T]) {
        match self {
            Reduce::Sum | Reduce::Mean | Reduce::SqrtN => acc.iter_mut().zip(row).for_each(|(a, &v)| *a = a.add(v)),
            Reduce::Prod => acc.iter_mut().zip(row).for_each(|(a, &v)| *a = a.mul(v)),
            Reduce::Max => acc.iter_mut().zip(row).for_each(|(a, &v)| *a = a.max_of(v)),
            Reduce::Min => acc.iter_mut().zip(row).for_each(|(a, &v)| *a = a.min_of(v)),
        }
    }

    /// Divides a reduced row of `n` input rows for the mean and the sqrt-n reductions.
    #[inline(always)]
    pub(crate) fn finish<T: SegElem>(self, acc: &mut [T], n: usize) {
        match self {
            Reduce::Mean if n > 1 => acc.iter_mut().for_each(|a| *a = a.div_count(n)),
            Reduce::SqrtN if n > 1 => acc.iter_mut().for_each(|a| *a = a.div_sqrt_count(n)),
            _ => {}
        }
    }
}

/// The runs of equal ids of a checked, sorted id vector: `(id, first, end)`.
pub(crate) fn runs(ids: &[i64]) -> Vec<(usize, usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let mut j = i + 1;
        while j < ids.len() && ids[j] == ids[i] {
            j += 1;
        }
        out.push((ids[i] as usize, i, j));
        i = j;
    }
    out
}

/// Calls `f(row, first, end)` for each run `(id, first, end)` with `row` the id's output row
/// of `dst` (`inner` elements each); in parallel when `work` (elements read) is large, each
/// run writing only its own row.
pub(crate) fn fill_runs<T: Send>(
    dst: &mut [T],
    inner: usize,
    runs: &[(usize, usize, usize)],
    work: usize,
    f: impl Fn(&mut [T], usize, usize) + Sync,
) {
    if inner == 0 {
        return;
    }
    if work >= PAR_THRESHOLD && runs.len() > 1 {
        let mut slots: Vec<(&mut [T], usize, usize)> = Vec::with_capacity(runs.len());
        let mut rest: &mut [T] = dst;
        let mut at = 0;
        for &(id, first, end) in runs {
            let (_, tail) = std::mem::take(&mut rest).split_at_mut((id - at) * inner);
            let (row, tail) = tail.split_at_mut(inner);
            slots.push((row, first, end));
            rest = tail;
            at = id + 1;
        }
        slots.into_par_iter().for_each(|(row, first, end)| f(row, first, end));
    } else {
        for &(id, first, end) in runs {
            f(&mut dst[id * inner..(id + 1) * inner], first, end);
        }
    }
}

/// The sorted reduction: each run of ids reduces its rows into the id's output row; the rows
/// of ids absent stay 0 (1 for the product), as TensorFlow's CPU kernel leaves them.
fn sorted_typed<T: SegElem>(data: &Tensor, ids: &[i64], rows: usize, kind: Reduce) -> Result<Tensor, Status> {
    let src = data.as_slice::<T>()?;
    let inner = product(&data.dims()[1..]);
    let mut out_dims = data.dims().to_vec();
    out_dims[0] = rows;
    let gap = if kind == Reduce::Prod { T::ONE } else { T::ZERO };
    let mut dst = ferroflow_core::alloc::filled(&out_dims, gap)?;
    let reduce_run = |acc: &mut [T], first: usize, end: usize| {
        acc.copy_from_slice(&src[first * inner..(first + 1) * inner]);
        for r in first + 1..end {
            kind.combine(acc, &src[r * inner..(r + 1) * inner]);
        }
        kind.finish(acc, end - first);
    };
    fill_runs(&mut dst, inner, &runs(ids), src.len(), reduce_run);
    Tensor::new(Shape::new(out_dims), dst)
}

/// Checks sorted segment ids in TensorFlow's order: segment by segment, first that the next
/// segment's id is larger, then that this segment's id is in `[0, rows)`.
pub(super) fn check_sorted_ids(ctx: &OpContext, ids: &[i64], rows: i64) -> Result<(), Status> {
    let mut k = 0;
    while k < ids.len() {
        let s = ids[k];
        let end = ids[k..].iter().position(|&x| x != s).map_or(ids.len(), |p| k + p);
        if end < ids.len() && ids[end] < s {
            return Err(ctx.error("segment ids are not increasing"));
        }
        if s < 0 || s >= rows {
            return Err(ctx.error(format!(
                "Segment id {s} out of range [0, {rows}), possibly because 'segment_ids' input is not sorted."
            )));
        }
        k = end;
    }
    Ok(())
}

fn segment_reduce(ctx: &mut OpContext, kind: Reduce) -> Result<(), Status> {
    let data = ctx.input(0)?;
    let ids_t = ctx.input(1)?;
    if ids_t.rank() != 1 {
        return Err(ctx.error("segment_ids should be a vector."));
    }
    if data.rank() == 0 || data.dims()[0] != ids_t.dims()[0] {
        return Err(ctx.error("segment_ids should be the same size as dimension 0 of input."));
    }
    let ids = index_vec(&ids_t).map_err(|e| ctx.error(e.message))?;
    let rows = ids.last().map_or(0, |&l| l.saturating_add(1));
    check_sorted_ids(ctx, &ids, rows)?;
    let mut out_dims = data.dims().to_vec();
    out_dims[0] = usize::try_from(rows).map_err(|_| ctx.error(format!("too many segments: {rows}")))?;
    check_alloc(&out_dims, data.dtype()).map_err(|e| ctx.error_with(e))?;
    let out = dispatch!(data.dtype(), ctx, [f32, f64, i32, i64, u8, i8, i16, u16, u32, u64], |T| sorted_typed::<T>(
        &data,
        &ids,
        rows as usize,
        kind
    ))?;
    ctx.set_output(0, out)
}

/// The unsorted reduction: every output row starts at the identity, rows with a negative id
/// are dropped.
fn unsorted_typed<T: SegElem>(data: &Tensor, ids: &[i64], out_dims: &[usize], kind: Reduce) -> Result<Tensor, Status> {
    let src = data.as_slice::<T>()?;
    let inner = product(&out_dims[1..]);
    let mut dst = ferroflow_core::alloc::filled(out_dims, kind.identity::<T>())?;
    if inner > 0 {
        for (i, &id) in ids.iter().enumerate() {
            if id >= 0 {
                let d = id as usize * inner;
                kind.combine(&mut dst[d..d + inner], &src[i * inner..(i + 1) * inner]);
            }
        }
    }
    Tensor::new(Shape::new(out_dims.to_vec()), dst)
}

fn unsorted_segment_reduce(ctx: &mut OpContext, kind: Reduce) -> Result<(), Status> {
    let (data, ids, out_dims) = crate::array::unsorted_segment_args(ctx)?;
    let out = dispatch!(data.dtype(), ctx, [f32, f64, i32, i64, u8, i8, i16, u16, u32, u64], |T| unsorted_typed::<T>(
        &data, &ids, &out_dims, kind
    ))?;
    ctx.set_output(0, out)
}

op_kernel! {
    /// A segment reduction kernel: sorted (`Segment*`) or not (`UnsortedSegment*`).
    struct SegmentReduce { kind: Reduce, sorted: bool }
    fn compute(&self, ctx) {
        if self.sorted {
            segment_reduce(ctx, self.kind)
        } else {
            unsorted_segment_reduce(ctx, self.kind)
        }
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("SegmentSum", |_| Ok(Box::new(SegmentReduce { kind: Reduce::Sum, sorted: true })));
    r.add("SegmentMean", |_| Ok(Box::new(SegmentReduce { kind: Reduce::Mean, sorted: true })));
    r.add("SegmentMax", |_| Ok(Box::new(SegmentReduce { kind: Reduce::Max, sorted: true })));
    r.add("SegmentMin", |_| Ok(Box::new(SegmentReduce { kind: Reduce::Min, sorted: true })));
    r.add("SegmentProd", |_| Ok(Box::new(SegmentReduce { kind: Reduce::Prod, sorted: true })));
    r.add("UnsortedSegmentMax", |_| Ok(Box::new(SegmentReduce { kind: Reduce::Max, sorted: false })));
    r.add("UnsortedSegmentMin", |_| Ok(Box::new(SegmentReduce { kind: Reduce::Min, sorted: false })));
    r.add("UnsortedSegmentProd", |_| Ok(Box::new(SegmentReduce { kind: Reduce::Prod, sorted: false })));
}
