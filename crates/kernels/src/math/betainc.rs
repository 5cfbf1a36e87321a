//! `Betainc`: the regularized incomplete beta function of three operands that are scalars
//! or share one shape (TensorFlow broadcasts scalars only), float32 and float64.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{Status, Tensor};

use super::common::{kernel_type, typed};
use super::special;
use super::unary_ext::Sf;
use crate::dispatch::dispatch;
use crate::{KernelRegistry, OpContext, OpKernel};

struct Betainc {
    ty: ferroflow_core::DataType,
}

fn run<T: Sf>(ctx: &mut OpContext) -> Result<(), Status> {
    let ins = [ctx.input(0)?, ctx.input(1)?, ctx.input(2)?];
    let names = ["a", "b", "x"];
    for i in 0..3 {
        for j in i + 1..3 {
            let (p, q) = (&ins[i], &ins[j]);
            if p.dims().is_empty() || q.dims().is_empty() || p.shape() == q.shape() {
                continue;
            }
            return Err(ctx.error(format!(
                "Shapes of {} and {} are inconsistent: {} vs. {}",
                names[i],
                names[j],
                p.shape(),
                q.shape()
            )));
        }
    }
    let big = ins.iter().find(|t| !t.dims().is_empty()).unwrap_or(&ins[0]);
    let (shape, n) = (big.shape().clone(), big.num_elements());
    let vals = [typed::<T>(ctx, &ins[0])?, typed::<T>(ctx, &ins[1])?, typed::<T>(ctx, &ins[2])?];
    let at = |v: &[T], i: usize| (if v.len() == 1 { v[0] } else { v[i] }).to64();
    let f = |i: usize| T::from64(special::betainc(at(vals[0], i), at(vals[1], i), at(vals[2], i)));
    let mut out = ferroflow_core::alloc::zeroed::<T>(shape.dims())?;
    if n >= 4096 {
        use rayon::prelude::*;
        out.par_iter_mut().enumerate().for_each(|(i, o)| *o = f(i));
    } else {
        out.iter_mut().enumerate().for_each(|(i, o)| *o = f(i));
    }
    ctx.set_output(0, Tensor::new(shape, out)?)
}

impl OpKernel for Betainc {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        dispatch!(self.ty, ctx, [f32, f64], |T| run::<T>(ctx))
    }
}

fn make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(Betainc {
        ty: kernel_type(n, "T", &[ferroflow_core::DataType::Float, ferroflow_core::DataType::Double])?,
    }))
}

/// Registers the kernel.
pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("Betainc", make);
}
