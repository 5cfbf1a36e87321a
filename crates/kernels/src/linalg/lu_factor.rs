//! Lu: the LU factorization with partial pivoting of each square matrix of the batch, as
//! LAPACK's getrf (and Eigen's PartialPivLU) computes it: the packed factors (unit `L`
//! below the diagonal, `U` on and above) and the row permutation `p` with `L·U = A[p]`.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use super::lu::Lu;
use super::matrix_input;
use crate::array::ext::util::kernel_dtype;
use crate::dispatch::dispatch;
use crate::math::elem::Float;
use crate::{KernelRegistry, OpContext, OpKernel};

struct LuFactor {
    ty: DataType,
    idx: DataType,
}

/// The row order `p` produced by applying the pivot row swaps, in order, to `0..n`.
pub(crate) fn permutation(piv: &[usize]) -> Vec<usize> {
    let mut p: Vec<usize> = (0..piv.len()).collect();
    for (k, &r) in piv.iter().enumerate() {
        p.swap(k, r);
    }
    p
}

impl LuFactor {
    fn run<T: Float>(&self, ctx: &mut OpContext, x: &Tensor) -> Result<(), Status> {
        let r = x.rank();
        if r < 2 {
            return Err(ctx.error(format!("Input tensor 0 must have rank >= 2, got {r}")));
        }
        let n = x.dims()[r - 1];
        if x.dims()[r - 2] != n {
            return Err(ctx.error(format!("Input matrix must be square, got shape {}", x.shape())));
        }
        let xs = x.as_slice::<T>()?;
        let mut lu = ferroflow_core::alloc::zeroed::<T>(x.dims())?;
        let mut perm = Vec::with_capacity(xs.len().checked_div(n).unwrap_or(0));
        if n > 0 {
            for (m, out) in xs.chunks(n * n).zip(lu.chunks_mut(n * n)) {
                let f = Lu::new(m.to_vec(), n);
                if f.min_abs_pivot() == T::ZERO || f.min_abs_pivot().is_nan() {
                    return Err(ctx.error("Input is not invertible."));
                }
                out.copy_from_slice(&f.a);
                perm.extend(permutation(&f.piv));
            }
        }
        let pdims = x.dims()[..r - 1].to_vec();
        let p = match self.idx {
            DataType::Int64 => Tensor::new(pdims, perm.into_iter().map(|v| v as i64).collect::<Vec<_>>())?,
            _ => Tensor::new(pdims, perm.into_iter().map(|v| v as i32).collect::<Vec<_>>())?,
        };
        ctx.set_output(0, Tensor::new(x.shape().clone(), lu)?)?;
        ctx.set_output(1, p)
    }
}

impl OpKernel for LuFactor {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = matrix_input(ctx, self.ty)?;
        dispatch!(self.ty, ctx, [f32, f64], |T| self.run::<T>(ctx, &x))
    }
}

fn make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let idx = if n.has_attr("output_idx_type") {
        kernel_dtype(n, "output_idx_type", &[DataType::Int32, DataType::Int64])?
    } else {
        DataType::Int32
    };
    Ok(Box::new(LuFactor { ty: kernel_dtype(n, "T", &[DataType::Float, DataType::Double])?, idx }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("Lu", make);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{node, run_kernel};
    use ferroflow_core::attr;

    #[test]
    fn permutation_follows_swaps() {
        assert_eq!(permutation(&[2, 2, 2]), vec![2, 0, 1]);
        assert_eq!(permutation(&[0, 1]), vec![0, 1]);
    }

    #[test]
    fn factors_with_partial_pivoting() {
        let n = node("Lu", &[("T", attr::ty(DataType::Double)), ("output_idx_type", attr::ty(DataType::Int64))]);
        let x = Tensor::new(vec![2, 2], vec![1.0f64, 2.0, 3.0, 4.0]).unwrap();
        let out = run_kernel(n.clone(), vec![x], 2).unwrap();
        // Row 1 pivots: L = [[1, 0], [1/3, 1]], U = [[3, 4], [0, 2/3]].
        let lu = out[0].as_slice::<f64>().unwrap();
        let want = [3.0, 4.0, 1.0 / 3.0, 2.0 - 4.0 / 3.0];
        lu.iter().zip(want).for_each(|(a, b)| assert!((a - b).abs() < 1e-15, "{a} vs {b}"));
        assert_eq!(out[1].as_slice::<i64>().unwrap(), &[1, 0]);
    }

    #[test]
    fn singular_and_non_square_are_errors() {
        let n = node("Lu", &[("T", attr::ty(DataType::Float))]);
        let x = Tensor::new(vec![2, 2], vec![1.0f32, 2.0, 2.0, 4.0]).unwrap();
        let e = run_kernel(n.clone(), vec![x], 2).unwrap_err();
        assert!(e.to_string().contains("not invertible"), "{e}");
        let x = Tensor::new(vec![2, 3], vec![1.0f32; 6]).unwrap();
        assert!(run_kernel(n.clone(), vec![x], 2).unwrap_err().to_string().contains("square"));
    }
}
