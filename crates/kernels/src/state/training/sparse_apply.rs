//! The sparse form of every optimizer that has one (`SparseApplyAdagrad`,
//! `ResourceSparseApplyMomentum`, …; the kernel is [`super::apply`]'s, with `indices`
//! right after the gradient): the update of an embedding table from the rows a batch used.
//! The gradient holds one row per index (`[len(indices)] + var.shape[1:]`), and the
//! optimizer's element-wise rule runs on the rows `indices` of `var` and its slots only. A
//! repeated index is applied once per occurrence, in order, as in TensorFlow (its
//! optimizers sum duplicate rows before calling these ops).

use ferroflow_core::{Status, Tensor};

use super::apply::UpdateRule;
use crate::array::{dims_str, index_vec};
use crate::real::Real;
use crate::OpContext;

/// Input `i` as the sparse update's row indices (a vector).
pub(super) fn indices(ctx: &OpContext, i: usize) -> Result<Vec<i64>, Status> {
    let indices = ctx.input(i)?;
    if indices.rank() != 1 {
        return Err(ctx.error(format!("indices must be one-dimensional, got shape {}", indices.shape())));
    }
    index_vec(&indices).map_err(|e| ctx.error(e.message))
}

/// Checks the gradient rows and the indices against `var_dims`, then runs `opt`'s rule on
/// each indexed row of the slots.
pub(super) fn apply_rows<O: UpdateRule, T: Real>(
    ctx: &OpContext,
    opt: &O,
    scalars: &[T],
    slots: &mut [&mut [T]],
    var_dims: &[usize],
    grad: &Tensor,
    idx: &[i64],
) -> Result<(), Status> {
    if var_dims.is_empty() {
        return Err(ctx.error("var must be at least 1 dimensional"));
    }
    let mut want = vec![idx.len()];
    want.extend_from_slice(&var_dims[1..]);
    if grad.dims() != want.as_slice() {
        return Err(ctx.error(format!(
            "{} must be the slices of var at indices: shape {} expected, got {} (var {})",
            O::ARGS[O::GRAD],
            dims_str(&want),
            dims_str(grad.dims()),
            dims_str(var_dims)
        )));
    }
    let rows = var_dims[0] as i64;
    if let Some(i) = idx.iter().position(|&r| r < 0 || r >= rows) {
        return Err(ctx.error(format!("Index {} at offset {i} in indices is out of range [0, {rows})", idx[i])));
    }
    let inner: usize = var_dims[1..].iter().product();
    let g = grad.as_slice::<T>()?;
    for (i, &r) in idx.iter().enumerate() {
        let at = r as usize * inner..(r as usize + 1) * inner;
        let mut row: Vec<&mut [T]> = slots.iter_mut().map(|s| &mut s[at.clone()]).collect();
        opt.apply(scalars, &mut row, &g[i * inner..(i + 1) * inner]);
    }
    Ok(())
}
