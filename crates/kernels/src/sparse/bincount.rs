//! `Bincount`, `DenseBincount` and `SparseBincount`: per-value counts (or sums of weights,
//! or 0/1 with `binary_output`) into `size` bins; values at or past `size` are dropped,
//! negative ones are an error, as in TensorFlow's CPU kernels.

use ferroflow_core::{NodeAttrs, Shape, Status, Tensor};

use super::elem::SegElem;
use super::util::{indices_matrix, shape_vector};
use crate::array::util::{check_alloc, checked_index_scalar, index_vec};
use crate::dispatch::dispatch;
use crate::{KernelRegistry, OpContext};

/// `out[row[i] * size + v[i]] += w[i]` (1 without weights), or = 1 when `binary`.
fn count_typed<T: SegElem>(
    vals: &[i64],
    rows: Option<&[usize]>,
    weights: &Tensor,
    (batches, size): (usize, usize),
    binary: bool,
) -> Result<Tensor, Status> {
    let w = weights.as_slice::<T>()?;
    let dims = if rows.is_some() { vec![batches, size] } else { vec![size] };
    let mut out = ferroflow_core::alloc::zeroed::<T>(&dims)?;
    for (i, &v) in vals.iter().enumerate() {
        let v = v as usize;
        if v >= size {
            continue;
        }
        let o = &mut out[rows.map_or(0, |r| r[i]) * size + v];
        *o = if binary {
            T::ONE
        } else if w.is_empty() {
            o.add(T::ONE)
        } else {
            o.add(w[i])
        };
    }
    Tensor::new(Shape::new(dims), out)
}

/// Reads `size` (a non-negative scalar) and checks the values are non-negative and the
/// weights empty or one per value.
fn common(ctx: &OpContext, vals: &[i64], size_t: &Tensor, weights: &Tensor) -> Result<usize, Status> {
    let size = checked_index_scalar(ctx, size_t, |t| format!("Shape must be rank 0 but is rank {}", t.rank()))?;
    if size < 0 {
        return Err(ctx.error(format!("size ({size}) must be non-negative")));
    }
    if weights.num_elements() != 0 && weights.num_elements() != vals.len() {
        return Err(ctx.error(format!(
            "weights must be empty or have one element per value ({}), got shape {}",
            vals.len(),
            weights.shape()
        )));
    }
    if vals.iter().any(|&v| v < 0) {
        return Err(ctx.error("Input arr must be non-negative!"));
    }
    usize::try_from(size).map_err(|_| ctx.error("size is too large"))
}

/// The kinds: `Bincount` (any-shape arr, one bin vector), `DenseBincount` (1-D or 2-D input,
/// a row of bins per input row), `SparseBincount` (rank-1 or rank-2 sparse values).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Plain,
    Dense,
    Sparse,
}

op_kernel! {
    struct Bincount { kind: Kind, binary: bool }
    fn compute(&self, ctx) {
        let (vals, rows, batches, size_t, weights) = match self.kind {
            Kind::Plain | Kind::Dense => {
                let arr = ctx.input(0)?;
                let vals = index_vec(&arr).map_err(|e| ctx.error(e.message))?;
                if self.kind == Kind::Dense && arr.rank() > 2 {
                    return Err(ctx.error(format!("Shape must be at most rank 2 but is rank {}", arr.rank())));
                }
                let weights = ctx.input(2)?;
                if self.kind == Kind::Dense && weights.num_elements() != 0 && weights.shape() != arr.shape() {
                    return Err(ctx.error(format!(
                        "Input must have the same shape as weights: {} vs. {}",
                        arr.shape(),
                        weights.shape()
                    )));
                }
                if self.kind == Kind::Dense && arr.rank() == 2 {
                    let (b, c) = (arr.dims()[0], arr.dims()[1]);
                    let rows: Vec<usize> = (0..b * c).map(|i| i / c.max(1)).collect();
                    (vals, Some(rows), b, ctx.input(1)?, weights)
                } else {
                    (vals, None, 1, ctx.input(1)?, weights)
                }
            }
            Kind::Sparse => {
                let idx = indices_matrix(ctx, "indices", &ctx.input(0)?)?;
                let vt = ctx.input(1)?;
                let vals = index_vec(&vt).map_err(|e| ctx.error(e.message))?;
                let shape = shape_vector(ctx, "dense_shape", &ctx.input(2)?)?;
                if vt.rank() != 1 || vals.len() != idx.n || idx.rank != shape.len() {
                    return Err(ctx.error(format!(
                        "values must be a vector of one value per index ({}), and indices must have {} columns",
                        idx.n,
                        shape.len()
                    )));
                }
                match shape.len() {
                    1 => (vals, None, 1, ctx.input(3)?, ctx.input(4)?),
                    2 => {
                        let b = usize::try_from(shape[0]).map_err(|_| ctx.error("dense_shape[0] is negative"))?;
                        let mut rows = Vec::with_capacity(idx.n);
                        for i in 0..idx.n {
                            let r = idx.row(i)[0];
                            if r < 0 || r as u64 >= b as u64 {
                                return Err(ctx.error(format!(
                                    "Index out of bound. `batch` ({r}) must be less than the dimension size ({b})."
                                )));
                            }
                            rows.push(r as usize);
                        }
                        (vals, Some(rows), b, ctx.input(3)?, ctx.input(4)?)
                    }
                    r => return Err(ctx.error(format!("Input must be a 1 or 2-dimensional tensor, got rank {r}"))),
                }
            }
        };
        let size = common(ctx, &vals, &size_t, &weights)?;
        let dims = if rows.is_some() { vec![batches, size] } else { vec![size] };
        check_alloc(&dims, weights.dtype()).map_err(|e| ctx.error_with(e))?;
        let binary = self.binary;
        let out = dispatch!(weights.dtype(), ctx, [f32, f64, i32, i64], |T| count_typed::<T>(
            &vals,
            rows.as_deref(),
            &weights,
            (batches, size),
            binary
        ))?;
        ctx.set_output(0, out)
    }
}

fn binary(n: &ferroflow_core::proto::NodeDef) -> Result<bool, Status> {
    if n.has_attr("binary_output") {
        n.attr_bool("binary_output")
    } else {
        Ok(false)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("Bincount", |_| Ok(Box::new(Bincount { kind: Kind::Plain, binary: false })));
    r.add("DenseBincount", |n| Ok(Box::new(Bincount { kind: Kind::Dense, binary: binary(n)? })));
    r.add("SparseBincount", |n| Ok(Box::new(Bincount { kind: Kind::Sparse, binary: binary(n)? })));
}
