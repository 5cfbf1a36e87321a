//! `Eig` (`tf.linalg.eig`, `tf.linalg.eigvals`): the complex eigenvalues and, with
//! `compute_v`, the unit-norm eigenvectors (columns) of each square matrix, real or complex,
//! computed in complex128 as TensorFlow's solver does it: a complex Schur form (Householder
//! reduction to Hessenberg form, then shifted QR sweeps of Givens rotations), the
//! eigenvalues its diagonal in the order the sweeps leave them, the eigenvectors from the
//! triangular factor by back substitution. A matrix whose sweeps do not converge (NaN
//! input) is INVALID_ARGUMENT, TensorFlow's error. Eigenvectors are unique up to a complex
//! phase, and eigenvalues of equal modulus may come in another order: compare as sets.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor, C128, C64};

use super::square_batch;
use crate::array::util::collect_vec;
use crate::{KernelRegistry, OpKernel};

type C = C128;

/// Row-major `n`×`n` complex matrix helpers.
fn at(n: usize, i: usize, j: usize) -> usize {
    i * n + j
}

fn abs1(z: C) -> f64 {
    z.re.abs() + z.im.abs()
}

/// Reduces `a` to upper Hessenberg form by Householder reflections; `q` (identity on
/// entry) accumulates them, so that `a_in = q a_out q^H`.
fn hessenberg(a: &mut [C], q: &mut [C], n: usize) {
    for k in 0..n.saturating_sub(2) {
        let alpha: f64 = (k + 1..n).map(|i| a[at(n, i, k)].norm_sqr()).sum::<f64>().sqrt();
        if alpha == 0.0 {
            continue;
        }
        let x0 = a[at(n, k + 1, k)];
        let phase = if x0.norm() == 0.0 { C::new(1.0, 0.0) } else { x0 / x0.norm() };
        // v = x + phase·alpha·e1, H = I - 2 v v^H / (v^H v).
        let mut v: Vec<C> = (k + 1..n).map(|i| a[at(n, i, k)]).collect();
        v[0] += phase * alpha;
        let vv: f64 = v.iter().map(|z| z.norm_sqr()).sum();
        if vv == 0.0 {
            continue;
        }
        let beta = 2.0 / vv;
        // a = H a (rows k+1..n).
        for j in 0..n {
            let s: C = v.iter().enumerate().map(|(r, vr)| vr.conj() * a[at(n, k + 1 + r, j)]).sum();
            let s = s * beta;
            for (r, vr) in v.iter().enumerate() {
                a[at(n, k + 1 + r, j)] -= vr * s;
            }
        }
        // a = a H, q = q H (columns k+1..n).
        for m in [&mut *a, &mut *q] {
            for i in 0..n {
                let s: C = v.iter().enumerate().map(|(c, vc)| m[at(n, i, k + 1 + c)] * vc).sum();
                let s = s * beta;
                for (c, vc) in v.iter().enumerate() {
                    m[at(n, i, k + 1 + c)] -= s * vc.conj();
                }
            }
        }
        for i in k + 2..n {
            a[at(n, i, k)] = C::new(0.0, 0.0);
        }
    }
}

/// The Givens rotation `(c, s)` (c real) with `[c s; -s̄ c] [x; y] = [r; 0]`.
fn givens(x: C, y: C) -> (f64, C) {
    let ny = y.norm();
    if ny == 0.0 {
        return (1.0, C::new(0.0, 0.0));
    }
    let nx = x.norm();
    if nx == 0.0 {
        return (0.0, y.conj() / ny);
    }
    let r = nx.hypot(ny);
    let c = nx / r;
    let s = (x / nx) * y.conj() / r;
    (c, s)
}

/// Applies the rotation to rows `i`, `i+1` of `m` (columns `from..n`) from the left.
fn rot_rows(m: &mut [C], n: usize, i: usize, from: usize, (c, s): (f64, C)) {
    for j in from..n {
        let (x, y) = (m[at(n, i, j)], m[at(n, i + 1, j)]);
        m[at(n, i, j)] = x * c + s * y;
        m[at(n, i + 1, j)] = -s.conj() * x + y * c;
    }
}

/// Applies the rotation's adjoint to columns `i`, `i+1` of `m` (rows `0..to`) from the right.
fn rot_cols(m: &mut [C], n: usize, i: usize, to: usize, (c, s): (f64, C)) {
    for r in 0..to {
        let (x, y) = (m[at(n, r, i)], m[at(n, r, i + 1)]);
        m[at(n, r, i)] = x * c + y * s.conj();
        m[at(n, r, i + 1)] = -s * x + y * c;
    }
}

/// The eigenvalue of the trailing 2×2 block of `t[..=iu]` nearer its last diagonal entry
/// (Wilkinson's shift), or an exceptional shift every 10 sweeps without deflation.
fn shift(t: &[C], n: usize, iu: usize, iter: usize) -> C {
    let (a, b, c, d) = (t[at(n, iu - 1, iu - 1)], t[at(n, iu - 1, iu)], t[at(n, iu, iu - 1)], t[at(n, iu, iu)]);
    if iter.is_multiple_of(10) && iter > 0 {
        return d + C::new(abs1(c) + if iu >= 2 { abs1(t[at(n, iu - 1, iu - 2)]) } else { 0.0 }, 0.0);
    }
    let tr_half = (a + d) * 0.5;
    let det = a * d - b * c;
    let disc = (tr_half * tr_half - det).sqrt();
    let (l1, l2) = (tr_half + disc, tr_half - disc);
    if (l1 - d).norm() <= (l2 - d).norm() {
        l1
    } else {
        l2
    }
}

/// Reduces the Hessenberg `t` to upper triangular by shifted QR sweeps, accumulating the
/// rotations into `q`; false when it does not converge.
fn schur(t: &mut [C], q: &mut [C], n: usize, vectors: bool) -> bool {
    if n < 2 {
        return t.iter().all(|z| z.re.is_finite() && z.im.is_finite());
    }
    let negligible = |t: &[C], i: usize| {
        let s = abs1(t[at(n, i, i)]) + abs1(t[at(n, i + 1, i + 1)]);
        abs1(t[at(n, i + 1, i)]) <= f64::EPSILON * s || abs1(t[at(n, i + 1, i)]) < f64::MIN_POSITIVE
    };
    let max_iter = 30 * n;
    let (mut iu, mut iter, mut total) = (n - 1, 0usize, 0usize);
    loop {
        while iu > 0 && negligible(t, iu - 1) {
            t[at(n, iu, iu - 1)] = C::new(0.0, 0.0);
            iter = 0;
            iu -= 1;
        }
        if iu == 0 {
            return true;
        }
        iter += 1;
        total += 1;
        if total > max_iter || !t[at(n, iu, iu)].re.is_finite() || !t[at(n, iu, iu)].im.is_finite() {
            return false;
        }
        let mut il = iu - 1;
        while il > 0 && !negligible(t, il - 1) {
            il -= 1;
        }
        let mu = shift(t, n, iu, iter);
        let mut g = givens(t[at(n, il, il)] - mu, t[at(n, il + 1, il)]);
        for i in il..iu {
            if i > il {
                g = givens(t[at(n, i, i - 1)], t[at(n, i + 1, i - 1)]);
            }
            let from = if i > il { i - 1 } else { i };
            rot_rows(t, n, i, from, g);
            if i > il {
                t[at(n, i + 1, i - 1)] = C::new(0.0, 0.0);
            }
            // Rows above the active block take the rotation too: `t` stays the full factor.
            rot_cols(t, n, i, (i + 3).min(iu + 1), g);
            if vectors {
                rot_cols(q, n, i, n, g);
            }
        }
    }
}

/// Eigenvalues and (unit-norm, as columns, row-major) eigenvectors of the `n`×`n` `a`.
fn eig(a: &[C], n: usize, vectors: bool) -> Option<(Vec<C>, Vec<C>)> {
    let mut t = a.to_vec();
    let mut q = vec![C::new(0.0, 0.0); n * n];
    for i in 0..n {
        q[at(n, i, i)] = C::new(1.0, 0.0);
    }
    hessenberg(&mut t, &mut q, n);
    if !schur(&mut t, &mut q, n, vectors) {
        return None;
    }
    let e: Vec<C> = (0..n).map(|i| t[at(n, i, i)]).collect();
    if !vectors {
        return Some((e, vec![]));
    }
    // Back substitution on the triangular factor: column k of x solves (T - λk) x = 0.
    let norm: f64 = t.iter().map(|z| z.norm()).fold(0.0, f64::max);
    let tiny = (f64::EPSILON * norm).max(f64::MIN_POSITIVE);
    let mut x = vec![C::new(0.0, 0.0); n * n];
    for k in 0..n {
        x[at(n, k, k)] = C::new(1.0, 0.0);
        for j in (0..k).rev() {
            let s: C = (j + 1..=k).map(|l| t[at(n, j, l)] * x[at(n, l, k)]).sum();
            let mut d = t[at(n, j, j)] - e[k];
            if d.norm() == 0.0 {
                d = C::new(tiny, 0.0);
            }
            x[at(n, j, k)] = -s / d;
        }
    }
    let mut v = vec![C::new(0.0, 0.0); n * n];
    for i in 0..n {
        for k in 0..n {
            v[at(n, i, k)] = (0..=k).map(|l| q[at(n, i, l)] * x[at(n, l, k)]).sum::<C>();
        }
    }
    for k in 0..n {
        let nrm: f64 = (0..n).map(|i| v[at(n, i, k)].norm_sqr()).sum::<f64>().sqrt();
        if nrm != 0.0 {
            for i in 0..n {
                v[at(n, i, k)] /= nrm;
            }
        }
    }
    Some((e, v))
}

op_kernel! {
    struct Eig { ty: DataType, out: DataType, compute_v: bool }
    fn compute(&self, ctx) {
        let x = super::matrix_input(ctx, self.ty)?;
        let (count, n) = square_batch(ctx, &x, "input")?;
        let vals: Vec<C> = match x.dtype() {
            DataType::Float => x.as_slice::<f32>()?.iter().map(|&v| C::new(f64::from(v), 0.0)).collect(),
            DataType::Double => x.as_slice::<f64>()?.iter().map(|&v| C::new(v, 0.0)).collect(),
            DataType::Complex64 => {
                x.as_slice::<C64>()?.iter().map(|v| C::new(f64::from(v.re), f64::from(v.im))).collect()
            }
            _ => x.as_slice::<C128>()?.to_vec(),
        };
        let one = |b: usize| eig(&vals[b * n * n..(b + 1) * n * n], n, self.compute_v);
        let Some(mats) = super::per_matrix(count, n, one) else {
            return Err(ctx.error("Eigen decomposition was not successful. The input might not be valid."));
        };
        let (e_dims, e) = super::eigenvalues(x.dims(), n, &mats)?;
        ctx.set_output(0, self.complex(e_dims, e)?)?;
        let v = if self.compute_v {
            self.complex(x.dims().to_vec(), collect_vec(x.dims(), mats.into_iter().flat_map(|(_, v)| v))?)?
        } else {
            self.complex(vec![0], Vec::new())?
        };
        ctx.set_output(1, v)
    }
}

impl Eig {
    /// A complex128 result as a tensor of `Tout`.
    fn complex(&self, dims: Vec<usize>, v: Vec<C>) -> Result<Tensor, Status> {
        if self.out == DataType::Complex64 {
            let narrow = collect_vec(&dims, v.into_iter().map(|z| C64::new(z.re as f32, z.im as f32)))?;
            return Tensor::new(dims, narrow);
        }
        Tensor::new(dims, v)
    }
}

fn make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let (ty, out) = (n.attr_type("T")?, n.attr_type("Tout")?);
    // TensorFlow's kernels: float to complex64, double to complex128, complex to itself.
    let ok = matches!(
        (ty, out),
        (DataType::Float, DataType::Complex64)
            | (DataType::Double, DataType::Complex128)
            | (DataType::Complex64, DataType::Complex64)
            | (DataType::Complex128, DataType::Complex128)
    );
    if !ok {
        return Err(Status::not_found(format!(
            "node '{}': no Eig kernel for T={ty}, Tout={out} (float takes complex64, double complex128, a complex \
             type itself)",
            n.name
        ))
        .with_node(&n.name));
    }
    let compute_v = if n.has_attr("compute_v") { n.attr_bool("compute_v")? } else { true };
    Ok(Box::new(Eig { ty, out, compute_v }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("Eig", make);
}

#[cfg(test)]
#[path = "eig_tests.rs"]
mod tests;
