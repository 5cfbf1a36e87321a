//! `Softmax` and `LogSoftmax` over the last axis, shifted by the row maximum for stability.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, Status};

use super::common::float_kernel;
use super::common::float_type;
use super::common::for_chunks;
use crate::array::util::unshared_mut;
use crate::real::Real;
use crate::{OpContext, OpKernel};

/// Maximum of a row (zero for an empty one: a row of no classes).
#[inline]
pub(crate) fn row_max<T: Real>(row: &[T]) -> T {
    let Some(&first) = row.first() else { return T::ZERO };
    row.iter().fold(first, |m, &v| if v > m { v } else { m })
}

/// In place: `row = exp(row - max) / Σ exp(row - max)`, or with `LOG`
/// `row = (row - max) - ln Σ exp(row - max)`.
pub(crate) fn softmax_row<T: Real, const LOG: bool>(row: &mut [T]) {
    if row.is_empty() {
        return;
    }
    let m = row_max(row);
    let mut sum = T::ZERO;
    for v in row.iter_mut() {
        if LOG {
            *v -= m;
            sum += v.exp();
        } else {
            *v = (*v - m).exp();
            sum += *v;
        }
    }
    if LOG {
        let l = sum.ln();
        row.iter_mut().for_each(|v| *v -= l);
    } else {
        let inv = T::ONE / sum;
        row.iter_mut().for_each(|v| *v = *v * inv);
    }
}

struct Softmax {
    log: bool,
    dtype: DataType,
}

fn factory(node: &NodeDef, log: bool) -> Result<Box<dyn OpKernel>, Status> {
    let dtype = float_type(node)?;
    Ok(Box::new(Softmax { log, dtype }))
}

/// Registers the kernels.
pub(crate) fn register(r: &mut crate::KernelRegistry) {
    r.add("Softmax", |n| factory(n, false));
    r.add("LogSoftmax", |n| factory(n, true));
}

impl Softmax {
    fn run<T: Real>(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let mut x = ctx.take_input(0)?;
        if x.rank() < 1 {
            return Err(ctx.error(format!("logits must have >= 1 dimension, got {}", x.shape())));
        }
        let n = x.dims()[x.rank() - 1];
        let f: fn(&mut [T]) = if self.log { softmax_row::<T, true> } else { softmax_row::<T, false> };
        if n > 0 {
            for_chunks(unshared_mut::<T>(&mut x)?, n, |_, c| c.chunks_exact_mut(n).for_each(f));
        }
        ctx.set_output(0, x)
    }
}

float_kernel!(Softmax, [(0, "logits")]);
