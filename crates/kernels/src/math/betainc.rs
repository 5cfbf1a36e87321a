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
    let out: Vec<T> = if n >= 4096 {
        use rayon::prelude::*;
        (0..n).into_par_iter().map(f).collect()
    } else {
        (0..n).map(f).collect()
    };
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

#[cfg(test)]
mod tests {
    use ferroflow_core::{attr, Code};

    use super::*;
    use crate::testutil::{node, run_kernel};

    fn run3(a: Tensor, b: Tensor, x: Tensor) -> Result<Tensor, Status> {
        run_kernel(node("Betainc", &[("T", attr::ty(a.dtype()))]), vec![a, b, x], 1).map(|mut v| v.remove(0))
    }

    #[test]
    fn scalars_broadcast_and_shapes_are_checked() {
        let out = run3(Tensor::scalar(1.0f64), Tensor::vec(vec![1.0f64, 2.0]), Tensor::scalar(0.5f64)).unwrap();
        assert_eq!(out.dims(), &[2]);
        assert_eq!(out.as_slice::<f64>().unwrap(), &[0.5, 0.75]);
        let e = run3(Tensor::vec(vec![1.0f32, 1.0]), Tensor::vec(vec![1.0f32]), Tensor::scalar(0.5f32)).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument);
        assert!(e.message.contains("Shapes of a and b are inconsistent: [2] vs. [1]"), "{e}");
        let empty = run3(Tensor::vec(Vec::<f32>::new()), Tensor::scalar(1.0f32), Tensor::scalar(0.5f32)).unwrap();
        assert_eq!(empty.dims(), &[0]);
    }
}
