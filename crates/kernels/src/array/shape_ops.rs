//! Shape, Size, Rank, ShapeN, Reshape, ExpandDims and Squeeze. Reshaping shares the input
//! buffer: no data is copied.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use super::util::{index_scalar, index_tensor, index_type_attr, index_vec, FnKernel};
use crate::{KernelRegistry, OpContext, OpKernel};

struct ShapeK {
    out: DataType,
}

impl OpKernel for ShapeK {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
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

struct SizeK {
    out: DataType,
}

impl OpKernel for SizeK {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
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

struct Squeeze {
    dims: Vec<i64>,
}

impl OpKernel for Squeeze {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
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

#[cfg(test)]
mod tests {
    use ferroflow_core::{attr, Code};

    use super::*;
    use crate::testutil::{node, run_kernel};

    fn t(dims: Vec<usize>, n: usize) -> Tensor {
        Tensor::new(dims, (0..n as i32).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn reshape_infers_and_checks() {
        assert_eq!(reshape_dims(&[2, 3], &[-1, 2]).unwrap(), vec![3, 2]);
        assert_eq!(reshape_dims(&[0, 3], &[-1, 0]).unwrap(), vec![3, 0]);
        assert_eq!(reshape_dims(&[0, 3], &[-1, 3]).unwrap(), vec![0, 3]);
        assert_eq!(
            reshape_dims(&[2, 3], &[4]).unwrap_err(),
            "Input to reshape is a tensor with 6 values, but the requested shape has 4"
        );
        assert_eq!(
            reshape_dims(&[2, 3], &[-1, 4]).unwrap_err(),
            "Input to reshape is a tensor with 6 values, but the requested shape requires a multiple of 4"
        );
        assert_eq!(reshape_dims(&[2, 3], &[-1, -1]).unwrap_err(), "Only one input size may be -1, not both 0 and 1");
        assert_eq!(reshape_dims(&[2, 3], &[-2, 3]).unwrap_err(), "Size 0 must be non-negative, not -2");
        assert!(reshape_dims(&[2], &[1 << 40, 1 << 40, 0]).is_err());
        let n = node("Reshape", &[("T", attr::ty(DataType::Int32)), ("Tshape", attr::ty(DataType::Int64))]);
        let x = t(vec![2, 3], 6);
        let out = run_kernel(n.clone(), vec![x.clone(), Tensor::vec(vec![3i64, -1])], 1).unwrap();
        assert_eq!(out[0].dims(), &[3, 2]);
        assert!(out[0].shares_buffer(&x));
        let e = run_kernel(n.clone(), vec![x.clone(), Tensor::vec(vec![4i64])], 1).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument);
        assert!(e.message.contains("node 'test'") && e.message.contains("6 values"), "{e}");
        assert!(run_kernel(n, vec![x, Tensor::scalar(6i64)], 1).is_err());
    }

    #[test]
    fn shape_size_rank() {
        let x = t(vec![2, 3, 1], 6);
        let s = run_kernel(node("Shape", &[("out_type", attr::ty(DataType::Int64))]), vec![x.clone()], 1).unwrap();
        assert_eq!(s[0].as_slice::<i64>().unwrap(), &[2, 3, 1]);
        let s = run_kernel(node("Size", &[("out_type", attr::ty(DataType::Int32))]), vec![x.clone()], 1).unwrap();
        assert_eq!(s[0].scalar_value::<i32>().unwrap(), 6);
        let s = run_kernel(node("Rank", &[]), vec![x.clone()], 1).unwrap();
        assert_eq!(s[0].scalar_value::<i32>().unwrap(), 3);
        let n = node("ShapeN", &[("out_type", attr::ty(DataType::Int32)), ("N", attr::int(2))]);
        let s = run_kernel(n, vec![x, Tensor::scalar(1.0f32)], 2).unwrap();
        assert_eq!(s[0].as_slice::<i32>().unwrap(), &[2, 3, 1]);
        assert_eq!(s[1].dims(), &[0]);
    }

    #[test]
    fn expand_and_squeeze() {
        let n = node("ExpandDims", &[("Tdim", attr::ty(DataType::Int32))]);
        let x = t(vec![2, 3], 6);
        let o = run_kernel(n.clone(), vec![x.clone(), Tensor::scalar(-1i32)], 1).unwrap();
        assert_eq!(o[0].dims(), &[2, 3, 1]);
        let o = run_kernel(n.clone(), vec![x.clone(), Tensor::vec(vec![0i32])], 1).unwrap();
        assert_eq!(o[0].dims(), &[1, 2, 3]);
        let e = run_kernel(n.clone(), vec![x.clone(), Tensor::scalar(3i32)], 1).unwrap_err();
        assert!(e.message.contains("Tried to expand dim index 3 for tensor with 2 dimensions."));
        let e = run_kernel(n, vec![x, Tensor::vec(vec![0i32, 1])], 1).unwrap_err();
        assert!(e.message.contains("'dim' must be a tensor with a single value"));
        let y = t(vec![1, 2, 1], 2);
        let sq = |d: &[i64]| node("Squeeze", &[("squeeze_dims", attr::list_int(d))]);
        assert_eq!(run_kernel(sq(&[]), vec![y.clone()], 1).unwrap()[0].dims(), &[2]);
        assert_eq!(run_kernel(sq(&[-1]), vec![y.clone()], 1).unwrap()[0].dims(), &[1, 2]);
        let e = run_kernel(sq(&[1]), vec![y.clone()], 1).unwrap_err();
        assert!(e.message.contains("Can not squeeze dim[1], expected a dimension of 1, got 2"));
        assert!(run_kernel(sq(&[3]), vec![y], 1).is_err());
    }
}
