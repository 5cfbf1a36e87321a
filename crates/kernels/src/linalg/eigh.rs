//! `SelfAdjointEigV2`: eigenvalues (ascending) and eigenvectors of each symmetric matrix,
//! by cyclic Jacobi rotations in float64 (float32 is computed in float64). Only the lower
//! triangle is read, as TensorFlow's. A NaN input fails as TensorFlow's does (its solver
//! does not converge); an infinite one gives NaN eigenvalues and identity vectors, as
//! TensorFlow's. Each eigenvector's largest component is positive (TensorFlow's solver
//! leaves the signs to its iteration: compare eigenvectors up to sign).

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, Status};

use super::{f64_op_type, f64_tensor, jacobi_rotation, matrix_input, square_batch};
use crate::array::util::collect_vec;
use crate::{KernelRegistry, OpKernel};

/// Sweeps after which Jacobi stops even if a rotation was still above the threshold
/// (it converges quadratically: a handful suffice).
const MAX_SWEEPS: usize = 60;

/// Rotates columns `p` and `q` of the row-major `n`-column matrix `x` by (c, s).
fn rotate_cols(x: &mut [f64], n: usize, p: usize, q: usize, c: f64, s: f64) {
    for row in x.chunks_exact_mut(n) {
        let (xp, xq) = (row[p], row[q]);
        row[p] = c * xp - s * xq;
        row[q] = s * xp + c * xq;
    }
}

/// Eigen-decomposes the symmetric `a` (full, row-major, overwritten: its diagonal ends as
/// the eigenvalues); `v`, when given, starts as the identity and ends with the
/// eigenvectors as columns.
fn jacobi(a: &mut [f64], n: usize, mut v: Option<&mut [f64]>) {
    for _ in 0..MAX_SWEEPS {
        let mut rotated = false;
        for p in 0..n {
            for q in p + 1..n {
                let Some((c, s)) = jacobi_rotation(a[p * n + p], a[q * n + q], a[p * n + q]) else {
                    continue;
                };
                rotated = true;
                rotate_cols(a, n, p, q, c, s);
                for k in 0..n {
                    let (apk, aqk) = (a[p * n + k], a[q * n + k]);
                    a[p * n + k] = c * apk - s * aqk;
                    a[q * n + k] = s * apk + c * aqk;
                }
                a[p * n + q] = 0.0;
                a[q * n + p] = 0.0;
                if let Some(v) = v.as_deref_mut() {
                    rotate_cols(v, n, p, q, c, s);
                }
            }
        }
        if !rotated {
            break;
        }
    }
}

/// The eigenvalues (ascending) of the symmetric matrix whose lower triangle `a` holds
/// (row-major `n x n`) and, when `want_v`, its eigenvectors as the columns of an `n x n`
/// row-major matrix. `None` when the input holds a NaN.
pub fn eigh(a: &[f64], n: usize, want_v: bool) -> Option<(Vec<f64>, Vec<f64>)> {
    let lower = |i: usize, j: usize| if i >= j { a[i * n + j] } else { a[j * n + i] };
    let mut id = vec![0.0; if want_v { n * n } else { 0 }];
    for i in 0..n.min(id.len()) {
        id[i * n + i] = 1.0;
    }
    let mut scale = 0f64;
    for i in 0..n {
        for j in 0..=i {
            let x = a[i * n + j];
            if x.is_nan() {
                return None;
            }
            scale = scale.max(x.abs());
        }
    }
    if scale.is_infinite() {
        return Some((vec![f64::NAN; n], id));
    }
    let scale = if scale > 0.0 { scale } else { 1.0 };
    let mut m: Vec<f64> = (0..n * n).map(|k| lower(k / n, k % n) / scale).collect();
    let mut v = id;
    jacobi(&mut m, n, want_v.then_some(v.as_mut_slice()));
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| m[i * n + i].total_cmp(&m[j * n + j]));
    let e = order.iter().map(|&i| m[i * n + i] * scale).collect();
    if !want_v {
        return Some((e, v));
    }
    let mut out = vec![0.0; n * n];
    for (col, &src) in order.iter().enumerate() {
        let big = (0..n).map(|r| v[r * n + src]).fold(0f64, |b, x| if x.abs() > b.abs() { x } else { b });
        let sign = if big < 0.0 { -1.0 } else { 1.0 };
        for r in 0..n {
            out[r * n + col] = sign * v[r * n + src];
        }
    }
    Some((e, out))
}

op_kernel! {
    struct SelfAdjointEig { ty: DataType, compute_v: bool }
    fn compute(&self, ctx) {
        let x = matrix_input(ctx, self.ty)?;
        let (count, n) = square_batch(ctx, &x, "input")?;
        let vals = x.to_f64_vec()?;
        let one = |b: usize| eigh(&vals[b * n * n..(b + 1) * n * n], n, self.compute_v);
        let Some(mats) = super::per_matrix(count, n, one) else {
            return Err(ctx.error("Self-adjoint eigen decomposition was not successful. The input might not be valid."));
        };
        let (e_dims, e) = super::eigenvalues(x.dims(), n, &mats)?;
        ctx.set_output(0, f64_tensor(self.ty, e_dims, e)?)?;
        let v = if self.compute_v {
            f64_tensor(self.ty, x.dims().to_vec(), collect_vec(x.dims(), mats.into_iter().flat_map(|(_, v)| v))?)?
        } else {
            f64_tensor(self.ty, vec![0], Vec::new())?
        };
        ctx.set_output(1, v)
    }
}

fn make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let ty = f64_op_type(n, "SelfAdjointEigV2")?;
    Ok(Box::new(SelfAdjointEig { ty, compute_v: super::bool_attr(n, "compute_v", true)? }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("SelfAdjointEigV2", make);
}
