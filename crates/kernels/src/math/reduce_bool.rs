//! All and Any: logical reductions of bool tensors over `reduction_indices`, with
//! `keep_dims`. The bools go through the generic reduction loops as bytes (All = Min,
//! Any = Max), so they share the contiguous and parallel paths of Sum and Max.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use super::bcast::map_unary;
use super::common::{kernel_type, typed};
use super::reduce::{reduced_shape, reduction_mask};
use super::reduce_loops::{reduce_axes, MaxR, MinR};
use crate::array::util::collect_vec;
use crate::{KernelRegistry, OpKernel};

op_kernel! {
    struct BoolReduce { all: bool, keep_dims: bool }
    fn compute(&self, ctx) {
        let [x, axes] = ctx.inputs()?;
        if axes.rank() > 1 {
            return Err(ctx.error(format!("reduction_indices must be a scalar or vector, got shape {}", axes.shape())));
        }
        let mask = reduction_mask(ctx, x.rank(), &axes)?;
        let shape = reduced_shape(x.dims(), &mask, self.keep_dims);
        if !mask.iter().any(|&m| m) {
            return ctx.set_output(0, x.reshape(shape.dims().to_vec())?);
        }
        let bytes = map_unary(x.dims(), typed::<bool>(ctx, &x)?, |b| b as u8)?;
        let r = if self.all {
            reduce_axes::<u8, MinR>(&bytes, x.dims(), &mask)?
        } else {
            reduce_axes::<u8, MaxR>(&bytes, x.dims(), &mask)?
        };
        let out = collect_vec(shape.dims(), r.into_iter().map(|v| v != 0))?;
        ctx.set_output(0, Tensor::new(shape, out)?)
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
