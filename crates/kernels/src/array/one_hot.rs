//! OneHot: `depth` positions inserted at `axis`, `on_value` where the index matches.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor, TensorType};

use super::util::{check_node_alloc, product};
use crate::{KernelRegistry, OpContext, OpKernel};

struct OneHot {
    axis: i64,
}

fn indices_i64(t: &Tensor) -> Result<Vec<i64>, Status> {
    Ok(match t.dtype() {
        DataType::UInt8 => t.as_slice::<u8>()?.iter().map(|&x| x as i64).collect(),
        DataType::Int32 => t.as_slice::<i32>()?.iter().map(|&x| x as i64).collect(),
        DataType::Int64 => t.as_slice::<i64>()?.to_vec(),
        d => return Err(Status::invalid_argument(format!("OneHot indices must be uint8, int32 or int64, got {d}"))),
    })
}

fn one_hot_typed<T: TensorType>(
    dims: &[usize],
    idx: &[i64],
    depth: usize,
    prefix: usize,
    suffix: usize,
    on: &Tensor,
    off: &Tensor,
) -> Result<Vec<T>, Status> {
    let on = on.as_slice::<T>()?[0].clone();
    let off = off.as_slice::<T>()?[0].clone();
    let mut out = ferroflow_core::alloc::filled(dims, off)?;
    for p in 0..prefix {
        for s in 0..suffix {
            let k = idx[p * suffix + s];
            if k >= 0 && (k as usize) < depth {
                out[(p * depth + k as usize) * suffix + s] = on.clone();
            }
        }
    }
    Ok(out)
}

impl OpKernel for OneHot {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let indices = ctx.input(0)?;
        let (depth_t, on, off) = (ctx.input(1)?, ctx.input(2)?, ctx.input(3)?);
        let out_rank = indices.rank() as i64 + 1;
        if self.axis != -1 && !(0..out_rank).contains(&self.axis) {
            return Err(
                ctx.error(format!("Expected axis to be -1 or between [0, {out_rank}).  But received: {}", self.axis))
            );
        }
        if depth_t.rank() != 0 {
            return Err(ctx.error(format!("depth must be a scalar, but got: {}", depth_t.shape())));
        }
        if on.rank() != 0 {
            return Err(ctx.error(format!("on_value must be a scalar, but got: {}", on.shape())));
        }
        if off.rank() != 0 {
            return Err(ctx.error(format!("off_value must be a scalar, but got: {}", off.shape())));
        }
        let depth = depth_t.scalar_value::<i32>().map_err(|e| ctx.error(e.message))?;
        if depth < 0 {
            return Err(ctx.error(format!("depth must be non-negative, got: {depth}")));
        }
        let depth = depth as usize;
        let axis = if self.axis == -1 { indices.rank() } else { self.axis as usize };
        let idx = indices_i64(&indices).map_err(|e| ctx.error(e.message))?;
        let prefix = product(&indices.dims()[..axis]);
        let suffix = product(&indices.dims()[axis..]);
        let mut dims = indices.dims().to_vec();
        dims.insert(axis, depth);
        check_node_alloc(ctx, &dims, on.dtype())?;
        let out = ferroflow_core::with_dtype!(on.dtype(), T => {
            Tensor::new(dims.clone(), one_hot_typed::<T>(&dims, &idx, depth, prefix, suffix, &on, &off)?)
        })?;
        ctx.set_output(0, out)
    }
}

fn one_hot_factory(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let axis = n.attr_int("axis")?;
    if axis < -1 {
        return Err(n.node_error(format!("axis must be >= -1, got {axis}")));
    }
    Ok(Box::new(OneHot { axis }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("OneHot", one_hot_factory);
}
