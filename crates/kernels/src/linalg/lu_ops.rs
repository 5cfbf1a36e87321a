//! MatrixDeterminant, LogMatrixDeterminant, MatrixInverse and MatrixSolve through the LU
//! factorization of each matrix of the batch.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use super::lu::{transposed, Lu};
use super::{matrix_input, square_batch, PAR_WORK};
use crate::array::ext::util::kernel_dtype;
use crate::dispatch::dispatch;
use crate::math::elem::Float;
use crate::nn::common::each_chunk;
use crate::{KernelRegistry, OpContext, OpKernel};

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Det,
    LogDet,
    Inverse,
    Solve,
}

struct LuOp {
    kind: Kind,
    ty: DataType,
    adjoint: bool,
}

/// Runs `f` on each of `count` matrices of `n*n` elements writing `out_per` outputs each.
fn per_matrix<T: Float>(
    x: &[T],
    count: usize,
    n: usize,
    out_per: usize,
    f: impl Fn(usize, &[T], &mut [T]) + Sync,
) -> Result<Vec<T>, Status> {
    let mut out = ferroflow_core::alloc::zeroed::<T>(&[count, out_per])?;
    if out_per == 0 {
        return Ok(out);
    }
    each_chunk(&mut out, out_per, count > 1 && count * n * n * n >= PAR_WORK, |b, o| {
        f(b, &x[b * n * n..(b + 1) * n * n], o)
    });
    Ok(out)
}

impl LuOp {
    fn run<T: Float>(&self, ctx: &mut OpContext, x: &Tensor) -> Result<(), Status> {
        let (count, n) = square_batch(ctx, x, "Input")?;
        let xs = x.as_slice::<T>()?;
        let batch = x.dims()[..x.rank() - 2].to_vec();
        let adjoint = self.adjoint;
        let lu = |m: &[T]| Lu::new(if adjoint { transposed(m, n) } else { m.to_vec() }, n);
        match self.kind {
            Kind::Det => {
                let out = per_matrix(xs, count, n, 1, |_, m, o| {
                    let f = lu(m);
                    o[0] = (0..n).fold(f.sign, |acc, i| acc * f.a[i * n + i]);
                })?;
                ctx.set_output(0, Tensor::new(batch, out)?)
            }
            Kind::LogDet => {
                let out = per_matrix(xs, count, n, 2, |_, m, o| {
                    let f = lu(m);
                    let (mut sign, mut log) = (f.sign, T::ZERO);
                    for i in 0..n {
                        let d = f.a[i * n + i];
                        if d < T::ZERO {
                            sign = -sign;
                        }
                        log = log + d.abs().ln();
                    }
                    if f.min_abs_pivot() == T::ZERO {
                        sign = T::ZERO;
                    }
                    o[0] = sign;
                    o[1] = log;
                })?;
                let (sign, log): (Vec<T>, Vec<T>) = out.chunks(2).map(|c| (c[0], c[1])).unzip();
                ctx.set_output(0, Tensor::new(batch.clone(), sign)?)?;
                ctx.set_output(1, Tensor::new(batch, log)?)
            }
            Kind::Inverse | Kind::Solve => {
                // A⁻¹ solves A·X = I.
                let rhs = if self.kind == Kind::Solve { Some(solve_rhs(ctx, x, n)?) } else { None };
                let k = rhs.as_ref().map_or(n, |r| r.dims()[r.rank() - 1]);
                let bs = rhs.as_ref().map(|r| r.as_slice::<T>()).transpose()?;
                let singular = std::sync::atomic::AtomicBool::new(false);
                let out = per_matrix(xs, count, n, n * k, |b, m, o| {
                    let f = lu(m);
                    if f.min_abs_pivot() == T::ZERO {
                        singular.store(true, std::sync::atomic::Ordering::Relaxed);
                        return;
                    }
                    match bs {
                        Some(bs) => o.copy_from_slice(&bs[b * n * k..(b + 1) * n * k]),
                        None => (0..n).for_each(|i| o[i * n + i] = T::ONE),
                    }
                    f.solve(o, k);
                })?;
                if singular.into_inner() {
                    let what = if rhs.is_some() { "Input matrix" } else { "Input" };
                    return Err(ctx.error(format!("{what} is not invertible.")));
                }
                let shape = rhs.as_ref().unwrap_or(x).shape().clone();
                ctx.set_output(0, Tensor::new(shape, out)?)
            }
        }
    }
}

/// MatrixSolve's right-hand side (input 1) for the matrices `x` of `n` rows: the same
/// batch dimensions and type.
fn solve_rhs(ctx: &OpContext, x: &Tensor, n: usize) -> Result<Tensor, Status> {
    let rhs = ctx.input(1)?;
    let r = rhs.rank();
    if r != x.rank() || rhs.dims()[..r - 2] != x.dims()[..x.rank() - 2] || rhs.dims()[r - 2] != n {
        return Err(ctx.error(format!(
            "Input matrix and right-hand side must have the same batch dimensions and number of rows, got {} and {}",
            x.shape(),
            rhs.shape()
        )));
    }
    if rhs.dtype() != x.dtype() {
        return Err(ctx.error(format!("rhs is {} but matrix is {}", rhs.dtype(), x.dtype())));
    }
    Ok(rhs)
}

impl OpKernel for LuOp {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = matrix_input(ctx, self.ty)?;
        dispatch!(self.ty, ctx, [f32, f64], |T| self.run::<T>(ctx, &x))
    }
}

fn make(n: &NodeDef, kind: Kind) -> Result<Box<dyn OpKernel>, Status> {
    if matches!(kind, Kind::Inverse | Kind::Solve) && n.attr_type("T").is_ok_and(|t| t.is_complex()) {
        return super::complex_lu::make(n, kind == Kind::Solve);
    }
    let ty = kernel_dtype(n, "T", &[DataType::Float, DataType::Double])?;
    let adjoint = if matches!(kind, Kind::Inverse | Kind::Solve) { n.attr_bool("adjoint")? } else { false };
    Ok(Box::new(LuOp { kind, ty, adjoint }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("MatrixDeterminant", |n| make(n, Kind::Det));
    r.add("LogMatrixDeterminant", |n| make(n, Kind::LogDet));
    r.add("MatrixInverse", |n| make(n, Kind::Inverse));
    r.add("MatrixSolve", |n| make(n, Kind::Solve));
}
