//! Shape, Size, Rank, ShapeN, Reshape, ExpandDims and Squeeze. Reshaping shares the input
//! buffer: no data is copied.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use super::util::{index_scalar, index_tensor, index_type_attr, index_vec, FnKernel};
use crate::{KernelRegistry, OpContext, OpKernel};

op_kernel! {
    struct ShapeK { out: DataType }
    fn compute(&self, ctx) {
        for i in 0..ctx.num_outputs() {
            let x = ctx.input(i)?;
            let dims: Vec<i64> = x.dims().iter().map(|&d| d as i64).collect();
            let t = index_tensor(self.out, vec![dims.len()], dims).map_err(|e| ctx.error(e.message))?;
            ctx.set_output(i, t)?;
        }
        Ok(())
    }
}

fn shape_factory(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(ShapeK { out: index_type_attr(n, "out_type")? }))
}

op_kernel! {
    struct SizeK { out: DataType }
    fn compute(&self, ctx) {
        let n = ctx.input(0)?.num_elements() as i64;
        let t = match self.out {
            DataType::Int32 => Tensor::scalar(i32::try_from(n).map_err(|_| {
                ctx.error(format!("Number of elements was larger than representable by 32-bit output type: {n}"))
            })?),
            _ => Tensor::scalar(n),
        };
        ctx.set_output(0, t)
    }
}

fn size_factory(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(SizeK { out: index_type_attr(n, "out_type")? }))
}

fn rank(ctx: &mut OpContext) -> Result<(), Status> {
    let r = ctx.input(0)?.rank() as i32;
    ctx.set_output(0, Tensor::scalar(r))
}

/// Resolves a Reshape size vector against the input (TensorFlow's rules, including one
/// inferred `-1` dim and empty tensors).
pub fn reshape_dims(input: &[usize], sizes: &[i64]) -> Result<Vec<usize>, String> {
    let n_in: usize = input.iter().product();
    let mut product: usize = 1;
    let mut unknown: Option<usize> = None;
    let mut has_zero = false;
    let mut out = Vec::with_capacity(sizes.len());
    for (d, &size) in sizes.iter().enumerate() {
        if size == -1 {
            if let Some(u) = unknown {
                return Err(format!("Only one input size may be -1, not both {u} and {d}"));
            }
            unknown = Some(d);
            out.push(1);
        } else if size < 0 {
            return Err(format!("Size {d} must be non-negative, not {size}"));
        } else {
            if size == 0 {
                has_zero = true;
            } else {
                product = product
                    .checked_mul(size as usize)
                    .filter(|p| *p < 1 << 62)
                    .ok_or_else(|| format!("requested shape {sizes:?} has too many elements"))?;
            }
            out.push(size as usize);
        }
    }
    if let Some(u) = unknown {
        let mut n = 1usize;
        let mut in_zero = false;
        for &d in input {
            if d > 0 || !has_zero {
                n *= d;
            } else {
                in_zero = true;
            }
        }
        let missing = n / product;
        if !in_zero && product * missing != n {
            return Err(format!(
                "Input to reshape is a tensor with {n_in} values, but the requested shape requires a multiple of {product}"
            ));
        }
        out[u] = missing;
    }
    let total: usize = out.iter().product();
    if total != n_in {
        return Err(format!("Input to reshape is a tensor with {n_in} values, but the requested shape has {total}"));
    }
    Ok(out)
}

fn reshape(ctx: &mut OpContext) -> Result<(), Status> {
    let sizes = ctx.input(1)?;
    if sizes.rank() != 1 {
        return Err(ctx.error(format!("sizes input must be 1-D, not {}", sizes.shape())));
    }
    let sizes = index_vec(&sizes).map_err(|e| ctx.error(e.message))?;
    let x = ctx.take_input(0)?;
    let dims = reshape_dims(x.dims(), &sizes).map_err(|m| ctx.error(m))?;
    ctx.set_output(0, x.reshape(dims)?)
}

fn expand_dims(ctx: &mut OpContext) -> Result<(), Status> {
    let dim = ctx.input(1)?;
    if dim.num_elements() != 1 {
        return Err(ctx.error("'dim' must be a tensor with a single value"));
    }
    let d = index_scalar(&dim).map_err(|e| ctx.error(e.message))?;
    let x = ctx.take_input(0)?;
    let r = x.rank() as i64;
    if d < -1 - r || d > r {
        return Err(ctx.error(format!("Tried to expand dim index {d} for tensor with {r} dimensions.")));
    }
    let d = if d < 0 { d + r + 1 } else { d } as usize;
    let mut dims = x.dims().to_vec();
    dims.insert(d, 1);
    ctx.set_output(0, x.reshape(dims)?)
}

op_kernel! {
    struct Squeeze { dims: Vec<i64> }
    fn compute(&self, ctx) {
        let x = ctx.take_input(0)?;
        let r = x.rank() as i64;
        let mut drop = vec![false; x.rank()];
        for &d in &self.dims {
            if d < -r || d >= r {
                return Err(ctx.error(format!("Tried to squeeze dim index {d} for tensor with {r} dimensions.")));
            }
            let k = if d < 0 { d + r } else { d } as usize;
            if x.dims()[k] != 1 {
                return Err(
                    ctx.error(format!("Can not squeeze dim[{k}], expected a dimension of 1, got {}", x.dims()[k]))
                );
            }
            drop[k] = true;
        }
        let dims: Vec<usize> = x
            .dims()
            .iter()
            .zip(&drop)
            .filter(|&(&n, &dr)| if self.dims.is_empty() { n != 1 } else { !dr })
            .map(|(&n, _)| n)
            .collect();
        ctx.set_output(0, x.reshape(dims)?)
    }
}

fn squeeze_factory(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(Squeeze { dims: n.attr_list_int("squeeze_dims")? }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add_cheap("Shape", shape_factory);
    r.add_cheap("ShapeN", shape_factory);
    r.add_cheap("Size", size_factory);
    r.add("Rank", |_| Ok(FnKernel::cheap(rank)));
    r.add("Reshape", |_| Ok(FnKernel::cheap(reshape)));
    r.add("ExpandDims", |_| Ok(FnKernel::cheap(expand_dims)));
    r.add_cheap("Squeeze", squeeze_factory);
}
