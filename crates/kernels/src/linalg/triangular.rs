//! MatrixTriangularSolve: `A·X = B` (or `Aᴴ·X = B` with `adjoint`) for lower or upper
//! triangular `A`, by substitution over rows of `B`; the batch dimensions broadcast.
// Tuples of index vectors are clearer here than one-use type aliases.
#![allow(clippy::type_complexity)]

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use super::batch_bcast::{broadcast_batches, push_batch_pairs};
use super::PAR_WORK;
use crate::array::ext::util::kernel_dtype;
use crate::array::util::{check_alloc, scratch_vec};
use crate::dispatch::dispatch;
use crate::math::elem::Float;
use crate::nn::common::each_chunk;
use crate::{KernelRegistry, OpContext, OpKernel};

struct TriSolve {
    ty: DataType,
    lower: bool,
    adjoint: bool,
}

/// Solves in place for one matrix `a` (n×n) and right-hand sides `x` (n×k).
fn solve<T: Float>(a: &[T], x: &mut [T], n: usize, k: usize, lower: bool, adjoint: bool) {
    let at = |i: usize, j: usize| if adjoint { a[j * n + i] } else { a[i * n + j] };
    // The effective matrix is lower triangular when exactly one of lower/adjoint holds.
    let forward = lower != adjoint;
    for step in 0..n {
        let i = if forward { step } else { n - 1 - step };
        let (lo, hi) = if forward { (0, i) } else { (i + 1, n) };
        for j in lo..hi {
            let c = at(i, j);
            if c != T::ZERO {
                subtract_row(x, k, i, j, c);
            }
        }
        divide_row(x, k, i, at(i, i));
    }
}

/// Row `i` of `x` (rows of `k`) less `c` times row `j` (`j != i`): one substitution step.
pub(super) fn subtract_row<T: Float>(x: &mut [T], k: usize, i: usize, j: usize, c: T) {
    let (src, dst) = if j < i {
        let (lo, hi) = x.split_at_mut(i * k);
        (&lo[j * k..j * k + k], &mut hi[..k])
    } else {
        let (lo, hi) = x.split_at_mut(j * k);
        (&hi[..k] as &[T], &mut lo[i * k..i * k + k])
    };
    dst.iter_mut().zip(src).for_each(|(d, &s)| *d = *d - c * s);
}

/// Row `i` of `x` (rows of `k`) divided by the diagonal entry `d`.
pub(super) fn divide_row<T: Float>(x: &mut [T], k: usize, i: usize, d: T) {
    x[i * k..i * k + k].iter_mut().for_each(|v| *v = *v / d);
}

/// Broadcasts two batch shapes; returns the output batch and per-output (a, b) batch indices.
/// (The index list is sized by the broadcast batch, which empty matrices may make huge: it
/// comes from the fallible path.)
fn bcast(a: &[usize], b: &[usize]) -> Result<Option<(Vec<usize>, Vec<(usize, usize)>)>, Status> {
    let Some((out, sa, sb)) = broadcast_batches(a, b) else { return Ok(None) };
    let total = out.iter().try_fold(1usize, |a, &d| a.checked_mul(d)).unwrap_or(usize::MAX);
    let mut idx = scratch_vec(total, "batch index pairs")?;
    push_batch_pairs(&out, &sa, &sb, &mut idx);
    Ok(Some((out, idx)))
}

impl TriSolve {
    fn run<T: Float>(&self, ctx: &mut OpContext, a: &Tensor, b: &Tensor) -> Result<(), Status> {
        let (ra, rb) = (a.rank(), b.rank());
        let n = a.dims()[ra - 1];
        let k = b.dims()[rb - 1];
        let Some((mut dims, idx)) = bcast(&a.dims()[..ra - 2], &b.dims()[..rb - 2])? else {
            return Err(ctx.error(format!("Incompatible batch shapes: matrix {} vs. rhs {}", a.shape(), b.shape())));
        };
        dims.extend([n, k]);
        check_alloc(&dims, self.ty).map_err(|e| ctx.error_with(e))?;
        let (av, bv) = (a.as_slice::<T>()?, b.as_slice::<T>()?);
        if n > 0 && av.chunks(n * n).any(|m| (0..n).any(|i| m[i * n + i] == T::ZERO)) {
            return Err(ctx.error("Input matrix is not invertible."));
        }
        let mut out = ferroflow_core::alloc::zeroed::<T>(&dims)?;
        if n * k > 0 {
            let (lower, adjoint) = (self.lower, self.adjoint);
            let parallel = idx.len() > 1 && idx.len() * n * n * k >= PAR_WORK;
            each_chunk(&mut out, n * k, parallel, |o, x| {
                let (ia, ib) = idx[o];
                x.copy_from_slice(&bv[ib * n * k..(ib + 1) * n * k]);
                solve(&av[ia * n * n..(ia + 1) * n * n], x, n, k, lower, adjoint);
            });
        }
        ctx.set_output(0, Tensor::new(dims, out)?)
    }
}

impl OpKernel for TriSolve {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let a = ctx.input(0)?;
        let b = ctx.input(1)?;
        if a.rank() < 2 || b.rank() < 2 {
            return Err(ctx.error(format!(
                "matrix and rhs must have rank >= 2, got shapes {} and {}",
                a.shape(),
                b.shape()
            )));
        }
        let (ra, rb) = (a.rank(), b.rank());
        if a.dims()[ra - 2] != a.dims()[ra - 1] {
            return Err(ctx.error(format!("Input matrix must be square, got shape {}", a.shape())));
        }
        if b.dims()[rb - 2] != a.dims()[ra - 1] {
            return Err(ctx.error(format!(
                "Input matrix and right-hand side must have the same number of rows, got {} and {}",
                a.shape(),
                b.shape()
            )));
        }
        if a.dtype() != self.ty || b.dtype() != self.ty {
            return Err(ctx.error(format!("inputs are {} and {} but T is {}", a.dtype(), b.dtype(), self.ty)));
        }
        dispatch!(self.ty, ctx, [f32, f64], |T| self.run::<T>(ctx, &a, &b))
    }
}

fn make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(TriSolve {
        ty: kernel_dtype(n, "T", &[DataType::Float, DataType::Double])?,
        lower: n.attr_bool("lower")?,
        adjoint: n.attr_bool("adjoint")?,
    }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("MatrixTriangularSolve", make);
}
