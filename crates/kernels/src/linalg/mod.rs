//! Dense linear algebra on batches of small matrices (float32, float64): LU-based
//! determinants, inverses and solves, Cholesky, triangular solves. Every kernel works on
//! the innermost two dimensions; batches run in parallel when large.

mod cholesky;
mod lu;
mod lu_ops;
mod triangular;

use ferroflow_core::{Status, Tensor};

use crate::{KernelRegistry, OpContext};

/// Registers the linear-algebra kernels.
pub(crate) fn register(r: &mut KernelRegistry) {
    ferroflow_core::register_modules! {
        r: cholesky, lu_ops, triangular
    }
}

/// Checks that `x` is a batch of square matrices; returns (number of matrices, n).
pub(crate) fn square_batch(ctx: &OpContext, x: &Tensor, what: &str) -> Result<(usize, usize), Status> {
    let r = x.rank();
    if r < 2 {
        return Err(ctx.error(format!("{what} must have rank >= 2, got {r}")));
    }
    let (m, n) = (x.dims()[r - 2], x.dims()[r - 1]);
    if m != n {
        return Err(ctx.error(format!("{what} must be a square matrix or a batch of them, got shape {}", x.shape())));
    }
    Ok((x.dims()[..r - 2].iter().product(), n))
}

/// Elements of the work above which batches of matrices are processed in parallel.
pub(crate) const PAR_WORK: usize = 1 << 16;
