//! `Svd`: singular values (descending) and singular vectors of each innermost matrix, by
//! one-sided Jacobi rotations in float64 (float32 is computed in float64), which keeps the
//! small singular values accurate. Zero singular values and `full_matrices` get basis
//! vectors orthogonal to the rest (from a Householder QR of the others). A non-finite input gives NaN everywhere, as
//! TensorFlow's. Each pair of singular vectors takes the sign that makes the largest
//! component of the one on the matrix's shorter side positive (TensorFlow's solver leaves
//! the signs to its iteration: compare singular vectors up to sign).

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, Status};
use rayon::prelude::*;

use super::{bool_attr, f64_op_type, f64_tensor, jacobi_rotation, matrix_input, PAR_WORK};
use crate::{KernelRegistry, OpKernel};

/// Sweeps after which Jacobi stops even if a pair was still above the threshold.
const MAX_SWEEPS: usize = 60;

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Rotates columns `p < q` of `cols` (each `len` long, stored one after another).
fn rotate(cols: &mut [f64], len: usize, p: usize, q: usize, c: f64, s: f64) {
    let (head, tail) = cols.split_at_mut(q * len);
    let (xp, xq) = (&mut head[p * len..(p + 1) * len], &mut tail[..len]);
    for (a, b) in xp.iter_mut().zip(xq.iter_mut()) {
        let (x, y) = (*a, *b);
        *a = c * x - s * y;
        *b = s * x + c * y;
    }
}

/// Orthogonalizes the columns of `g` (`k` columns of length `r`) by plane rotations,
/// applying each to the columns of `v` (`k` columns of length `k`) when given.
fn jacobi(g: &mut [f64], r: usize, k: usize, mut v: Option<&mut [f64]>) {
    for _ in 0..MAX_SWEEPS {
        let mut rotated = false;
        for p in 0..k {
            for q in p + 1..k {
                let (gp, gq) = (&g[p * r..(p + 1) * r], &g[q * r..(q + 1) * r]);
                let Some((c, s)) = jacobi_rotation(dot(gp, gp), dot(gq, gq), dot(gp, gq)) else {
                    continue;
                };
                rotated = true;
                rotate(g, r, p, q, c, s);
                if let Some(v) = v.as_deref_mut() {
                    rotate(v, k, p, q, c, s);
                }
            }
        }
        if !rotated {
            break;
        }
    }
}

/// Fills the missing (`None`) columns of length `r` with unit vectors orthogonal to all
/// the others: the trailing columns of a full QR of the present (orthonormal) ones.
fn complete(cols: &mut [Option<Vec<f64>>], r: usize) {
    let present: Vec<&Vec<f64>> = cols.iter().flatten().collect();
    let k = present.len();
    if k == cols.len() {
        return;
    }
    let mut a = vec![0.0; r * k];
    for (j, c) in present.iter().enumerate() {
        for (i, x) in c.iter().enumerate() {
            a[i * k + j] = *x;
        }
    }
    let (q, _) = crate::math::qr::qr(&a, r, k, true);
    for (next, c) in (k..).zip(cols.iter_mut().filter(|c| c.is_none())) {
        *c = Some((0..r).map(|i| q[i * r + next]).collect());
    }
}

/// The SVD of one tall matrix given as its `k` columns of length `r >= k`: singular
/// values (descending), the left vectors (`r_cols` columns: `k`, or `r` for a full basis)
/// and the right vectors (`k x k`, columns), both column by column.
fn tall(mut g: Vec<f64>, r: usize, k: usize, want: bool, r_cols: usize) -> (Vec<f64>, Vec<Vec<f64>>, Vec<Vec<f64>>) {
    let mut v = vec![0.0; if want { k * k } else { 0 }];
    for i in 0..k.min(v.len()) {
        v[i * k + i] = 1.0;
    }
    jacobi(&mut g, r, k, want.then_some(v.as_mut_slice()));
    let norms: Vec<f64> = (0..k).map(|j| dot(&g[j * r..(j + 1) * r], &g[j * r..(j + 1) * r]).sqrt()).collect();
    let mut order: Vec<usize> = (0..k).collect();
    order.sort_by(|&a, &b| norms[b].total_cmp(&norms[a]));
    let s = order.iter().map(|&j| norms[j]).collect();
    if !want {
        return (s, Vec::new(), Vec::new());
    }
    let mut us: Vec<Option<Vec<f64>>> = Vec::with_capacity(r_cols);
    let mut vs = Vec::with_capacity(k);
    for &j in &order {
        let vj = &v[j * k..(j + 1) * k];
        let big = vj.iter().fold(0f64, |b, &x| if x.abs() > b.abs() { x } else { b });
        let sign = if big < 0.0 { -1.0 } else { 1.0 };
        vs.push(vj.iter().map(|x| sign * x).collect());
        let n = norms[j];
        us.push((n > 0.0).then(|| g[j * r..(j + 1) * r].iter().map(|x| sign * x / n).collect()));
    }
    us.resize(r_cols, None);
    complete(&mut us, r);
    (s, us.into_iter().flatten().collect(), vs)
}

/// Row-major `rows x cols.len()` from columns.
fn from_cols(cols: &[Vec<f64>], rows: usize) -> Vec<f64> {
    let mut out = vec![0.0; rows * cols.len()];
    for (j, c) in cols.iter().enumerate() {
        for (i, x) in c.iter().enumerate() {
            out[i * cols.len() + j] = *x;
        }
    }
    out
}

/// The SVD of a row-major `m x n` matrix: singular values (descending) and, when `want`,
/// `u` (`m x m` when `full`, else `m x min(m, n)`) and `v` (`n x n` or `n x min(m, n)`),
/// row-major, with `a = u·diag(s)·vᵀ`.
pub fn svd(a: &[f64], m: usize, n: usize, want: bool, full: bool) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let p = m.min(n);
    let (uc, vc) = if full { (m, n) } else { (p, p) };
    let sizes = |s: usize, u: usize, v: usize| if want { (s, u, v) } else { (s, 0, 0) };
    if a.iter().any(|x| !x.is_finite()) {
        let (s, u, v) = sizes(p, m * uc, n * vc);
        return (vec![f64::NAN; s], vec![f64::NAN; u], vec![f64::NAN; v]);
    }
    let scale = a.iter().fold(0f64, |b, x| b.max(x.abs()));
    let scale = if scale > 0.0 { scale } else { 1.0 };
    // The columns of the tall one of a and aᵀ: a's columns when m >= n, else its rows.
    let cols: Vec<f64> = if m >= n {
        (0..n * m).map(|t| a[(t % m) * n + t / m] / scale).collect()
    } else {
        a.iter().map(|x| x / scale).collect()
    };
    let (r, rc) = if m >= n { (m, uc) } else { (n, vc) };
    let (s, left, right) = tall(cols, r, p, want, rc);
    let s = s.into_iter().map(|x| x * scale).collect();
    if !want {
        return (s, Vec::new(), Vec::new());
    }
    // For aᵀ = U'·S·V'ᵀ, a = V'·S·U'ᵀ: the roles swap.
    // The short side's basis (p x p) is complete whether or not `full`.
    let (ucols, vcols) = if m >= n { (left, right) } else { (right, left) };
    (s, from_cols(&ucols, m), from_cols(&vcols, n))
}

op_kernel! {
    struct Svd { ty: DataType, compute_uv: bool, full: bool }
    fn compute(&self, ctx) {
        let x = matrix_input(ctx, self.ty)?;
        let rank = x.rank();
        if rank < 2 {
            return Err(ctx.error(format!("input must have rank >= 2, got {rank}")));
        }
        let (m, n) = (x.dims()[rank - 2], x.dims()[rank - 1]);
        let p = m.min(n);
        let (uc, vc) = if self.full { (m, n) } else { (p, p) };
        let batch = &x.dims()[..rank - 2];
        let count: usize = batch.iter().product();
        let dims = |tail: &[usize]| -> Vec<usize> { batch.iter().chain(tail).copied().collect() };
        for d in [dims(&[p]), dims(&[m, uc]), dims(&[n, vc])] {
            ferroflow_core::check_tensor_alloc(&d, self.ty).map_err(|e| ctx.error_with(e))?;
        }
        let vals = x.to_f64_vec()?;
        let one = |b: usize| svd(&vals[b * m * n..(b + 1) * m * n], m, n, self.compute_uv, self.full);
        let mats: Vec<(Vec<f64>, Vec<f64>, Vec<f64>)> = if count > 1 && count * m * n * p >= PAR_WORK {
            (0..count).into_par_iter().map(one).collect()
        } else {
            (0..count).map(one).collect()
        };
        let mut s = ferroflow_core::alloc::with_capacity::<f64>(&dims(&[p]))?;
        let (mut u, mut v) = if self.compute_uv {
            let u = ferroflow_core::alloc::with_capacity::<f64>(&dims(&[m, uc]))?;
            (u, ferroflow_core::alloc::with_capacity::<f64>(&dims(&[n, vc]))?)
        } else {
            (Vec::new(), Vec::new())
        };
        for (sb, ub, vb) in mats {
            s.extend(sb);
            u.extend(ub);
            v.extend(vb);
        }
        ctx.set_output(0, f64_tensor(self.ty, dims(&[p]), s)?)?;
        if self.compute_uv {
            ctx.set_output(1, f64_tensor(self.ty, dims(&[m, uc]), u)?)?;
            ctx.set_output(2, f64_tensor(self.ty, dims(&[n, vc]), v)?)
        } else {
            ctx.set_output(1, f64_tensor(self.ty, vec![0], Vec::new())?)?;
            ctx.set_output(2, f64_tensor(self.ty, vec![0], Vec::new())?)
        }
    }
}

fn make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let ty = f64_op_type(n, "Svd")?;
    Ok(Box::new(Svd { ty, compute_uv: bool_attr(n, "compute_uv", true)?, full: bool_attr(n, "full_matrices", false)? }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("Svd", make);
}
