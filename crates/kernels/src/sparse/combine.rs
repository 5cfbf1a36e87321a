//! `SparseConcat` (along `concat_dim`, output in row-major order), `SparseSlice` (the
//! entries inside `[start, start + size)`, shifted) and `SparseAdd` (merging two sorted
//! sparse tensors; summed entries below `thresh` in magnitude are dropped).
// The loops walk several parallel arrays by one index.
#![allow(clippy::needless_range_loop, clippy::unnecessary_cast)]

use ferroflow_core::{DataType, NodeAttrs, Shape, Status, Tensor, TensorType};

use super::elem::SegElem;
use super::util::{check_values, indices_matrix, shape_vector, sparse_input, Indices};
use crate::array::util::{check_alloc, collect_vec};
use crate::dispatch::dispatch;
use crate::KernelRegistry;

/// The values of `parts` at the entries `(part, entry)` listed.
fn pick<T: TensorType + Clone>(parts: &[Tensor], order: &[(usize, usize)]) -> Result<Tensor, Status> {
    let slices = parts.iter().map(|p| p.as_slice::<T>()).collect::<Result<Vec<_>, _>>()?;
    let out = collect_vec(&[order.len()], order.iter().map(|&(p, e)| slices[p][e].clone()))?;
    Tensor::new(Shape::new(vec![out.len()]), out)
}

fn matrix(rows: Vec<Vec<i64>>, rank: usize) -> Result<Tensor, Status> {
    let n = rows.len();
    Tensor::new(Shape::new(vec![n, rank]), rows.concat())
}

op_kernel! {
    struct SparseConcat { dim: i64 }
    fn compute(&self, ctx) {
        let n = ctx.num_inputs() / 3;
        if n < 2 {
            return Err(ctx.error(format!("Must have at least 2 inputs, got {n}")));
        }
        let mut idx: Vec<Indices> = Vec::with_capacity(n);
        let mut vals = Vec::with_capacity(n);
        let mut shapes = Vec::with_capacity(n);
        for i in 0..n {
            let m = indices_matrix(ctx, &format!("indices[{i}]"), &ctx.input(i)?)?;
            let v = ctx.input(n + i)?;
            check_values(ctx, &format!("values[{i}]"), &v, m.n)?;
            let sh = shape_vector(ctx, &format!("shapes[{i}]"), &ctx.input(2 * n + i)?)?;
            if sh.len() != m.rank {
                return Err(ctx.error(format!(
                    "indices[{i}] has {} columns but shapes[{i}] has {} dims",
                    m.rank,
                    sh.len()
                )));
            }
            idx.push(m);
            vals.push(v);
            shapes.push(sh);
        }
        let rank = shapes[0].len() as i64;
        let d = if self.dim < 0 { self.dim + rank } else { self.dim };
        if d < 0 || d >= rank {
            return Err(ctx.error(format!("Concat dimension must be in range [{}, {rank}), got {}", -rank, self.dim)));
        }
        let d = d as usize;
        let mut out_shape = shapes[0].clone();
        for i in 1..n {
            let same = shapes[i].len() == shapes[0].len()
                && shapes[i].iter().zip(&shapes[0]).enumerate().all(|(k, (a, b))| k == d || a == b);
            if !same || vals[i].dtype() != vals[0].dtype() {
                return Err(ctx.error(format!(
                    "Input shapes must match: expected {:?} for dimensions other than {d} but got {:?} for input {i}",
                    shapes[0], shapes[i]
                )));
            }
            out_shape[d] += shapes[i][d];
        }
        let mut rows: Vec<(Vec<i64>, (usize, usize))> = Vec::new();
        let mut offset = 0;
        for (p, m) in idx.iter().enumerate() {
            for e in 0..m.n {
                let mut r = m.row(e).to_vec();
                r[d] += offset;
                rows.push((r, (p, e)));
            }
            offset += shapes[p][d];
        }
        if d != 0 {
            rows.sort_by(|a, b| a.0.cmp(&b.0));
        }
        let order: Vec<(usize, usize)> = rows.iter().map(|r| r.1).collect();
        let out_vals = ferroflow_core::with_dtype!(vals[0].dtype(), T => pick::<T>(&vals, &order))?;
        ctx.set_output(0, matrix(rows.into_iter().map(|r| r.0).collect(), rank as usize)?)?;
        ctx.set_output(1, out_vals)?;
        ctx.set_output(2, Tensor::new(Shape::new(vec![rank as usize]), out_shape)?)
    }
}

op_kernel! {
    struct SparseSlice;
    fn compute(&self, ctx) {
        let (m, vals, shape) = sparse_input(ctx, 0, ["indices", "values", "shape"])?;
        let start = shape_vector(ctx, "start", &ctx.input(3)?)?;
        let size = shape_vector(ctx, "size", &ctx.input(4)?)?;
        let r = shape.len();
        if m.rank != r || start.len() != r || size.len() != r {
            return Err(ctx.error(format!(
                "Expected indices, start and size to have {r} dims (the length of shape), got {}, {} and {}",
                m.rank,
                start.len(),
                size.len()
            )));
        }
        let out_shape: Vec<i64> =
            (0..r).map(|k| (start[k].saturating_add(size[k]).min(shape[k]).saturating_sub(start[k])).max(0)).collect();
        let mut rows = Vec::new();
        let mut order = Vec::new();
        for e in 0..m.n {
            let row = m.row(e);
            if (0..r).all(|k| row[k] >= start[k] && row[k] < start[k].saturating_add(size[k])) {
                rows.push(row.iter().zip(&start).map(|(x, s)| x - s).collect::<Vec<i64>>());
                order.push((0usize, e));
            }
        }
        let out_vals = ferroflow_core::with_dtype!(vals.dtype(), T => pick::<T>(std::slice::from_ref(&vals), &order))?;
        ctx.set_output(0, matrix(rows, r)?)?;
        ctx.set_output(1, out_vals)?;
        ctx.set_output(2, Tensor::new(Shape::new(vec![r]), out_shape)?)
    }
}

/// Merges two row-major sparse tensors: `(indices, values)`.
fn add_typed<T: SegElem>(
    a: (&Indices, &Tensor),
    b: (&Indices, &Tensor),
    thresh: f64,
    to_f64: fn(T) -> f64,
) -> Result<(Vec<i64>, Tensor), Status> {
    let (av, bv) = (a.1.as_slice::<T>()?, b.1.as_slice::<T>()?);
    let (ai, bi) = (a.0, b.0);
    let mut idx = ferroflow_core::alloc::with_capacity::<i64>(&[ai.n + bi.n, ai.rank])?;
    let mut out = ferroflow_core::alloc::with_capacity::<T>(&[av.len() + bv.len()])?;
    let (mut i, mut j) = (0, 0);
    while i < ai.n && j < bi.n {
        match ai.row(i).cmp(bi.row(j)) {
            std::cmp::Ordering::Less => {
                idx.extend_from_slice(ai.row(i));
                out.push(av[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                idx.extend_from_slice(bi.row(j));
                out.push(bv[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                let s = av[i].add(bv[j]);
                if to_f64(s).abs() >= thresh {
                    idx.extend_from_slice(ai.row(i));
                    out.push(s);
                }
                i += 1;
                j += 1;
            }
        }
    }
    for k in i..ai.n {
        idx.extend_from_slice(ai.row(k));
        out.push(av[k]);
    }
    for k in j..bi.n {
        idx.extend_from_slice(bi.row(k));
        out.push(bv[k]);
    }
    let n = out.len();
    Ok((idx, Tensor::new(Shape::new(vec![n]), out)?))
}

op_kernel! {
    struct SparseAdd;
    fn compute(&self, ctx) {
        let (ai, av, ashape) = sparse_input(ctx, 0, ["a_indices", "a_values", "a_shape"])?;
        let (bi, bv, bshape) = sparse_input(ctx, 3, ["b_indices", "b_values", "b_shape"])?;
        let th = ctx.input(6)?;
        if ashape != bshape {
            return Err(ctx.error(format!("Operands' shapes do not match: got {ashape:?} and {bshape:?}")));
        }
        if ai.rank != ashape.len() || bi.rank != ashape.len() {
            return Err(ctx.error("indices must have one column per dimension of the shape"));
        }
        if av.dtype() != bv.dtype() {
            return Err(ctx.error("a_values and b_values must have one dtype"));
        }
        if th.rank() != 0 {
            return Err(ctx.error(format!("The magnitude threshold must be a scalar: got shape {}", th.shape())));
        }
        let thresh = th.to_f64_vec()?[0];
        check_alloc(&[ai.n + bi.n, ashape.len()], DataType::Int64).map_err(|e| ctx.error_with(e))?;
        let (idx, vals) = dispatch!(av.dtype(), ctx, [f32, f64, i32, i64], |T| add_typed::<T>(
            (&ai, &av),
            (&bi, &bv),
            thresh,
            |x| x as f64
        ))?;
        let n = vals.num_elements();
        ctx.set_output(0, Tensor::new(Shape::new(vec![n, ashape.len()]), idx)?)?;
        ctx.set_output(1, vals)?;
        ctx.set_output(2, Tensor::new(Shape::new(vec![ashape.len()]), ashape)?)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("SparseConcat", |n| Ok(Box::new(SparseConcat { dim: n.attr_int("concat_dim")? })));
    r.add("SparseSlice", |_| Ok(Box::new(SparseSlice)));
    r.add("SparseAdd", |_| Ok(Box::new(SparseAdd)));
}
