//! Gradient ops of the sparse combinations: `SparseAddGrad` (the sum's gradient handed back
//! to the entries of `a` and `b` that made each sum entry; entries the threshold dropped get
//! zero) and `SparseSliceGrad` (the slice's gradient put back at the input entries the slice
//! kept). Both walk sorted indices as TensorFlow's kernels do.

use std::cmp::Ordering;

use ferroflow_core::{half, Shape, Status, Tensor, TensorType};

use super::util::{indices_matrix, Indices};
use crate::dispatch::dispatch;
use crate::{KernelRegistry, OpContext, OpKernel};

fn check_vector(ctx: &OpContext, what: &str, t: &Tensor) -> Result<(), Status> {
    if t.rank() != 1 {
        return Err(ctx.error(format!("{what} should be a vector but received shape {}", t.shape())));
    }
    Ok(())
}

/// `grad` scattered to `n` entries: entry `to[j]` gets `grad[from[j]]`, the rest zero.
fn scatter<T: TensorType + Clone + Default>(
    grad: &Tensor,
    n: usize,
    pairs: &[(usize, usize)],
) -> Result<Tensor, Status> {
    let g = grad.as_slice::<T>()?;
    let mut out = ferroflow_core::alloc::zeroed::<T>(&[n])?;
    for &(to, from) in pairs {
        out[to] = g[from].clone();
    }
    Tensor::new(Shape::new(vec![n]), out)
}

struct SparseAddGrad;

/// Advances one side's cursor against sum entry `k` (TensorFlow's walk): a match takes the
/// gradient, an entry below the sum's moves on (it was dropped), one above waits.
fn step(side: &Indices, i: &mut usize, sum: &Indices, k: usize, pairs: &mut Vec<(usize, usize)>) -> bool {
    match side.row(*i).cmp(sum.row(k)) {
        Ordering::Equal => {
            pairs.push((*i, k));
            *i += 1;
            true
        }
        Ordering::Less => {
            *i += 1;
            false
        }
        Ordering::Greater => true,
    }
}

/// Matches the rest of `side` (from row `*i`) with the rows of `sum` from `*k` on, once the
/// other operand is used up.
fn drain(side: &Indices, i: &mut usize, sum: &Indices, k: &mut usize, pairs: &mut Vec<(usize, usize)>) {
    while *i < side.n && *k < sum.n {
        if step(side, i, sum, *k, pairs) {
            *k += 1;
        }
    }
}

impl OpKernel for SparseAddGrad {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let grad = ctx.input(0)?;
        let a = indices_matrix(ctx, "Input a_indices", &ctx.input(1)?)?;
        let b = indices_matrix(ctx, "Input b_indices", &ctx.input(2)?)?;
        let sum = indices_matrix(ctx, "Input sum_indices", &ctx.input(3)?)?;
        check_vector(ctx, "Input backprop_val_grad", &grad)?;
        if a.rank != b.rank || a.rank != sum.rank {
            return Err(ctx.error(format!(
                "The densified operands should have the same ndims; for A, B, sum got: {}, {}, {}",
                a.rank, b.rank, sum.rank
            )));
        }
        if grad.dims()[0] != sum.n {
            return Err(ctx.error(format!(
                "# elements of backprop_val_grad and # rows of sum_indices should match (#nnz of sum): got {} and {}",
                grad.dims()[0],
                sum.n
            )));
        }
        let (mut pa, mut pb) = (Vec::new(), Vec::new());
        let (mut i, mut j, mut k) = (0, 0, 0);
        while i < a.n && j < b.n && k < sum.n {
            let ga = step(&a, &mut i, &sum, k, &mut pa);
            let gb = step(&b, &mut j, &sum, k, &mut pb);
            if ga && gb {
                k += 1;
            }
        }
        drain(&a, &mut i, &sum, &mut k, &mut pa);
        drain(&b, &mut j, &sum, &mut k, &mut pb);
        let (ga, gb) = dispatch!(
            grad.dtype(),
            ctx,
            [f32, f64, i32, i64, i16, i8, u8, u16, u32, u64, half::f16, half::bf16],
            |T| Ok((scatter::<T>(&grad, a.n, &pa)?, scatter::<T>(&grad, b.n, &pb)?))
        )?;
        ctx.set_output(0, ga)?;
        ctx.set_output(1, gb)
    }
}

op_kernel! {
    struct SparseSliceGrad;
    fn compute(&self, ctx) {
        let grad = ctx.input(0)?;
        let input = indices_matrix(ctx, "Input input_indices", &ctx.input(1)?)?;
        let start_t = ctx.input(2)?;
        let out = indices_matrix(ctx, "Input output_indices", &ctx.input(3)?)?;
        check_vector(ctx, "Input backprop_val_grad", &grad)?;
        check_vector(ctx, "Input input_start", &start_t)?;
        let start = crate::array::util::index_vec(&start_t).map_err(|e| ctx.error(e.message))?;
        if input.rank != out.rank {
            return Err(ctx.error(format!(
                "The input and output should have the same ndims: got: {} and {}",
                input.rank, out.rank
            )));
        }
        if start.len() != input.rank {
            return Err(ctx.error(format!(
                "The input_start should have as many entries as input_indices has columns: got {} and {}",
                start.len(),
                input.rank
            )));
        }
        if grad.dims()[0] != out.n {
            return Err(ctx.error(format!(
                "# elements of backprop_val_grad and # rows of output_indices should match (#nnz of sum): got {} and {}",
                grad.dims()[0],
                out.n
            )));
        }
        let mut pairs = Vec::with_capacity(out.n);
        let mut j = 0;
        for i in 0..input.n {
            if j < out.n && input.row(i).iter().zip(&start).map(|(x, s)| x - s).eq(out.row(j).iter().copied()) {
                pairs.push((i, j));
                j += 1;
            }
        }
        if j != out.n {
            return Err(ctx.error(format!(
                "Elements of backprop_val_grad aren't all propagated. Num elements: {}, used: {j}",
                out.n
            )));
        }
        let g = dispatch!(
            grad.dtype(),
            ctx,
            [f32, f64, i32, i64, i16, i8, u8, u16, u32, u64, half::f16, half::bf16],
            |T| scatter::<T>(&grad, input.n, &pairs)
        )?;
        ctx.set_output(0, g)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("SparseAddGrad", |_| Ok(Box::new(SparseAddGrad)));
    r.add("SparseSliceGrad", |_| Ok(Box::new(SparseSliceGrad)));
}
