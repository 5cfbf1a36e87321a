//! The `tf.sets` kernels: `SetSize` (the number of distinct values of each group of a
//! sparse set) and `DenseToDenseSetOperation`, `DenseToSparseSetOperation`,
//! `SparseToSparseSetOperation` (`a-b`, `b-a`, `intersection`, `union` of the last
//! dimension's values, group by group). A result is a sparse tensor whose groups are listed
//! in TensorFlow's walk order, each group's values ascending, its last dimension the largest
//! result set.

use std::collections::BTreeSet;

use ferroflow_core::{DataType, NodeAttrs, Shape, Status, Tensor, TensorType};

use super::groups::{flat_offset, runs, strides, Run};
use super::set_input::{check_group, dense_shape, group_shape, shared_group_shape, sparse_set, SparseSet};
use crate::{KernelRegistry, OpContext, OpKernel};

#[derive(Clone, Copy)]
enum SetOp {
    AMinusB,
    BMinusA,
    Intersection,
    Union,
}

impl SetOp {
    fn parse(s: &str) -> Result<SetOp, Status> {
        match s.to_lowercase().as_str() {
            "a-b" => Ok(SetOp::AMinusB),
            "b-a" => Ok(SetOp::BMinusA),
            "intersection" => Ok(SetOp::Intersection),
            "union" => Ok(SetOp::Union),
            other => Err(Status::invalid_argument(format!("Invalid set_operation {other}."))),
        }
    }

    fn apply<T: Ord + Clone>(self, a: &BTreeSet<T>, b: &BTreeSet<T>) -> BTreeSet<T> {
        match self {
            SetOp::AMinusB => a.difference(b).cloned().collect(),
            SetOp::BMinusA => b.difference(a).cloned().collect(),
            SetOp::Intersection => a.intersection(b).cloned().collect(),
            SetOp::Union => a.union(b).cloned().collect(),
        }
    }
}

/// An element type of the set ops.
trait SetElem: TensorType + Ord + Clone {}
impl<T: TensorType + Ord + Clone> SetElem for T {}

/// Runs `$body` with `$T` bound to the set element type of `$dt`.
macro_rules! with_set_type {
    ($ctx:expr, $dt:expr, |$T:ident| $body:expr) => {
        with_set_type!(@arms $ctx, $dt, $T, $body, [
            Int8 => i8, Int16 => i16, Int32 => i32, Int64 => i64, UInt8 => u8, UInt16 => u16, String => Vec<u8>
        ])
    };
    (@arms $ctx:expr, $dt:expr, $T:ident, $body:expr, [$($variant:ident => $ty:ty),*]) => {
        match $dt {
            $(DataType::$variant => {
                type $T = $ty;
                $body
            })*
            d => Err($ctx.error(format!("no CPU kernel for dtype {d}"))),
        }
    };
}

fn validate_attr(n: &ferroflow_core::proto::NodeDef) -> bool {
    n.attr_bool("validate_indices").unwrap_or(true)
}

struct SetSize {
    validate: bool,
}

fn set_size<T: SetElem>(ctx: &OpContext, s: &SparseSet, out_dims: &[i64]) -> Result<Vec<i32>, Status> {
    let dims: Vec<usize> = out_dims.iter().map(|&d| d as usize).collect();
    let mut out = ferroflow_core::alloc::zeroed::<i32>(&dims)?;
    let vals = s.values.as_slice::<T>()?;
    let st = strides(out_dims);
    for run in runs(&s.m, out_dims.len()) {
        check_group(ctx, s, run)?;
        let distinct: BTreeSet<&T> = vals[run.start..run.end].iter().collect();
        let at = flat_offset(run.key(&s.m, out_dims.len()), &st).and_then(|o| usize::try_from(o).ok());
        match at.filter(|&o| o < out.len()) {
            Some(o) => out[o] = distinct.len() as i32,
            None => return Err(ctx.error(format!("Index out of range for output shape {out_dims:?}"))),
        }
    }
    Ok(out)
}

impl OpKernel for SetSize {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let s = sparse_set(ctx, 0, self.validate)?;
        let out_dims = group_shape(ctx, &s.shape)?;
        let out = with_set_type!(ctx, s.values.dtype(), |T| set_size::<T>(ctx, &s, &out_dims))?;
        let dims: Vec<usize> = out_dims.iter().map(|&d| d as usize).collect();
        ctx.set_output(0, Tensor::new(Shape::new(dims), out)?)
    }
}

#[derive(Clone, Copy)]
enum Inputs {
    DenseDense,
    DenseSparse,
    SparseSparse,
}

struct SetOperation {
    inputs: Inputs,
    op: SetOp,
    validate: bool,
}

/// The result sets, keyed by group, in walk order.
struct Results<T> {
    sets: Vec<(Vec<i64>, BTreeSet<T>)>,
}

impl<T: SetElem> Results<T> {
    fn push(&mut self, key: Vec<i64>, set: BTreeSet<T>) {
        if !set.is_empty() {
            self.sets.push((key, set));
        }
    }

    /// The sparse result of group shape `group`: indices, values, shape.
    fn finish(self, group: &[i64]) -> Result<[Tensor; 3], Status> {
        let rank = group.len() + 1;
        let n: usize = self.sets.iter().map(|s| s.1.len()).sum();
        let max = self.sets.iter().map(|s| s.1.len()).max().unwrap_or(0);
        let mut idx = ferroflow_core::alloc::with_capacity::<i64>(&[n, rank])?;
        let mut vals = ferroflow_core::alloc::with_capacity::<T>(&[n])?;
        for (key, set) in self.sets {
            for (pos, v) in set.into_iter().enumerate() {
                idx.extend_from_slice(&key);
                idx.push(pos as i64);
                vals.push(v);
            }
        }
        let mut shape = group.to_vec();
        shape.push(max as i64);
        Ok([
            Tensor::new(Shape::new(vec![n, rank]), idx)?,
            Tensor::new(Shape::new(vec![n]), vals)?,
            Tensor::new(Shape::new(vec![rank]), shape)?,
        ])
    }
}

/// The group index of flat group `g` in `group` (row-major).
fn unflatten(mut g: usize, group: &[i64]) -> Vec<i64> {
    let mut key = vec![0i64; group.len()];
    for k in (0..group.len()).rev() {
        let d = group[k] as usize;
        key[k] = (g % d) as i64;
        g /= d;
    }
    key
}

/// The distinct values of row `g` (of `width` values) of a dense set.
fn dense_row<T: SetElem>(vals: &[T], g: usize, width: usize) -> BTreeSet<T> {
    vals[g * width..(g + 1) * width].iter().cloned().collect()
}

fn sparse_group<T: SetElem>(ctx: &OpContext, s: &SparseSet, run: Run) -> Result<BTreeSet<T>, Status> {
    check_group(ctx, s, run)?;
    Ok(s.values.as_slice::<T>()?[run.start..run.end].iter().cloned().collect())
}

impl SetOperation {
    fn dense_dense<T: SetElem>(&self, ctx: &OpContext, a: &Tensor, b: &Tensor) -> Result<[Tensor; 3], Status> {
        let (sa, sb) = (dense_shape(a), dense_shape(b));
        let group = shared_group_shape(ctx, &sa, &sb)?;
        let (wa, wb) = (sa[sa.len() - 1] as usize, sb[sb.len() - 1] as usize);
        let (va, vb) = (a.as_slice::<T>()?, b.as_slice::<T>()?);
        let mut res = Results { sets: Vec::new() };
        // With no values on either side every result is empty (and the groups need no walk).
        let groups = if wa == 0 && wb == 0 { 0 } else { group.iter().map(|&d| d as usize).product() };
        for g in 0..groups {
            let set = self.op.apply(&dense_row(va, g, wa), &dense_row(vb, g, wb));
            res.push(unflatten(g, &group), set);
        }
        res.finish(&group)
    }

    fn dense_sparse<T: SetElem>(&self, ctx: &OpContext, a: &Tensor, b: &SparseSet) -> Result<[Tensor; 3], Status> {
        let sa = dense_shape(a);
        let group = shared_group_shape(ctx, &sa, &b.shape)?;
        let wa = sa[sa.len() - 1] as usize;
        let va = a.as_slice::<T>()?;
        let total: usize = group.iter().map(|&d| d as usize).product();
        let st = strides(&group);
        let b_runs = runs(&b.m, group.len());
        // TensorFlow walks the groups in order and takes b's next run when its key is the
        // group's; a run whose key is out of range or behind the walk is never taken (nor
        // any run after it).
        let flat_of = |r: &Run| {
            let key = r.key(&b.m, group.len());
            let inside = key.iter().zip(&group).all(|(&k, &d)| k >= 0 && k < d);
            if inside {
                flat_offset(key, &st).map(|o| o as usize)
            } else {
                None
            }
        };
        let mut next = 0usize;
        let mut res = Results { sets: Vec::new() };
        let mut g = 0usize;
        while g < total {
            let pending = b_runs.get(next).and_then(|r| flat_of(r).filter(|&o| o >= g).map(|o| (r, o)));
            if wa == 0 {
                // Only b's groups can give values: skip to the next one that will be taken.
                match pending {
                    Some((_, o)) => g = o,
                    None => break,
                }
            }
            let set_b = match pending {
                Some((r, o)) if o == g => {
                    next += 1;
                    sparse_group::<T>(ctx, b, *r)?
                }
                _ => BTreeSet::new(),
            };
            res.push(unflatten(g, &group), self.op.apply(&dense_row(va, g, wa), &set_b));
            g += 1;
        }
        res.finish(&group)
    }

    fn sparse_sparse<T: SetElem>(&self, ctx: &OpContext, a: &SparseSet, b: &SparseSet) -> Result<[Tensor; 3], Status> {
        let group = shared_group_shape(ctx, &a.shape, &b.shape)?;
        let k = group.len();
        let (ra, rb) = (runs(&a.m, k), runs(&b.m, k));
        let (mut i, mut j) = (0, 0);
        let mut res = Results { sets: Vec::new() };
        while i < ra.len() || j < rb.len() {
            let ord = match (ra.get(i), rb.get(j)) {
                (Some(x), Some(y)) => x.key(&a.m, k).cmp(y.key(&b.m, k)),
                (Some(_), None) => std::cmp::Ordering::Less,
                _ => std::cmp::Ordering::Greater,
            };
            let mut key = Vec::new();
            let mut set_a = BTreeSet::new();
            let mut set_b = BTreeSet::new();
            if ord.is_le() {
                set_a = sparse_group::<T>(ctx, a, ra[i])?;
                key = ra[i].key(&a.m, k).to_vec();
                i += 1;
            }
            if ord.is_ge() {
                set_b = sparse_group::<T>(ctx, b, rb[j])?;
                key = rb[j].key(&b.m, k).to_vec();
                j += 1;
            }
            res.push(key, self.op.apply(&set_a, &set_b));
        }
        res.finish(&group)
    }
}

impl OpKernel for SetOperation {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let out = match self.inputs {
            Inputs::DenseDense => {
                let (a, b) = (ctx.input(0)?, ctx.input(1)?);
                with_set_type!(ctx, a.dtype(), |T| self.dense_dense::<T>(ctx, &a, &b))?
            }
            Inputs::DenseSparse => {
                let a = ctx.input(0)?;
                let b = sparse_set(ctx, 1, self.validate)?;
                with_set_type!(ctx, a.dtype(), |T| self.dense_sparse::<T>(ctx, &a, &b))?
            }
            Inputs::SparseSparse => {
                let a = sparse_set(ctx, 0, self.validate)?;
                let b = sparse_set(ctx, 3, self.validate)?;
                with_set_type!(ctx, a.values.dtype(), |T| self.sparse_sparse::<T>(ctx, &a, &b))?
            }
        };
        for (i, t) in out.into_iter().enumerate() {
            ctx.set_output(i, t)?;
        }
        Ok(())
    }
}

fn set_operation(n: &ferroflow_core::proto::NodeDef, inputs: Inputs) -> Result<Box<dyn OpKernel>, Status> {
    let op = SetOp::parse(&n.attr_string("set_operation")?)?;
    Ok(Box::new(SetOperation { inputs, op, validate: validate_attr(n) }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("SetSize", |n| Ok(Box::new(SetSize { validate: validate_attr(n) })));
    r.add("DenseToDenseSetOperation", |n| set_operation(n, Inputs::DenseDense));
    r.add("DenseToSparseSetOperation", |n| set_operation(n, Inputs::DenseSparse));
    r.add("SparseToSparseSetOperation", |n| set_operation(n, Inputs::SparseSparse));
}

#[cfg(test)]
#[path = "sets_tests.rs"]
mod tests;
