//! The inputs of the `tf.sets` kernels as TensorFlow checks them: a sparse set (indices,
//! values, shape; rank at least 2, with `validate_indices` in bounds, sorted and unique) or a
//! dense one, the group shape (all but the last dimension) both sides must share, and the
//! per-group check of a sparse group's index rows.

use ferroflow_core::{Status, Tensor};

use super::groups::{joined, Run};
use super::to_dense::validate_sorted;
use super::util::Indices;
use crate::array::util::index_vec;
use crate::OpContext;

/// A checked sparse set.
pub(crate) struct SparseSet {
    pub m: Indices,
    pub values: Tensor,
    pub shape: Vec<i64>,
}

fn dims_of(t: &Tensor) -> String {
    joined(&t.dims().iter().map(|&d| d as i64).collect::<Vec<_>>())
}

/// The sparse set in inputs `first..first + 3`, checked in TensorFlow's order.
pub(crate) fn sparse_set(ctx: &OpContext, first: usize, validate: bool) -> Result<SparseSet, Status> {
    let shape_t = ctx.input(first + 2)?;
    if shape_t.rank() != 1 {
        return Err(ctx.error("Shape must be a 1D tensor."));
    }
    let shape = index_vec(&shape_t).map_err(|e| ctx.error(e.message))?;
    if let Some(d) = shape.iter().find(|&&d| d < 0) {
        return Err(ctx.error(format!("Expected shape dimensions to be non-negative, got {d}")));
    }
    if shape.len() < 2 {
        return Err(ctx.error(format!("Invalid rank {}.", shape.len())));
    }
    let ix = ctx.input(first)?;
    let values = ctx.input(first + 1)?;
    if ix.rank() != 2 {
        return Err(ctx.error(format!("indices must be a matrix, but got: {}", dims_of(&ix))));
    }
    if values.rank() != 1 {
        return Err(ctx.error(format!("vals must be a vec, but got: {}", dims_of(&values))));
    }
    if ix.dims()[0] != values.dims()[0] {
        return Err(ctx.error(format!(
            "indices and values rows (indexing dimension) must match. (indices = {}, values = {})",
            ix.dims()[0],
            values.dims()[0]
        )));
    }
    if ix.dims()[1] != shape.len() {
        return Err(ctx.error("Order length must be SparseTensor rank."));
    }
    let m = Indices { n: ix.dims()[0], rank: ix.dims()[1], v: index_vec(&ix).map_err(|e| ctx.error(e.message))? };
    if validate {
        validate_sorted(&m.v, m.rank, &shape).map_err(|e| ctx.error(e))?;
    }
    Ok(SparseSet { m, values, shape })
}

/// `shape[..rank - 1]`, or TensorFlow's error for a rank below 2.
pub(crate) fn group_shape(ctx: &OpContext, shape: &[i64]) -> Result<Vec<i64>, Status> {
    if shape.len() < 2 {
        return Err(ctx.error(format!("Shape {} has rank {} < 2", joined(shape), shape.len())));
    }
    Ok(shape[..shape.len() - 1].to_vec())
}

/// The group shape shared by two sets of shapes `a` and `b`.
pub(crate) fn shared_group_shape(ctx: &OpContext, a: &[i64], b: &[i64]) -> Result<Vec<i64>, Status> {
    let (ga, gb) = (group_shape(ctx, a)?, group_shape(ctx, b)?);
    if ga != gb {
        return Err(ctx.error(format!("Mismatched shapes {} vs {}", joined(&ga), joined(&gb))));
    }
    Ok(ga)
}

/// TensorFlow's check of one group's index rows (an Internal error, even without
/// `validate_indices`): every dimension non-empty and every index below its size. A negative
/// index (which TensorFlow does not check) is refused as an InvalidArgument.
pub(crate) fn check_group(ctx: &OpContext, s: &SparseSet, run: Run) -> Result<(), Status> {
    for (j, &d) in s.shape.iter().enumerate() {
        if d <= 0 {
            return Err(ctx.error_with(Status::internal(format!("Invalid dim_size[{j}] = {d}."))));
        }
        for (i, e) in (run.start..run.end).enumerate() {
            let x = s.m.row(e)[j];
            if x >= d {
                return Err(ctx.error_with(Status::internal(format!("indices[{i}, {j}] expected < {d}, got {x}."))));
            }
            if x < 0 {
                return Err(ctx.error(format!("indices[{e}, {j}] = {x} is negative")));
            }
        }
    }
    Ok(())
}

/// The dense set's shape as i64 dims.
pub(crate) fn dense_shape(t: &Tensor) -> Vec<i64> {
    t.dims().iter().map(|&d| d as i64).collect()
}
