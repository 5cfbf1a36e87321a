//! Cross (`tf.linalg.cross`): the cross product of the 3-vectors in the last dimension of
//! two same-shaped tensors.

use ferroflow_core::{Status, Tensor};

use super::elem::Num;
use crate::array::util::FnKernel;
use crate::dispatch::dispatch;
use crate::{KernelRegistry, OpContext};

fn cross_typed<T: Num>(dims: &[usize], a: &[T], b: &[T]) -> Result<Vec<T>, Status> {
    let mut out = ferroflow_core::alloc::with_capacity(dims)?;
    for (u, v) in a.chunks_exact(3).zip(b.chunks_exact(3)) {
        out.push(u[1].mul(v[2]).sub(u[2].mul(v[1])));
        out.push(u[2].mul(v[0]).sub(u[0].mul(v[2])));
        out.push(u[0].mul(v[1]).sub(u[1].mul(v[0])));
    }
    Ok(out)
}

fn cross_tensor<T: Num>(a: &Tensor, b: &Tensor) -> Result<Tensor, Status> {
    Tensor::new(a.shape().clone(), cross_typed(a.dims(), a.as_slice::<T>()?, b.as_slice::<T>()?)?)
}

fn cross(ctx: &mut OpContext) -> Result<(), Status> {
    let a = ctx.input(0)?;
    let b = ctx.input(1)?;
    if a.shape() != b.shape() {
        return Err(ctx.error(format!("Both inputs must be of same shape: {} vs. {}", a.shape(), b.shape())));
    }
    if a.rank() < 1 {
        return Err(ctx.error(format!("Input must be at least 1D{}", a.shape())));
    }
    if a.dims()[a.rank() - 1] != 3 {
        return Err(ctx
            .error(format!("Argument 'a' must have 3 elements in its inner-most dimension, got shape {}", a.shape())));
    }
    if a.dtype() != b.dtype() {
        return Err(ctx.error(format!("Both inputs must have the same type: {} vs. {}", a.dtype(), b.dtype())));
    }
    let out = dispatch!(
        a.dtype(),
        ctx,
        [f32, f64, i32, i64, i8, i16, u8, u16, u32, u64, ferroflow_core::half::f16, ferroflow_core::half::bf16],
        |T| cross_tensor::<T>(&a, &b)
    )?;
    ctx.set_output(0, out)
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("Cross", |_| Ok(FnKernel::expensive(cross)));
}
