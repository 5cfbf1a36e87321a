//! Checks shared by the sparse-tensor kernels: an indices matrix, a shape vector, values.

use ferroflow_core::{Status, Tensor};

use crate::array::util::index_vec;
use crate::OpContext;

/// A checked `[n, rank]` indices matrix, flat row-major.
pub(crate) struct Indices {
    pub n: usize,
    pub rank: usize,
    pub v: Vec<i64>,
}

impl Indices {
    /// Row `i`.
    #[inline]
    pub fn row(&self, i: usize) -> &[i64] {
        &self.v[i * self.rank..(i + 1) * self.rank]
    }
}

/// Input `t` (named `what`) as an indices matrix.
pub(crate) fn indices_matrix(ctx: &OpContext, what: &str, t: &Tensor) -> Result<Indices, Status> {
    if t.rank() != 2 {
        return Err(ctx.error(format!("{what} must be a matrix, got shape {}", t.shape())));
    }
    let v = index_vec(t).map_err(|e| ctx.error(format!("{what}: {}", e.message)))?;
    Ok(Indices { n: t.dims()[0], rank: t.dims()[1], v })
}

/// Input `t` (named `what`) as a shape vector.
pub(crate) fn shape_vector(ctx: &OpContext, what: &str, t: &Tensor) -> Result<Vec<i64>, Status> {
    if t.rank() != 1 {
        return Err(ctx.error(format!("{what} must be a vector, got shape {}", t.shape())));
    }
    index_vec(t).map_err(|e| ctx.error(format!("{what}: {}", e.message)))
}

/// Checks that `values` is a vector of `n` elements.
pub(crate) fn check_values(ctx: &OpContext, what: &str, values: &Tensor, n: usize) -> Result<(), Status> {
    if values.rank() != 1 || values.dims()[0] != n {
        return Err(
            ctx.error(format!("{what} must be a vector of {n} values (one per index), got shape {}", values.shape()))
        );
    }
    Ok(())
}

/// The sparse tensor in inputs `first..first + 3` (indices, values, dense shape; named by
/// `names` in that order), checked: an indices matrix, a shape vector, one value per index row.
pub(crate) fn sparse_input(
    ctx: &OpContext,
    first: usize,
    names: [&str; 3],
) -> Result<(Indices, Tensor, Vec<i64>), Status> {
    let m = indices_matrix(ctx, names[0], &ctx.input(first)?)?;
    let values = ctx.input(first + 1)?;
    let shape = shape_vector(ctx, names[2], &ctx.input(first + 2)?)?;
    check_values(ctx, names[1], &values, m.n)?;
    Ok((m, values, shape))
}

/// The dims of a dense shape as usize: each non-negative.
pub(crate) fn dense_dims(ctx: &OpContext, what: &str, shape: &[i64]) -> Result<Vec<usize>, Status> {
    shape
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| ctx.error(format!("{what} has a negative dimension: {shape:?}"))))
        .collect()
}

/// Whether index row `idx` lies outside `shape`.
pub(crate) fn out_of_bounds(idx: &[i64], shape: &[i64]) -> bool {
    idx.iter().zip(shape).any(|(&i, &d)| i < 0 || i >= d)
}
