//! `SparseReduceSum` and `SparseReduceMax` (a dense result over the kept axes; the max of a
//! group without values is 0, as in TensorFlow), `SparseReduceSumSparse` and
//! `SparseReduceMaxSparse` (one entry per group with values), each group reduced as
//! TensorFlow does (`reduce_groups.rs`), and `SparseSoftmax` (a softmax of the values
//! sharing all but the last index).

use ferroflow_core::{NodeAttrs, Shape, Status, Tensor};

use super::reduce_groups::{group, reduce_groups, reduced_axes, Groups, TfReduce};
use super::util::{dense_dims, sparse_input};
use crate::array::util::check_alloc;
use crate::dispatch::dispatch;
use crate::real::Real;
use crate::{KernelRegistry, OpContext, OpKernel};

struct SparseReduceSum {
    keep_dims: bool,
    max: bool,
}

/// The dense result: each group's value at its kept coordinates (0 where no group).
fn reduce_typed<T: TfReduce>(
    g: &Groups,
    offsets: &[usize],
    vals: &Tensor,
    dims: &[usize],
    max: bool,
) -> Result<Tensor, Status> {
    let mut out = ferroflow_core::alloc::zeroed::<T>(dims)?;
    for (&(s, _), x) in g.bounds.iter().zip(reduce_groups(g, vals.as_slice::<T>()?, max)) {
        out[offsets[g.order[s]]] = x;
    }
    Tensor::new(Shape::new(dims.to_vec()), out)
}

impl OpKernel for SparseReduceSum {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let (m, vals, shape) = sparse_input(ctx, 0, ["input_indices", "input_values", "input_shape"])?;
        let r = shape.len();
        let reduced = reduced_axes(ctx, &ctx.input(3)?, r)?;
        if m.rank != r {
            return Err(ctx.error(format!("input_indices has {} columns but input_shape has {r} dims", m.rank)));
        }
        let dims = dense_dims(ctx, "input_shape", &shape)?;
        let kept: Vec<usize> = (0..r).filter(|&k| !reduced[k]).map(|k| dims[k]).collect();
        let out_dims: Vec<usize> =
            if self.keep_dims { (0..r).map(|k| if reduced[k] { 1 } else { dims[k] }).collect() } else { kept.clone() };
        check_alloc(&out_dims, vals.dtype()).map_err(|e| ctx.error_with(e))?;
        let mut offsets = Vec::with_capacity(m.n);
        for e in 0..m.n {
            let row = m.row(e);
            let mut o = 0usize;
            for k in 0..r {
                if row[k] < 0 || row[k] >= shape[k] {
                    return Err(ctx.error(format!("input_indices[{e}] is out of bounds of input_shape {shape:?}")));
                }
                if !reduced[k] {
                    o = o * dims[k] + row[k] as usize;
                }
            }
            offsets.push(o);
        }
        let g = group(&m, &reduced);
        let out = dispatch!(vals.dtype(), ctx, [f32, f64, i32, i64], |T| reduce_typed::<T>(
            &g, &offsets, &vals, &out_dims, self.max
        ))?;
        ctx.set_output(0, out)
    }
}

op_kernel! {
    /// `SparseReduceSumSparse` / `SparseReduceMaxSparse`: one output entry per group, in
    /// TensorFlow's order. Index rows are not checked against the shape (nor are they in
    /// TensorFlow): they are grouped and copied as given.
    struct SparseReduceSparse { keep_dims: bool, max: bool }
    fn compute(&self, ctx) {
        let shape_t = ctx.input(2)?;
        if shape_t.rank() != 1 {
            return Err(ctx.error(format!("Expected input_shape to be a vector; got shape: {}", shape_t.shape())));
        }
        let (m, vals, shape) = sparse_input(ctx, 0, ["input_indices", "input_values", "input_shape"])?;
        let r = shape.len();
        let reduced = reduced_axes(ctx, &ctx.input(3)?, r)?;
        if let Some(&d) = shape.iter().find(|&&d| d < 0) {
            return Err(ctx.error(format!("Expected shape dimensions to be non-negative, got {d}")));
        }
        if m.rank != r {
            return Err(ctx.error("Order length must be SparseTensor rank."));
        }
        let g = group(&m, &reduced);
        let out_shape: Vec<i64> = if self.keep_dims {
            (0..r).map(|k| if reduced[k] { 1 } else { shape[k] }).collect()
        } else {
            g.kept.iter().map(|&k| shape[k]).collect()
        };
        let out_r = out_shape.len();
        let nnz = g.bounds.len();
        let mut idx = ferroflow_core::alloc::zeroed::<i64>(&[nnz, out_r])?;
        for (i, &(s, _)) in g.bounds.iter().enumerate() {
            let row = m.row(g.order[s]);
            for (j, &k) in g.kept.iter().enumerate() {
                idx[i * out_r + if self.keep_dims { k } else { j }] = row[k];
            }
        }
        let values = dispatch!(vals.dtype(), ctx, [f32, f64, i32, i64], |T| Tensor::new(
            vec![nnz],
            reduce_groups::<T>(&g, vals.as_slice::<T>()?, self.max)
        ))?;
        ctx.set_output(0, Tensor::new(vec![nnz, out_r], idx)?)?;
        ctx.set_output(1, values)?;
        ctx.set_output(2, Tensor::new(vec![out_r], out_shape)?)
    }
}

fn softmax_typed<T: Real>(groups: &[Vec<usize>], vals: &Tensor) -> Result<Tensor, Status> {
    let v = vals.as_slice::<T>()?;
    let mut out = ferroflow_core::alloc::zeroed::<T>(vals.dims())?;
    for g in groups {
        let max = g.iter().map(|&i| v[i]).fold(v[g[0]], |a, x| if x > a { x } else { a });
        let mut sum = T::ZERO;
        for &i in g {
            out[i] = (v[i] - max).exp();
            sum += out[i];
        }
        for &i in g {
            out[i] = out[i] / sum;
        }
    }
    Tensor::new(vals.shape().clone(), out)
}

op_kernel! {
    struct SparseSoftmax;
    fn compute(&self, ctx) {
        let (m, vals, shape) = sparse_input(ctx, 0, ["sp_indices", "sp_values", "sp_shape"])?;
        if shape.len() < 2 || m.rank != shape.len() {
            return Err(ctx.error(format!("Input should have rank >= 2, but received shape: {shape:?}")));
        }
        let mut perm: Vec<usize> = (0..m.n).collect();
        let prefix = |i: usize| &m.row(i)[..m.rank - 1];
        perm.sort_by(|&a, &b| prefix(a).cmp(prefix(b)));
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for &i in &perm {
            match groups.last_mut() {
                Some(g) if prefix(g[0]) == prefix(i) => g.push(i),
                _ => groups.push(vec![i]),
            }
        }
        let out = dispatch!(vals.dtype(), ctx, [f32, f64], |T| softmax_typed::<T>(&groups, &vals))?;
        ctx.set_output(0, out)
    }
}

fn make_reduce(n: &ferroflow_core::proto::NodeDef, max: bool) -> Result<Box<dyn OpKernel>, Status> {
    let keep_dims = if n.has_attr("keep_dims") { n.attr_bool("keep_dims")? } else { false };
    Ok(Box::new(SparseReduceSum { keep_dims, max }))
}

fn make_sparse(n: &ferroflow_core::proto::NodeDef, max: bool) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(SparseReduceSparse { keep_dims: n.attr_bool("keep_dims")?, max }))
}

fn make_sum(n: &ferroflow_core::proto::NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    make_reduce(n, false)
}

fn make_max(n: &ferroflow_core::proto::NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    make_reduce(n, true)
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("SparseReduceSum", make_sum);
    r.add("SparseReduceMax", make_max);
    r.add("SparseReduceSumSparse", |n| make_sparse(n, false));
    r.add("SparseReduceMaxSparse", |n| make_sparse(n, true));
    r.add("SparseSoftmax", |_| Ok(Box::new(SparseSoftmax)));
}

#[cfg(test)]
#[path = "reduce_tests.rs"]
mod tests;
