//! MatrixSquareRoot: the principal square root of each square matrix of the batch, by
//! the scaled Denman–Beavers iteration in float64 (TensorFlow's Schur-based result is the
//! same matrix: the principal root is unique). Matrices without a real principal root
//! (a negative real eigenvalue) or where the iteration breaks down give NaN, as
//! TensorFlow's do.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, Status};

use super::lu::Lu;
use super::{f64_op_type, f64_tensor, matrix_input, square_batch, PAR_WORK};
use crate::nn::common::each_chunk;
use crate::{KernelRegistry, OpKernel};

/// The inverse of `a` (n×n) and |det a|; `None` when singular.
fn inverse(a: &[f64], n: usize) -> Option<(Vec<f64>, f64)> {
    let f = Lu::new(a.to_vec(), n);
    if f.min_abs_pivot() == 0.0 || f.min_abs_pivot().is_nan() {
        return None;
    }
    let det = (0..n).map(|i| f.a[i * n + i].abs()).product();
    let mut inv = vec![0.0; n * n];
    (0..n).for_each(|i| inv[i * n + i] = 1.0);
    f.solve(&mut inv, n);
    Some((inv, det))
}

/// The principal square root of `a` (n×n), or `None`.
pub(crate) fn sqrtm(a: &[f64], n: usize) -> Option<Vec<f64>> {
    let mut y = a.to_vec();
    let mut z = vec![0.0; n * n];
    (0..n).for_each(|i| z[i * n + i] = 1.0);
    let norm = |m: &[f64]| m.iter().map(|v| v * v).sum::<f64>().sqrt();
    for it in 0..100 {
        let (yi, dy) = inverse(&y, n)?;
        let (zi, dz) = inverse(&z, n)?;
        // Determinant scaling speeds up the early steps; plain steps converge quadratically.
        let mu = if it < 10 { (dy * dz).powf(-1.0 / (2.0 * n as f64)) } else { 1.0 };
        if !mu.is_finite() {
            return None;
        }
        let ny: Vec<f64> = y.iter().zip(&zi).map(|(a, b)| 0.5 * (mu * a + b / mu)).collect();
        let nz: Vec<f64> = z.iter().zip(&yi).map(|(a, b)| 0.5 * (mu * a + b / mu)).collect();
        let diff: Vec<f64> = ny.iter().zip(&y).map(|(a, b)| a - b).collect();
        let (d, s) = (norm(&diff), norm(&ny));
        y = ny;
        z = nz;
        if !s.is_finite() {
            return None;
        }
        if d <= 1e-15 * s * n as f64 {
            return Some(y);
        }
    }
    // No convergence (e.g. a negative real eigenvalue): accept only a true root.
    let mut r = 0.0;
    for i in 0..n {
        for j in 0..n {
            let v: f64 = (0..n).map(|k| y[i * n + k] * y[k * n + j]).sum();
            r += (v - a[i * n + j]).powi(2);
        }
    }
    (r.sqrt() <= 1e-10 * norm(a).max(f64::MIN_POSITIVE)).then_some(y)
}

op_kernel! {
    struct MatrixSqrt { ty: DataType }
    fn compute(&self, ctx) {
        let x = matrix_input(ctx, self.ty)?;
        let (count, n) = square_batch(ctx, &x, "Input")?;
        let xs = x.to_f64_vec()?;
        let mut out = ferroflow_core::alloc::zeroed::<f64>(x.dims())?;
        if n > 0 {
            each_chunk(&mut out, n * n, count > 1 && count * n * n * n >= PAR_WORK, |b, o| {
                match sqrtm(&xs[b * n * n..(b + 1) * n * n], n) {
                    Some(r) => o.copy_from_slice(&r),
                    None => o.iter_mut().for_each(|v| *v = f64::NAN),
                }
            });
        }
        ctx.set_output(0, f64_tensor(self.ty, x.dims().to_vec(), out)?)
    }
}

fn make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(MatrixSqrt { ty: f64_op_type(n, "MatrixSquareRoot")? }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("MatrixSquareRoot", make);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn principal_roots() {
        // [[4, 1], [0, 9]] has the root [[2, 0.2], [0, 3]].
        let r = sqrtm(&[4.0, 1.0, 0.0, 9.0], 2).unwrap();
        [2.0, 0.2, 0.0, 3.0].iter().zip(&r).for_each(|(w, v)| assert!((w - v).abs() < 1e-13, "{r:?}"));
        // A rotation by 90°: the root is the rotation by 45°.
        let r = sqrtm(&[0.0, -1.0, 1.0, 0.0], 2).unwrap();
        let h = 0.5f64.sqrt();
        [h, -h, h, h].iter().zip(&r).for_each(|(w, v)| assert!((w - v).abs() < 1e-13, "{r:?}"));
    }

    #[test]
    fn no_real_root_is_none() {
        assert!(sqrtm(&[-4.0, 0.0, 0.0, 9.0], 2).is_none());
        assert!(sqrtm(&[0.0, 1.0, 0.0, 0.0], 2).is_none());
    }
}
