//! `MatrixSolve` and `MatrixInverse` of complex64/complex128 matrices (what the gradient
//! of `tf.linalg.eig` solves with), by LU factorization with partial pivoting in
//! complex128; `adjoint` solves with the conjugate transpose. A zero pivot is TensorFlow's
//! INVALID_ARGUMENT ("... is not invertible.").

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor, C128, C64};

use super::square_batch;
use crate::array::util::collect_vec;
use crate::{OpContext, OpKernel};

type C = C128;

fn widen(t: &Tensor) -> Result<Vec<C>, Status> {
    Ok(match t.dtype() {
        DataType::Complex64 => t.as_slice::<C64>()?.iter().map(|z| C::new(f64::from(z.re), f64::from(z.im))).collect(),
        _ => t.as_slice::<C128>()?.to_vec(),
    })
}

/// Solves `a x = b` in place (`a` n×n, `b` n×k, row-major); false when `a` is singular.
fn solve(mut a: Vec<C>, b: &mut [C], n: usize, k: usize) -> bool {
    for col in 0..n {
        let Some(p) = (col..n).max_by(|&i, &j| a[i * n + col].norm().total_cmp(&a[j * n + col].norm())) else {
            return false;
        };
        if a[p * n + col].norm() == 0.0 {
            return false;
        }
        if p != col {
            for j in 0..n {
                a.swap(p * n + j, col * n + j);
            }
            for j in 0..k {
                b.swap(p * k + j, col * k + j);
            }
        }
        let piv = a[col * n + col];
        for r in col + 1..n {
            let f = a[r * n + col] / piv;
            if f.norm() == 0.0 {
                continue;
            }
            for j in col..n {
                let v = a[col * n + j];
                a[r * n + j] -= f * v;
            }
            for j in 0..k {
                let v = b[col * k + j];
                b[r * k + j] -= f * v;
            }
        }
    }
    for col in (0..n).rev() {
        let piv = a[col * n + col];
        for j in 0..k {
            let s: C = (col + 1..n).map(|l| a[col * n + l] * b[l * k + j]).sum();
            b[col * k + j] = (b[col * k + j] - s) / piv;
        }
    }
    true
}

struct ComplexLu {
    ty: DataType,
    solve: bool,
    adjoint: bool,
}

impl OpKernel for ComplexLu {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = super::matrix_input(ctx, self.ty)?;
        let (count, n) = square_batch(ctx, &x, "Input")?;
        let (shape, k, mut out) = if self.solve {
            let rhs = ctx.input(1)?;
            let r = rhs.rank();
            if r != x.rank() || rhs.dims()[..r - 2] != x.dims()[..x.rank() - 2] || rhs.dims()[r - 2] != n {
                return Err(ctx.error(format!(
                    "Input matrix and right-hand side must have the same batch dimensions and number of rows, got \
                     {} and {}",
                    x.shape(),
                    rhs.shape()
                )));
            }
            if rhs.dtype() != x.dtype() {
                return Err(ctx.error(format!("rhs is {} but matrix is {}", rhs.dtype(), x.dtype())));
            }
            (rhs.shape().clone(), rhs.dims()[r - 1], widen(&rhs)?)
        } else {
            let eye = (0..count * n * n).map(|i| C::new(if i % (n * n) % (n + 1) == 0 { 1.0 } else { 0.0 }, 0.0));
            (x.shape().clone(), n, collect_vec(x.dims(), eye)?)
        };
        let a = widen(&x)?;
        for b in 0..count {
            let m = &a[b * n * n..(b + 1) * n * n];
            let m: Vec<C> =
                if self.adjoint { (0..n * n).map(|i| m[(i % n) * n + i / n].conj()).collect() } else { m.to_vec() };
            if !solve(m, &mut out[b * n * k..(b + 1) * n * k], n, k) {
                let what = if self.solve { "Input matrix" } else { "Input" };
                return Err(ctx.error(format!("{what} is not invertible.")));
            }
        }
        let t = if self.ty == DataType::Complex64 {
            let narrow = collect_vec(shape.dims(), out.into_iter().map(|z| C64::new(z.re as f32, z.im as f32)))?;
            Tensor::from_storage(shape, ferroflow_core::Storage::C64(narrow))?
        } else {
            Tensor::from_storage(shape, ferroflow_core::Storage::C128(out))?
        };
        ctx.set_output(0, t)
    }
}

/// The kernel of a complex `MatrixSolve` (`solve`) or `MatrixInverse`.
pub(crate) fn make(n: &NodeDef, solve: bool) -> Result<Box<dyn OpKernel>, Status> {
    let ty = n.attr_type("T")?;
    let adjoint = if n.has_attr("adjoint") { n.attr_bool("adjoint")? } else { false };
    Ok(Box::new(ComplexLu { ty, solve, adjoint }))
}

#[cfg(test)]
mod tests {
    use ferroflow_core::{attr, DataType, Tensor, C128};

    use crate::testutil::{node, run_kernel};

    fn c(re: f64, im: f64) -> C128 {
        C128::new(re, im)
    }

    #[test]
    fn solves_and_inverts_complex_matrices() {
        // A = [[1+i, 2], [0, 3-i]], x = [[1], [i]]: A x = [[1+3i], [1+3i]].
        let a = Tensor::new(vec![2, 2], vec![c(1.0, 1.0), c(2.0, 0.0), c(0.0, 0.0), c(3.0, -1.0)]).unwrap();
        let b = Tensor::new(vec![2, 1], vec![c(1.0, 3.0), c(1.0, 3.0)]).unwrap();
        let n = node("MatrixSolve", &[("T", attr::ty(DataType::Complex128)), ("adjoint", attr::bool(false))]);
        let x = run_kernel(n, vec![a.clone(), b], 1).unwrap().remove(0);
        let x = x.as_slice::<C128>().unwrap().to_vec();
        assert!((x[0] - c(1.0, 0.0)).norm() < 1e-12 && (x[1] - c(0.0, 1.0)).norm() < 1e-12, "{x:?}");
        // adjoint: A^H y = A^H [1, 1]^T gives y = [1, 1].
        let ah1 = vec![c(1.0, -1.0), c(5.0, 1.0)];
        let n = node("MatrixSolve", &[("T", attr::ty(DataType::Complex128)), ("adjoint", attr::bool(true))]);
        let y = run_kernel(n, vec![a.clone(), Tensor::new(vec![2, 1], ah1).unwrap()], 1).unwrap().remove(0);
        let y = y.as_slice::<C128>().unwrap().to_vec();
        assert!((y[0] - c(1.0, 0.0)).norm() < 1e-12 && (y[1] - c(1.0, 0.0)).norm() < 1e-12, "{y:?}");
        let n = node("MatrixInverse", &[("T", attr::ty(DataType::Complex128)), ("adjoint", attr::bool(false))]);
        let inv = run_kernel(n, vec![a], 1).unwrap().remove(0);
        let inv = inv.as_slice::<C128>().unwrap().to_vec();
        // [[1+i, 2], [0, 3-i]]^-1 = [[(1-i)/2, -2/((1+i)(3-i))], [0, (3+i)/10]].
        let want = [c(0.5, -0.5), -c(2.0, 0.0) / (c(1.0, 1.0) * c(3.0, -1.0)), c(0.0, 0.0), c(0.3, 0.1)];
        assert!(inv.iter().zip(want).all(|(g, w)| (g - w).norm() < 1e-12), "{inv:?}");
        let singular = Tensor::new(vec![1, 1], vec![c(0.0, 0.0)]).unwrap();
        let n = node("MatrixInverse", &[("T", attr::ty(DataType::Complex128)), ("adjoint", attr::bool(false))]);
        assert!(run_kernel(n, vec![singular], 1).unwrap_err().message.contains("Input is not invertible."));
    }
}
