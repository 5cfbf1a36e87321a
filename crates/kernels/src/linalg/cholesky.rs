//! Cholesky: the lower-triangular `L` with `L·Lᵀ = A` of each symmetric positive-definite
//! matrix (only the lower triangle of the input is read, as TensorFlow's).
// `!(d > 0)` is meant: a NaN pivot fails the decomposition.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, Status, Tensor};

use super::{matrix_input, square_batch, PAR_WORK};
use crate::array::ext::util::kernel_dtype;
use crate::dispatch::dispatch;
use crate::math::elem::Float;
use crate::nn::common::each_chunk;
use crate::{KernelRegistry, OpContext, OpKernel};

/// Factors one matrix into `l`; false if it is not positive definite.
fn factor<T: Float>(a: &[T], l: &mut [T], n: usize) -> bool {
    for j in 0..n {
        let mut d = a[j * n + j];
        for k in 0..j {
            d = d - l[j * n + k] * l[j * n + k];
        }
        if !(d > T::ZERO) {
            return false;
        }
        let djj = d.sqrt();
        l[j * n + j] = djj;
        for i in j + 1..n {
            let mut s = a[i * n + j];
            for k in 0..j {
                s = s - l[i * n + k] * l[j * n + k];
            }
            l[i * n + j] = s / djj;
        }
    }
    true
}

struct Cholesky {
    ty: DataType,
}

impl Cholesky {
    fn run<T: Float>(&self, ctx: &mut OpContext, x: &Tensor) -> Result<(), Status> {
        let (count, n) = square_batch(ctx, x, "Input")?;
        let xs = x.as_slice::<T>()?;
        let mut out = ferroflow_core::alloc::zeroed::<T>(x.dims())?;
        let ok = std::sync::atomic::AtomicBool::new(true);
        if n > 0 {
            each_chunk(&mut out, n * n, count > 1 && count * n * n * n >= PAR_WORK, |b, l| {
                if !factor(&xs[b * n * n..(b + 1) * n * n], l, n) {
                    ok.store(false, std::sync::atomic::Ordering::Relaxed);
                }
            });
        }
        if !ok.into_inner() {
            return Err(ctx.error("Cholesky decomposition was not successful. The input might not be valid."));
        }
        ctx.set_output(0, Tensor::new(x.shape().clone(), out)?)
    }
}

impl OpKernel for Cholesky {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = matrix_input(ctx, self.ty)?;
        dispatch!(self.ty, ctx, [f32, f64], |T| self.run::<T>(ctx, &x))
    }
}

fn make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(Cholesky { ty: kernel_dtype(n, "T", &[DataType::Float, DataType::Double])? }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("Cholesky", make);
}
