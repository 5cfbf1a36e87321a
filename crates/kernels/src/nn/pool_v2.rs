//! `MaxPoolV2`, `MaxPoolGradV2`, `MaxPoolGradGradV2`: the max pooling ops with `ksize` and
//! `strides` given as int32 inputs (the last two) in place of attrs. Each step reads them,
//! makes the attrs of the attr form's node, and runs the attr form's kernel on the same
//! inputs (it reads only the ones before `ksize`).

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{attr, DataType, Status};

use super::pool::pool_factory;
use super::{max_pool, max_pool_grad_grad};
use crate::{KernelRegistry, OpKernel};

type Factory = fn(&NodeDef) -> Result<Box<dyn OpKernel>, Status>;

op_kernel! {
    struct PoolV2 {
        node: NodeDef,
        /// Input index of `ksize` (`strides` follows).
        ksize_at: usize,
        inner: Factory,
    }
    fn compute(&self, ctx) {
        let mut node = self.node.clone();
        for (i, name) in [(self.ksize_at, "ksize"), (self.ksize_at + 1, "strides")] {
            let t = ctx.input(i)?;
            if t.dtype() != DataType::Int32 || t.rank() != 1 {
                return Err(ctx.error(format!("{name} must be an int32 vector, got {} {}", t.dtype(), t.shape())));
            }
            let v: Vec<i64> = t.as_slice::<i32>()?.iter().map(|&x| i64::from(x)).collect();
            node.attr.insert(name.to_string(), attr::list_int(&v));
        }
        (self.inner)(&node)?.compute(ctx)
    }
}

fn make(node: &NodeDef, ksize_at: usize, inner: Factory) -> Result<Box<dyn OpKernel>, Status> {
    // The dtype and format are checked now, as the attr form does at construction.
    let mut probe = node.clone();
    probe.attr.insert("ksize".into(), attr::list_int(&[1, 1, 1, 1]));
    probe.attr.insert("strides".into(), attr::list_int(&[1, 1, 1, 1]));
    inner(&probe)?;
    Ok(Box::new(PoolV2 { node: node.clone(), ksize_at, inner }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("MaxPoolV2", |n| make(n, 1, |n| pool_factory::<max_pool::MaxPool>(n, true)));
    r.add("MaxPoolGradV2", |n| make(n, 3, |n| pool_factory::<max_pool::MaxPoolGrad>(n, false)));
    r.add("MaxPoolGradGradV2", |n| make(n, 3, |n| pool_factory::<max_pool_grad_grad::MaxPoolGradGrad>(n, false)));
}
