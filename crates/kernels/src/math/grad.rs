//! Gradient helpers of unary functions, computed from the function's output `y` and the
//! incoming gradient `dy`: TanhGrad, SigmoidGrad, SqrtGrad, RsqrtGrad, ReciprocalGrad
//! (InvGrad). The two inputs need the same number of elements; the output has `y`'s shape.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{Status, Tensor};

use super::bcast::{is_unshared, PAR_THRESHOLD};
use super::common::{kernel_type, typed, ElemKernel};
use super::dtypes::FLOATS;
use super::elem::Float;
use crate::array::util::copy_vec;
use crate::dispatch::dispatch;
use crate::registry::by_variant;
use crate::{KernelRegistry, OpContext, OpKernel};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Grad {
    Tanh,
    Sigmoid,
    Sqrt,
    Rsqrt,
    Reciprocal,
}

fn apply<T: Float>(g: Grad, y: T, dy: T) -> T {
    match g {
        Grad::Tanh => dy * (T::ONE - y * y),
        Grad::Sigmoid => dy * y * (T::ONE - y),
        Grad::Sqrt => T::HALF * dy / y,
        Grad::Rsqrt => -T::HALF * (dy * y) * (y * y),
        Grad::Reciprocal => -y * y * dy,
    }
}

fn fill<T: Float>(g: Grad, out: &mut [T], y: &[T], dy: &[T], out_is_y: bool) {
    use rayon::prelude::*;
    let run = |o: &mut [T], other: &[T]| {
        if out_is_y {
            o.iter_mut().zip(other).for_each(|(v, &d)| *v = apply(g, *v, d));
        } else {
            o.iter_mut().zip(other).for_each(|(v, &yy)| *v = apply(g, yy, *v));
        }
    };
    let other = if out_is_y { dy } else { y };
    if out.len() <= PAR_THRESHOLD {
        run(out, other);
    } else {
        let c = super::bcast::chunk_len(out.len());
        out.par_chunks_mut(c).zip(other.par_chunks(c)).for_each(|(o, x)| run(o, x));
    }
}

fn compute_grad<T: Float>(ctx: &mut OpContext, g: Grad) -> Result<(), Status> {
    let y = ctx.take_input(0)?;
    let dy = ctx.take_input(1)?;
    if y.num_elements() != dy.num_elements() {
        return Err(ctx.error(format!(
            "The two arguments to a cwise op must have same number of elements, got {} and {}",
            y.num_elements(),
            dy.num_elements()
        )));
    }
    typed::<T>(ctx, &y)?;
    typed::<T>(ctx, &dy)?;
    let out = if is_unshared(&y) {
        let mut y = y;
        fill(g, y.data_mut::<T>()?, &[], typed::<T>(ctx, &dy)?, true);
        y
    } else if is_unshared(&dy) {
        let mut dy = dy;
        fill(g, dy.data_mut::<T>()?, typed::<T>(ctx, &y)?, &[], false);
        dy.reshape(y.shape().clone())?
    } else {
        typed::<T>(ctx, &y)?;
        let mut out = copy_vec::<T>(&y)?;
        fill(g, &mut out, &[], typed::<T>(ctx, &dy)?, true);
        Tensor::new(y.shape().clone(), out)?
    };
    ctx.set_output(0, out)
}

impl ElemKernel<Grad> {
    fn make(n: &NodeDef, g: Grad) -> Result<Box<dyn OpKernel>, Status> {
        Ok(Box::new(ElemKernel { op: g, ty: kernel_type(n, "T", FLOATS)? }))
    }
}

impl OpKernel for ElemKernel<Grad> {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        dispatch!(self.ty, ctx, [f32, f64], |T| compute_grad::<T>(ctx, self.op))
    }
}

/// Registers the gradient-helper kernels.
pub(crate) fn register(r: &mut KernelRegistry) {
    by_variant! { r, ElemKernel::<Grad>::make, Grad "Grad" [
        Tanh, Sigmoid, Sqrt, Rsqrt, Reciprocal
    ] "InvGrad" => Reciprocal }
}
