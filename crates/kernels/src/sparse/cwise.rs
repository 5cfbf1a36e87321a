//! `SparseDenseCwiseAdd`, `SparseDenseCwiseMul`, `SparseDenseCwiseDiv`: a sparse tensor's
//! values combined with the entries of a dense tensor at their indices, the dense side
//! broadcast to the sparse shape (right-aligned, each dense dim 1 or equal). The result is
//! the new values (the indices are the sparse input's). Division refuses a dense side with
//! a zero anywhere, as TensorFlow does.

use ferroflow_core::{Status, Tensor};

use super::elem::SegElem;
use super::util::sparse_input;
use crate::array::util::dims_str;
use crate::dispatch::dispatch;
use crate::{KernelRegistry, OpContext, OpKernel};

#[derive(Clone, Copy, PartialEq)]
enum Op {
    Add,
    Mul,
    Div,
}

/// `x op d` (an integer division by zero is refused before any division).
#[inline(always)]
fn apply<T: SegElem>(x: T, op: Op, d: T) -> T {
    match op {
        Op::Add => x.add(d),
        Op::Mul => x.mul(d),
        Op::Div => x.div(d),
    }
}

struct SparseDenseCwise {
    op: Op,
}

fn run<T: SegElem>(op: Op, vals: &Tensor, dense: &Tensor, offsets: &[usize]) -> Result<Tensor, Status> {
    let v = vals.as_slice::<T>()?;
    let d = dense.as_slice::<T>()?;
    let out: Vec<T> = v.iter().zip(offsets).map(|(&x, &o)| apply(x, op, d[o])).collect();
    Tensor::new(vals.shape().clone(), out)
}

fn has_zero<T: SegElem>(t: &Tensor) -> Result<bool, Status> {
    Ok(t.as_slice::<T>()?.contains(&T::ZERO))
}

impl OpKernel for SparseDenseCwise {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let (m, vals, shape) = sparse_input(ctx, 0, ["sp_indices", "sp_values", "sp_shape"])?;
        let dense = ctx.input(3)?;
        if m.rank != shape.len() {
            return Err(ctx.error(format!("sp_indices has {} columns but sp_shape has {} dims", m.rank, shape.len())));
        }
        if dense.dtype() != vals.dtype() {
            return Err(ctx.error(format!("dense must be {}, got {}", vals.dtype(), dense.dtype())));
        }
        let dd = dense.dims();
        let r = shape.len();
        if dd.len() > r || dd.iter().rev().zip(shape.iter().rev()).any(|(&d, &s)| d != 1 && d as i64 != s) {
            return Err(ctx.error(format!(
                "SparseDenseBinaryOpShared broadcasts dense to sparse only; got incompatible shapes: {:?} vs. {}",
                shape,
                dims_str(dd)
            )));
        }
        let t = vals.dtype();
        let types_zero = |ctx: &OpContext| {
            dispatch!(t, ctx, [f32, f64, i32, i64, u8, i8, i16, u16, u32, u64], |T| has_zero::<T>(&dense))
        };
        if self.op == Op::Div && types_zero(ctx)? {
            return Err(ctx.error("SparseDenseCwiseDiv cannot divide by zero,but input dense tensor contains zero "));
        }
        // Each index's element of the broadcast dense side.
        let off = r - dd.len();
        let mut offsets = Vec::with_capacity(m.n);
        for e in 0..m.n {
            let row = m.row(e);
            if row.iter().zip(&shape).any(|(&i, &s)| i < 0 || i >= s) {
                return Err(ctx.error(format!(
                    "Provided indices are out-of-bounds w.r.t. dense side with broadcasted shape: index {row:?} of \
                     sp_shape {shape:?}"
                )));
            }
            let mut o = 0usize;
            for (k, &size) in dd.iter().enumerate() {
                o = o * size + if size == 1 { 0 } else { row[off + k] as usize };
            }
            offsets.push(o);
        }
        let out = dispatch!(t, ctx, [f32, f64, i32, i64, u8, i8, i16, u16, u32, u64], |T| run::<T>(
            self.op, &vals, &dense, &offsets
        ))?;
        ctx.set_output(0, out)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("SparseDenseCwiseAdd", |_| Ok(Box::new(SparseDenseCwise { op: Op::Add })));
    r.add("SparseDenseCwiseMul", |_| Ok(Box::new(SparseDenseCwise { op: Op::Mul })));
    r.add("SparseDenseCwiseDiv", |_| Ok(Box::new(SparseDenseCwise { op: Op::Div })));
}
