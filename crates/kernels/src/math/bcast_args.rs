//! BroadcastGradientArgs: for shapes `s0` and `s1`, the axes along which each operand was
//! broadcast (the gradient of each operand is summed over them). Axes where both are 1 are
//! listed for both, as TensorFlow does.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, Status, Tensor};

use super::common::{kernel_type, typed};
use crate::{KernelRegistry, OpKernel};

/// The reduction axes `(r0, r1)` for shapes `a` and `b`, or `None` if incompatible.
pub fn broadcast_gradient_args(a: &[i64], b: &[i64]) -> Option<(Vec<i64>, Vec<i64>)> {
    let n = a.len().max(b.len());
    let dim = |s: &[i64], i: usize| if i + s.len() >= n { s[i + s.len() - n] } else { 1 };
    let (mut r0, mut r1) = (Vec::new(), Vec::new());
    for i in 0..n {
        let (x, y) = (dim(a, i), dim(b, i));
        match (x == 1, y == 1) {
            (true, true) => {
                r0.push(i as i64);
                r1.push(i as i64);
            }
            (true, false) => r0.push(i as i64),
            (false, true) => r1.push(i as i64),
            (false, false) if x == y => {}
            _ => return None,
        }
    }
    Some((r0, r1))
}

op_kernel! {
    struct BroadcastGradientArgs { ty: DataType }
    fn compute(&self, ctx) {
        let (s0, s1) = (ctx.input(0)?, ctx.input(1)?);
        let mut shapes = Vec::with_capacity(2);
        for (i, s) in [&s0, &s1].into_iter().enumerate() {
            if s.rank() != 1 {
                return Err(ctx.error(format!("In[{i}] must be a vector.{}", s.shape())));
            }
            shapes.push(match self.ty {
                DataType::Int32 => typed::<i32>(ctx, s)?.iter().map(|&d| d as i64).collect::<Vec<i64>>(),
                _ => typed::<i64>(ctx, s)?.to_vec(),
            });
        }
        let fmt = |s: &[i64]| format!("[{}]", s.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(","));
        let (r0, r1) = broadcast_gradient_args(&shapes[0], &shapes[1])
            .ok_or_else(|| ctx.error(format!("Incompatible shapes: {} vs. {}", fmt(&shapes[0]), fmt(&shapes[1]))))?;
        for (i, r) in [r0, r1].into_iter().enumerate() {
            let t = match self.ty {
                DataType::Int32 => Tensor::vec(r.into_iter().map(|d| d as i32).collect::<Vec<_>>()),
                _ => Tensor::vec(r),
            };
            ctx.set_output(i, t)?;
        }
        Ok(())
    }
}

fn make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(BroadcastGradientArgs { ty: kernel_type(n, "T", &[DataType::Int32, DataType::Int64])? }))
}

/// Registers BroadcastGradientArgs.
pub(crate) fn register(r: &mut KernelRegistry) {
    r.add_cheap("BroadcastGradientArgs", make);
}
