//! `SparseDenseCwiseAdd`, `SparseDenseCwiseMul`, `SparseDenseCwiseDiv`: a sparse tensor's
//! values combined with the entries of a dense tensor at their indices, the dense side
//! broadcast to the sparse shape (right-aligned, each dense dim 1 or equal). The result is
//! the new values (the indices are the sparse input's). Division refuses a dense side with
//! a zero anywhere, as TensorFlow does.

use ferroflow_core::{Status, Tensor, TensorType};

use super::util::{check_values, indices_matrix, shape_vector};
use crate::array::util::dims_str;
use crate::dispatch::dispatch;
use crate::{KernelRegistry, OpContext, OpKernel};

#[derive(Clone, Copy, PartialEq)]
enum Op {
    Add,
    Mul,
    Div,
}

/// Element types of the three ops.
trait Elem: TensorType + Copy + PartialEq {
    const ZERO: Self;
    fn apply(self, op: Op, d: Self) -> Self;
}

macro_rules! float_elem {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            const ZERO: Self = 0.0;
            fn apply(self, op: Op, d: Self) -> Self {
                match op { Op::Add => self + d, Op::Mul => self * d, Op::Div => self / d }
            }
        }
    )*};
}
float_elem!(f32, f64);

macro_rules! int_elem {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            const ZERO: Self = 0;
            fn apply(self, op: Op, d: Self) -> Self {
                match op {
                    Op::Add => self.wrapping_add(d),
                    Op::Mul => self.wrapping_mul(d),
                    // A zero divisor is refused before any division.
                    Op::Div => self.checked_div(d).unwrap_or(0),
                }
            }
        }
    )*};
}
int_elem!(i32, i64, u8, i8, i16, u16, u32, u64);

struct SparseDenseCwise {
    op: Op,
}

fn run<T: Elem>(op: Op, vals: &Tensor, dense: &Tensor, offsets: &[usize]) -> Result<Tensor, Status> {
    let v = vals.as_slice::<T>()?;
    let d = dense.as_slice::<T>()?;
    let out: Vec<T> = v.iter().zip(offsets).map(|(&x, &o)| x.apply(op, d[o])).collect();
    Tensor::new(vals.shape().clone(), out)
}

fn has_zero<T: Elem>(t: &Tensor) -> Result<bool, Status> {
    Ok(t.as_slice::<T>()?.contains(&T::ZERO))
}

impl OpKernel for SparseDenseCwise {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let m = indices_matrix(ctx, "sp_indices", &ctx.input(0)?)?;
        let vals = ctx.input(1)?;
        let shape = shape_vector(ctx, "sp_shape", &ctx.input(2)?)?;
        let dense = ctx.input(3)?;
        check_values(ctx, "sp_values", &vals, m.n)?;
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
