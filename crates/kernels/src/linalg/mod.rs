//! Dense linear algebra on batches of small matrices (float32, float64): LU-based
//! determinants, inverses and solves, Cholesky, triangular solves, the self-adjoint
//! eigendecomposition and the SVD. Every kernel works on
//! the innermost two dimensions; batches run in parallel when large.

mod banded;
pub(crate) mod batch_bcast;
mod cholesky;
mod complex_lu;
mod eig;
mod eigh;
mod lu;
mod lu_factor;
mod lu_ops;
mod sqrtm;
mod svd;
mod triangular;
mod tridiagonal;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use crate::{KernelRegistry, OpContext};

/// Registers the linear-algebra kernels.
pub(crate) fn register(r: &mut KernelRegistry) {
    ferroflow_core::register_modules! {
        r: banded, cholesky, eig, eigh, lu_factor, lu_ops, sqrtm, svd, triangular, tridiagonal
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

/// Input 0, which must be of the kernel's type `ty` (attr `T`).
pub(crate) fn matrix_input(ctx: &OpContext, ty: DataType) -> Result<Tensor, Status> {
    let x = ctx.input(0)?;
    if x.dtype() != ty {
        return Err(ctx.error(format!("input is {} but T is {ty}", x.dtype())));
    }
    Ok(x)
}

/// The Jacobi rotation `(cos, sin)` that zeroes the off-diagonal `apq` of the symmetric
/// 2×2 matrix `[[app, apq], [apq, aqq]]`; `None` when `apq` is already negligible.
pub(crate) fn jacobi_rotation(app: f64, aqq: f64, apq: f64) -> Option<(f64, f64)> {
    if apq == 0.0 || apq.abs() <= f64::EPSILON * (app.abs() * aqq.abs()).sqrt() {
        return None;
    }
    let theta = (aqq - app) / (2.0 * apq);
    let sign = if theta >= 0.0 { 1.0 } else { -1.0 };
    let t = sign / (theta.abs() + 1f64.hypot(theta));
    let c = 1.0 / 1f64.hypot(t);
    Some((c, t * c))
}

/// Elements of the work above which batches of matrices are processed in parallel.
pub(crate) const PAR_WORK: usize = 1 << 16;

/// The eigenvalues of a batch of decompositions `(values, vectors)` as one tensor's dims and
/// elements: the batch dims of `x_dims` and `n`.
pub(crate) fn eigenvalues<T: ferroflow_core::TensorType + Copy>(
    x_dims: &[usize],
    n: usize,
    mats: &[(Vec<T>, Vec<T>)],
) -> Result<(Vec<usize>, Vec<T>), Status> {
    let e_dims: Vec<usize> = x_dims[..x_dims.len() - 2].iter().copied().chain([n]).collect();
    let e = crate::array::util::collect_vec(&e_dims, mats.iter().flat_map(|(e, _)| e.iter().copied()))?;
    Ok((e_dims, e))
}

/// `one(b)` for each of `count` n×n matrices, in parallel when the batch is worth it
/// (`None` as soon as one decomposition fails).
pub(crate) fn per_matrix<R: Send>(
    count: usize,
    n: usize,
    one: impl Fn(usize) -> Option<R> + Sync + Send,
) -> Option<Vec<R>> {
    use rayon::prelude::*;
    if count > 1 && count * n * n * n >= PAR_WORK {
        (0..count).into_par_iter().map(one).collect()
    } else {
        (0..count).map(one).collect()
    }
}

/// A bool attr, `default` when the node does not set it.
pub(crate) fn bool_attr(n: &NodeDef, name: &str, default: bool) -> Result<bool, Status> {
    if n.has_attr(name) {
        n.attr_bool(name)
    } else {
        Ok(default)
    }
}

/// Attr `T` of the `op` kernels that compute in float64: float32 or float64 (others are
/// not supported).
pub(crate) fn f64_op_type(n: &NodeDef, op: &str) -> Result<DataType, Status> {
    let ty = n.attr_type("T")?;
    if !matches!(ty, DataType::Float | DataType::Double) {
        return Err(Status::unimplemented(format!(
            "node '{}': {op} of {ty} is not yet supported by ferroflow (float32 and float64 are)",
            n.name
        ))
        .with_node(&n.name));
    }
    Ok(ty)
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
