//! Dense linear algebra on batches of small matrices (float32, float64): LU-based
//! determinants, inverses and solves, Cholesky, triangular solves, the self-adjoint
//! eigendecomposition and the SVD. Every kernel works on
//! the innermost two dimensions; batches run in parallel when large.

mod cholesky;
mod eigh;
mod lu;
mod lu_ops;
mod svd;
mod triangular;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use crate::{KernelRegistry, OpContext};

/// Registers the linear-algebra kernels.
pub(crate) fn register(r: &mut KernelRegistry) {
    ferroflow_core::register_modules! {
        r: cholesky, eigh, lu_ops, svd, triangular
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

/// A bool attr, `default` when the node does not set it.
pub(crate) fn bool_attr(n: &NodeDef, name: &str, default: bool) -> Result<bool, Status> {
    if n.has_attr(name) {
        n.attr_bool(name)
    } else {
        Ok(default)
    }
}

/// A result computed in float64 as a tensor of `dt` (float32 or float64).
pub(crate) fn f64_tensor(dt: DataType, dims: Vec<usize>, v: Vec<f64>) -> Result<Tensor, Status> {
    match dt {
        DataType::Float => {
            let narrow = crate::array::util::collect_vec(&dims, v.into_iter().map(|x| x as f32))?;
            Tensor::new(dims, narrow)
        }
        _ => Tensor::new(dims, v),
    }
}
