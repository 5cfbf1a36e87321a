//! All and Any: logical reductions of bool tensors over `reduction_indices`, with
//! `keep_dims`. The bools go through the generic reduction loops as bytes (All = Min,
//! Any = Max), so they share the contiguous and parallel paths of Sum and Max.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use super::bcast::map_unary;
use super::common::{kernel_type, typed};
use super::reduce::{reduced_shape, reduction_mask};
use super::reduce_loops::{reduce_axes, MaxR, MinR};
use crate::{KernelRegistry, OpContext, OpKernel};

struct BoolReduce {
    all: bool,
    keep_dims: bool,
}

impl OpKernel for BoolReduce {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = ctx.input(0)?;
        let axes = ctx.input(1)?;
        if axes.rank() > 1 {
            return Err(ctx.error(format!("reduction_indices must be a scalar or vector, got shape {}", axes.shape())));
        }
        let mask = reduction_mask(ctx, x.rank(), &axes)?;
        let shape = reduced_shape(x.dims(), &mask, self.keep_dims);
        if !mask.iter().any(|&m| m) {
            return ctx.set_output(0, x.reshape(shape.dims().to_vec())?);
        }
        let bytes = map_unary(typed::<bool>(ctx, &x)?, |b| b as u8);
        let r = if self.all {
            reduce_axes::<u8, MinR>(&bytes, x.dims(), &mask)
        } else {
            reduce_axes::<u8, MaxR>(&bytes, x.dims(), &mask)
        };
        ctx.set_output(0, Tensor::new(shape, r.into_iter().map(|v| v != 0).collect::<Vec<bool>>())?)
    }
}

fn make(n: &NodeDef, all: bool) -> Result<Box<dyn OpKernel>, Status> {
    kernel_type(n, "Tidx", &[DataType::Int32, DataType::Int64])?;
    Ok(Box::new(BoolReduce { all, keep_dims: n.attr_bool("keep_dims")? }))
}

/// Registers All and Any.
pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("All", |n| make(n, true));
    r.add("Any", |n| make(n, false));
}

#[cfg(test)]
mod tests {
    use ferroflow_core::{attr, Code};

    use super::*;
    use crate::testutil::{node, run_kernel};

    fn red(op: &str, x: Tensor, axes: Tensor, keep: bool) -> Result<Tensor, Status> {
        let n = node(op, &[("Tidx", attr::ty(axes.dtype())), ("keep_dims", attr::bool(keep))]);
        run_kernel(n, vec![x, axes], 1).map(|mut v| v.remove(0))
    }

    #[test]
    fn all_and_any() {
        let x = Tensor::new(vec![2usize, 3], vec![true, false, true, true, true, true]).unwrap();
        let a = red("All", x.clone(), Tensor::scalar(1i32), false).unwrap();
        assert_eq!((a.dims(), a.as_slice::<bool>().unwrap()), (&[2usize][..], &[false, true][..]));
        let a = red("Any", x.clone(), Tensor::vec(vec![-2i64]), true).unwrap();
        assert_eq!((a.dims(), a.as_slice::<bool>().unwrap()), (&[1usize, 3][..], &[true, true, true][..]));
        let a = red("All", x.clone(), Tensor::vec(vec![0i32, 1]), false).unwrap();
        assert_eq!(a.as_slice::<bool>().unwrap(), &[false]);
        let id = red("Any", x.clone(), Tensor::vec(Vec::<i32>::new()), false).unwrap();
        assert_eq!(id, x);
        let e = Tensor::zeros(DataType::Bool, vec![0, 2]).unwrap();
        assert_eq!(red("All", e.clone(), Tensor::scalar(0i32), false).unwrap().as_slice::<bool>().unwrap(), &[true; 2]);
        assert_eq!(red("Any", e, Tensor::scalar(0i32), false).unwrap().as_slice::<bool>().unwrap(), &[false; 2]);
        let err = red("All", x, Tensor::scalar(2i32), false).unwrap_err();
        assert_eq!(err.code, Code::InvalidArgument);
    }
}
