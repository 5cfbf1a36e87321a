//! TridiagonalSolve (Gaussian elimination with partial pivoting as LAPACK's gtsv, the
//! Thomas algorithm without, or LAPACK's lagtf/lagts with perturbed tiny pivots under
//! `perturb_singular`) and TridiagonalMatMul, over equal batch dimensions. As in
//! TensorFlow, a singular system gives NaN (TensorFlow only logs a warning).

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, Status, Tensor};

use super::bool_attr;
use crate::array::ext::util::kernel_dtype;
use crate::dispatch::dispatch;
use crate::math::elem::Float;
use crate::{KernelRegistry, OpContext, OpKernel};

/// Machine limits of the solve's element types.
pub(crate) trait Limits: Float {
    /// The machine epsilon.
    const EPS: Self;
    /// The smallest normal number (LAPACK's safe minimum).
    const SAFE_MIN: Self;
}

impl Limits for f32 {
    const EPS: f32 = f32::EPSILON;
    const SAFE_MIN: f32 = f32::MIN_POSITIVE;
}

impl Limits for f64 {
    const EPS: f64 = f64::EPSILON;
    const SAFE_MIN: f64 = f64::MIN_POSITIVE;
}

/// Checks LinearAlgebraOp's input rules (each of rank >= 2, one rank, equal batch
/// dimensions, the kernel's type); returns the number of batch matrices.
pub(crate) fn same_batches(ctx: &OpContext, xs: &[Tensor], ty: DataType) -> Result<usize, Status> {
    for (i, x) in xs.iter().enumerate() {
        if x.rank() < 2 {
            return Err(ctx.error(format!("Input tensor {i} must have rank >= 2, got {}", x.rank())));
        }
        if x.dtype() != ty {
            return Err(ctx.error(format!("input {i} is {} but T is {ty}", x.dtype())));
        }
    }
    let r = xs[0].rank();
    if xs.iter().any(|x| x.rank() != r) {
        return Err(ctx.error("All input tensors must have the same rank."));
    }
    let batch = &xs[0].dims()[..r - 2];
    if xs.iter().any(|x| &x.dims()[..r - 2] != batch) {
        return Err(ctx.error("All input tensors must have the same outer dimensions."));
    }
    Ok(batch.iter().product())
}

/// Multiplies `pivot` away from zero until dividing `row` by it cannot overflow (the
/// logic of TensorFlow's MaybePerturbPivot, from LAPACK's lagts).
fn perturb_pivot<T: Limits>(mut perturb: T, pivot: &mut T, row: &mut [T]) {
    let one = T::ONE;
    let safemin = T::SAFE_MIN;
    let bignum = one / safemin;
    let mut abs_pivot = pivot.abs();
    if abs_pivot >= one {
        return;
    }
    perturb = if perturb.abs() > safemin { perturb.abs() } else { safemin };
    if *pivot < T::ZERO {
        perturb = -perturb;
    }
    let max_factor = row.iter().fold(T::ZERO, |m, v| if v.abs() > m { v.abs() } else { m });
    let two = one + one;
    let mut stop = false;
    while abs_pivot < one && !stop {
        if abs_pivot < safemin {
            if abs_pivot == T::ZERO || max_factor * safemin > abs_pivot {
                *pivot = *pivot + perturb;
                perturb = perturb * two;
            } else {
                *pivot = *pivot * bignum;
                row.iter_mut().for_each(|v| *v = *v * bignum);
                stop = true;
            }
        } else if max_factor > abs_pivot * bignum {
            *pivot = *pivot + perturb;
            perturb = perturb * two;
        } else {
            stop = true;
        }
        abs_pivot = pivot.abs();
    }
}

/// `dst = a - f·b` row-wise.
fn axpy<T: Float>(dst: &mut [T], a: &[T], f: T, b: &[T]) {
    for ((d, &x), &y) in dst.iter_mut().zip(a).zip(b) {
        *d = x - f * y;
    }
}

/// Solves one system: `sup`, `d`, `sub` the diagonals (length n), `rhs` and `x` n×k.
/// Returns false when the matrix is singular (`x` is then to be NaN).
pub(crate) fn solve<T: Limits>(sup: &[T], d: &[T], sub: &[T], rhs: &[T], x: &mut [T], k: usize, mode: Mode) -> bool {
    let n = d.len();
    let z = T::ZERO;
    if n == 0 {
        return true;
    }
    let row = |i: usize| i * k..(i + 1) * k;
    if mode == Mode::Thomas || (mode == Mode::Pivot && n == 1) {
        // The superdiagonal of the unit upper factor.
        let mut u = vec![z; n];
        for i in 0..n {
            let (l, ui1) = if i == 0 { (z, z) } else { (sub[i], u[i - 1]) };
            let denom = if i == 0 { d[0] } else { d[i] - l * ui1 };
            if denom == z {
                return false;
            }
            u[i] = if i + 1 < n { sup[i] / denom } else { z };
            for j in 0..k {
                let p = if i == 0 { z } else { x[(i - 1) * k + j] };
                x[i * k + j] = (rhs[i * k + j] - l * p) / denom;
            }
        }
        for i in (0..n - 1).rev() {
            let (head, tail) = x.split_at_mut((i + 1) * k);
            head[i * k..].iter_mut().zip(&tail[..k]).for_each(|(a, &b)| *a = *a - u[i] * b);
        }
        return true;
    }
    // u[i] = (diagonal, superdiagonal, second superdiagonal) of row i of U.
    let mut u = vec![[z; 3]; n];
    u[0] = [d[0], sup[0], z];
    x[row(0)].copy_from_slice(&rhs[row(0)]);
    let perturb = mode == Mode::Perturb;
    // (A single equation has no superdiagonal: its tolerance is from the diagonal alone.)
    let s0 = if n > 1 { sup[0].abs() } else { z };
    let mut max_abs_u = if d[0].abs() > s0 { d[0].abs() } else { s0 };
    let mut scale1 = d[0].abs() + sup[0].abs();
    let maxf = |a: T, b: T| if b > a { b } else { a };
    for i in 0..n - 1 {
        let last = i == n - 2;
        let (s1, d1, l1) = (sup[i + 1], d[i + 1], sub[i + 1]);
        let swap = if perturb {
            u[i + 1][0] = d1;
            let mut scale2 = l1.abs() + d1.abs();
            if !last {
                scale2 = scale2 + s1.abs();
            }
            if l1 == z {
                scale1 = scale2;
                u[i + 1][1] = s1;
                u[i][2] = z;
                x[row(i + 1)].copy_from_slice(&rhs[row(i + 1)]);
                None
            } else {
                let piv1 = if u[i][0] == z { z } else { u[i][0].abs() / scale1 };
                let piv2 = l1.abs() / scale2;
                if piv2 <= piv1 {
                    scale1 = scale2;
                }
                Some(piv2 > piv1)
            }
        } else {
            let keep = u[i][0].abs() >= l1.abs();
            if keep && u[i][0] == z {
                return false;
            }
            Some(!keep)
        };
        match swap {
            None => {}
            Some(false) => {
                let f = l1 / u[i][0];
                u[i + 1][0] = d1 - f * u[i][1];
                let (lo, hi) = x.split_at_mut((i + 1) * k);
                axpy(&mut hi[..k], &rhs[row(i + 1)], f, &lo[i * k..]);
                if perturb || !last {
                    u[i + 1][1] = s1;
                    u[i][2] = z;
                }
            }
            Some(true) => {
                let f = u[i][0] / l1;
                u[i][0] = l1;
                u[i + 1][0] = u[i][1] - f * d1;
                u[i][1] = d1;
                if !last {
                    u[i][2] = s1;
                    u[i + 1][1] = -f * s1;
                }
                let (lo, hi) = x.split_at_mut((i + 1) * k);
                let xi = &mut lo[i * k..];
                for ((h, xv), &r) in hi[..k].iter_mut().zip(xi.iter_mut()).zip(&rhs[row(i + 1)]) {
                    *h = *xv - f * r;
                    *xv = r;
                }
            }
        }
        if perturb && !last {
            max_abs_u = u[i].iter().fold(max_abs_u, |m, v| maxf(m, v.abs()));
        }
    }
    if !perturb && u[n - 1][0] == z {
        return false;
    }
    max_abs_u = maxf(max_abs_u, u[n - 1][0].abs());
    let tol = T::EPS * max_abs_u;
    let mut buf = vec![z; k];
    for i in (0..n).rev() {
        for j in 0..k {
            let mut v = x[i * k + j];
            if i + 1 < n {
                v = v - u[i][1] * x[(i + 1) * k + j];
            }
            if i + 2 < n {
                v = v - u[i][2] * x[(i + 2) * k + j];
            }
            buf[j] = v;
        }
        let mut denom = u[i][0];
        if perturb {
            let t = if i + 1 == n || denom >= z { tol } else { -tol };
            perturb_pivot(t, &mut denom, &mut buf);
            let inv = T::ONE / denom;
            x[row(i)].iter_mut().zip(&buf).for_each(|(o, &b)| *o = b * inv);
        } else {
            x[row(i)].iter_mut().zip(&buf).for_each(|(o, &b)| *o = b / denom);
        }
    }
    true
}

/// The elimination TridiagonalSolve uses.
#[derive(Clone, Copy, PartialEq, Debug)]
pub(crate) enum Mode {
    Thomas,
    Pivot,
    Perturb,
}

struct TriSolve {
    ty: DataType,
    mode: Mode,
}

impl TriSolve {
    fn run<T: Limits>(&self, ctx: &mut OpContext, diags: &Tensor, rhs: &Tensor) -> Result<(), Status> {
        let count = same_batches(ctx, &[diags.clone(), rhs.clone()], self.ty)?;
        let r = diags.rank();
        let (rows, n) = (diags.dims()[r - 2], diags.dims()[r - 1]);
        if rows != 3 {
            return Err(
                ctx.error(format!("Expected diagonals to be provided as a matrix with 3 rows, got {rows} rows."))
            );
        }
        let (m, k) = (rhs.dims()[r - 2], rhs.dims()[r - 1]);
        if m != n {
            return Err(ctx
                .error(format!("Expected the same number of left-hand sides and right-hand sides, got {n} and {m}.")));
        }
        let (dv, bv) = (diags.as_slice::<T>()?, rhs.as_slice::<T>()?);
        let mut out = ferroflow_core::alloc::zeroed::<T>(rhs.dims())?;
        if n * k > 0 {
            for b in 0..count {
                let dg = &dv[b * 3 * n..(b + 1) * 3 * n];
                let (sup, rest) = dg.split_at(n);
                let (d, sub) = rest.split_at(n);
                let x = &mut out[b * n * k..(b + 1) * n * k];
                if !solve(sup, d, sub, &bv[b * n * k..(b + 1) * n * k], x, k, self.mode) {
                    x.iter_mut().for_each(|v| *v = T::NAN);
                }
            }
        }
        ctx.set_output(0, Tensor::new(rhs.shape().clone(), out)?)
    }
}

impl OpKernel for TriSolve {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let (diags, rhs) = (ctx.input(0)?, ctx.input(1)?);
        dispatch!(self.ty, ctx, [f32, f64], |T| self.run::<T>(ctx, &diags, &rhs))
    }
}

fn make_solve(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let ty = kernel_dtype(n, "T", &[DataType::Float, DataType::Double])?;
    let pivoting = bool_attr(n, "partial_pivoting", true)?;
    let perturb = bool_attr(n, "perturb_singular", false)?;
    if perturb && !pivoting {
        return Err(Status::invalid_argument(format!(
            "node '{}' (op TridiagonalSolve): Setting perturb_singular requires also setting partial_pivoting.",
            n.name
        ))
        .with_node(&n.name));
    }
    let mode = match (pivoting, perturb) {
        (true, true) => Mode::Perturb,
        (true, false) => Mode::Pivot,
        _ => Mode::Thomas,
    };
    Ok(Box::new(TriSolve { ty, mode }))
}

struct TriMatMul {
    ty: DataType,
}

impl TriMatMul {
    fn run<T: Float>(&self, ctx: &mut OpContext, xs: &[Tensor]) -> Result<(), Status> {
        let count = same_batches(ctx, xs, self.ty)?;
        let rhs = &xs[3];
        let r = rhs.rank();
        let (n, k) = (rhs.dims()[r - 2], rhs.dims()[r - 1]);
        for (x, what) in xs[..3].iter().zip(["superdiagonal", "main diagonal", "subdiagonal"]) {
            if x.dims()[r - 2] != 1 || x.dims()[r - 1] != n {
                return Err(ctx.error(format!("Invalid {what} shape.")));
            }
        }
        let (sup, d, sub, b) =
            (xs[0].as_slice::<T>()?, xs[1].as_slice::<T>()?, xs[2].as_slice::<T>()?, rhs.as_slice::<T>()?);
        let mut out = ferroflow_core::alloc::zeroed::<T>(rhs.dims())?;
        for m in 0..count {
            for i in 0..n {
                let di = m * n + i;
                for j in 0..k {
                    let at = |row: usize| b[(m * n + row) * k + j];
                    let mut v = d[di] * at(i);
                    if i + 1 < n {
                        v = v + sup[di] * at(i + 1);
                    }
                    if i > 0 {
                        v = v + sub[di] * at(i - 1);
                    }
                    out[(m * n + i) * k + j] = v;
                }
            }
        }
        ctx.set_output(0, Tensor::new(rhs.shape().clone(), out)?)
    }
}

impl OpKernel for TriMatMul {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let xs = (0..4).map(|i| ctx.input(i)).collect::<Result<Vec<_>, _>>()?;
        dispatch!(self.ty, ctx, [f32, f64], |T| self.run::<T>(ctx, &xs))
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("TridiagonalSolve", make_solve);
    r.add("TridiagonalMatMul", |n| {
        Ok(Box::new(TriMatMul { ty: kernel_dtype(n, "T", &[DataType::Float, DataType::Double])? }))
    });
}

#[cfg(test)]
#[path = "tridiagonal_tests.rs"]
mod tests;
