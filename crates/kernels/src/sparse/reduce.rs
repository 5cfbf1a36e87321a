//! `SparseReduceSum` and `SparseReduceMax` (a dense result over the kept axes; the max of a
//! group without values is 0, as in TensorFlow) and `SparseSoftmax` (a softmax of the values
//! sharing all but the last index).

use ferroflow_core::{NodeAttrs, Shape, Status, Tensor};

use super::elem::SegElem;
use super::util::{dense_dims, sparse_input};
use crate::array::util::{check_alloc, index_vec};
use crate::dispatch::dispatch;
use crate::real::Real;
use crate::{KernelRegistry, OpContext, OpKernel};

struct SparseReduceSum {
    keep_dims: bool,
    max: bool,
}

fn reduce_typed<T: SegElem>(offsets: &[usize], vals: &Tensor, dims: &[usize], max: bool) -> Result<Tensor, Status> {
    let v = vals.as_slice::<T>()?;
    let mut out = ferroflow_core::alloc::zeroed::<T>(dims)?;
    if max {
        let mut seen = ferroflow_core::alloc::zeroed::<bool>(dims)?;
        for (&o, &x) in offsets.iter().zip(v) {
            out[o] = if seen[o] { out[o].max_of(x) } else { x };
            seen[o] = true;
        }
    } else {
        for (&o, &x) in offsets.iter().zip(v) {
            out[o] = out[o].add(x);
        }
    }
    Tensor::new(Shape::new(dims.to_vec()), out)
}

impl OpKernel for SparseReduceSum {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let (m, vals, shape) = sparse_input(ctx, 0, ["input_indices", "input_values", "input_shape"])?;
        let axes = index_vec(&ctx.input(3)?).map_err(|e| ctx.error(e.message))?;
        let r = shape.len();
        if m.rank != r {
            return Err(ctx.error(format!("input_indices has {} columns but input_shape has {r} dims", m.rank)));
        }
        let dims = dense_dims(ctx, "input_shape", &shape)?;
        let mut reduced = vec![false; r];
        for &a in &axes {
            let k = if a < 0 { a + r as i64 } else { a };
            if k < 0 || k >= r as i64 {
                return Err(ctx.error(format!("Invalid reduction dimension {a}, for input with {r} dimensions.")));
            }
            reduced[k as usize] = true;
        }
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
        let out = dispatch!(vals.dtype(), ctx, [f32, f64, i32, i64], |T| reduce_typed::<T>(
            &offsets, &vals, &out_dims, self.max
        ))?;
        ctx.set_output(0, out)
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

struct SparseSoftmax;

impl OpKernel for SparseSoftmax {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
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

fn make_sum(n: &ferroflow_core::proto::NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    make_reduce(n, false)
}

fn make_max(n: &ferroflow_core::proto::NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    make_reduce(n, true)
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("SparseReduceSum", make_sum);
    r.add("SparseReduceMax", make_max);
    r.add("SparseSoftmax", |_| Ok(Box::new(SparseSoftmax)));
}
