//! BandedTriangularSolve: `A·X = B` (or `Aᴴ·X = B` with `adjoint`) for a lower or upper
//! triangular band matrix `A` in TensorFlow's band storage `[..., K, M]`: for `lower`, row
//! `d` holds the `d`-th subdiagonal right-aligned (`band[d][i] = A[i][i-d]`); for upper,
//! row `K-1-d` holds the `d`-th superdiagonal left-aligned (`band[K-1-d][i] = A[i][i+d]`).
//! The batch dimensions broadcast.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, Status, Tensor};

use super::batch_bcast::{broadcast_batches, push_batch_pairs};
use super::triangular::{divide_row, subtract_row};
use crate::array::ext::util::kernel_dtype;
use crate::array::util::{check_alloc, scratch_vec};
use crate::dispatch::dispatch;
use crate::math::elem::Float;
use crate::{KernelRegistry, OpContext, OpKernel};

struct Banded {
    ty: DataType,
    lower: bool,
    adjoint: bool,
}

/// `A[i][j]` of the band `a` (`kb` rows, `n` columns); 0 outside the band.
fn entry<T: Float>(a: &[T], kb: usize, n: usize, lower: bool, i: usize, j: usize) -> T {
    if lower && j <= i && i - j < kb {
        a[(i - j) * n + i]
    } else if !lower && i <= j && j - i < kb {
        a[(kb - 1 - (j - i)) * n + i]
    } else {
        T::ZERO
    }
}

/// Solves in place for one band `a` (kb×n) and right-hand sides `x` (n×k).
fn solve<T: Float>(a: &[T], x: &mut [T], kb: usize, n: usize, k: usize, lower: bool, adjoint: bool) {
    let at = |i: usize, j: usize| if adjoint { entry(a, kb, n, lower, j, i) } else { entry(a, kb, n, lower, i, j) };
    let forward = lower != adjoint;
    let w = kb.saturating_sub(1);
    for step in 0..n {
        let i = if forward { step } else { n - 1 - step };
        let (lo, hi) = if forward { (i.saturating_sub(w), i) } else { (i + 1, (i + 1 + w).min(n)) };
        for j in lo..hi {
            subtract_row(x, k, i, j, at(i, j));
        }
        divide_row(x, k, i, at(i, i));
    }
}

impl Banded {
    fn run<T: Float>(&self, ctx: &mut OpContext, a: &Tensor, b: &Tensor) -> Result<(), Status> {
        let (ra, rb) = (a.rank(), b.rank());
        let (kb, n) = (a.dims()[ra - 2], a.dims()[ra - 1]);
        let (m, k) = (b.dims()[rb - 2], b.dims()[rb - 1]);
        let Some((mut dims, sa, sb)) = broadcast_batches(&a.dims()[..ra - 2], &b.dims()[..rb - 2]) else {
            return Err(ctx.error(format!(
                "In[0] and In[1] must have compatible batch dimensions: {} vs. {}",
                a.shape(),
                b.shape()
            )));
        };
        if n != m {
            return Err(ctx.error(format!("In[0] mismatch In[1] shape: {n} vs. {m}: {} {}", a.shape(), b.shape())));
        }
        let total = dims.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d)).unwrap_or(usize::MAX);
        dims.extend([n, k]);
        check_alloc(&dims, self.ty).map_err(|e| ctx.error_with(e))?;
        let mut out = ferroflow_core::alloc::zeroed::<T>(&dims)?;
        if out.is_empty() {
            return ctx.set_output(0, Tensor::new(dims, out)?);
        }
        let (av, bv) = (a.as_slice::<T>()?, b.as_slice::<T>()?);
        // As TensorFlow: only the first matrix's diagonal is checked.
        let diag_row = if self.lower { 0 } else { kb - 1 };
        if av[diag_row * n..(diag_row + 1) * n].iter().any(|v| v.abs() == T::ZERO) {
            return Err(ctx.error("Input matrix is not invertible."));
        }
        let mut idx = scratch_vec(total, "batch index pairs")?;
        push_batch_pairs(&dims[..dims.len() - 2], &sa, &sb, &mut idx);
        for (o, x) in out.chunks_mut(n * k).enumerate() {
            let (ia, ib) = idx[o];
            x.copy_from_slice(&bv[ib * n * k..(ib + 1) * n * k]);
            solve(&av[ia * kb * n..(ia + 1) * kb * n], x, kb, n, k, self.lower, self.adjoint);
        }
        ctx.set_output(0, Tensor::new(dims, out)?)
    }
}

impl OpKernel for Banded {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let (a, b) = (ctx.input(0)?, ctx.input(1)?);
        for (i, x) in [&a, &b].into_iter().enumerate() {
            if x.rank() < 2 {
                return Err(ctx.error(format!("In[{i}] ndims must be >= 2: {}", x.rank())));
            }
            if x.num_elements() == 0 {
                return Err(ctx.error(format!("In[{i}] must not be an empty tensor: shape {}", x.shape())));
            }
            if x.dtype() != self.ty {
                return Err(ctx.error(format!("In[{i}] is {} but T is {}", x.dtype(), self.ty)));
            }
        }
        dispatch!(self.ty, ctx, [f32, f64], |T| self.run::<T>(ctx, &a, &b))
    }
}

fn make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(Banded {
        ty: kernel_dtype(n, "T", &[DataType::Float, DataType::Double])?,
        lower: super::bool_attr(n, "lower", true)?,
        adjoint: super::bool_attr(n, "adjoint", false)?,
    }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("BandedTriangularSolve", make);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{node, run_kernel};
    use ferroflow_core::attr;

    fn run(lower: bool, adjoint: bool, a: Vec<f64>, kb: usize, b: Vec<f64>) -> Result<Vec<f64>, Status> {
        let nd = node(
            "BandedTriangularSolve",
            &[("T", attr::ty(DataType::Double)), ("lower", attr::bool(lower)), ("adjoint", attr::bool(adjoint))],
        );
        let n = a.len() / kb;
        let a = Tensor::new(vec![kb, n], a).unwrap();
        let b = Tensor::new(vec![n, 1], b).unwrap();
        Ok(run_kernel(nd, vec![a, b], 1)?[0].as_slice::<f64>().unwrap().to_vec())
    }

    #[test]
    fn band_storage_lower_and_upper() {
        // Lower A = [[2, 0, 0], [1, 4, 0], [0, 3, 5]]: diagonal row, then the subdiagonal
        // right-aligned.
        let a = vec![2.0, 4.0, 5.0, 0.0, 1.0, 3.0];
        assert_eq!(run(true, false, a.clone(), 2, vec![2.0, 9.0, 23.0]).unwrap(), vec![1.0, 2.0, 3.4]);
        // Aᵀ = [[2, 1, 0], [0, 4, 3], [0, 0, 5]].
        assert_eq!(run(true, true, a, 2, vec![4.0, 17.0, 15.0]).unwrap(), vec![1.0, 2.0, 3.0]);
        // Upper A = [[2, 1, 0], [0, 4, 3], [0, 0, 5]]: superdiagonal left-aligned, then diagonal.
        let u = vec![1.0, 3.0, 0.0, 2.0, 4.0, 5.0];
        assert_eq!(run(false, false, u.clone(), 2, vec![4.0, 17.0, 15.0]).unwrap(), vec![1.0, 2.0, 3.0]);
        assert_eq!(run(false, true, u, 2, vec![2.0, 9.0, 21.0]).unwrap(), vec![1.0, 2.0, 3.0]);
    }

    #[test]
    fn zero_diagonal_is_an_error() {
        let e = run(true, false, vec![1.0, 0.0, 1.0, 1.0, 1.0, 1.0], 2, vec![1.0; 3]).unwrap_err();
        assert!(e.to_string().contains("not invertible"), "{e}");
    }
}
