//! Split (equal parts) and SplitV (given sizes, one may be -1) along one axis.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor, TensorType};

use crate::array::util::{checked_index_scalar, product};
use crate::{KernelRegistry, OpContext, OpKernel};

/// Cuts `x` along `axis` into parts of `sizes` (which sum to the axis' length).
pub(crate) fn split_typed<T: TensorType>(x: &Tensor, axis: usize, sizes: &[usize]) -> Result<Vec<Tensor>, Status> {
    let src = x.as_slice::<T>()?;
    let dims = x.dims();
    let outer = product(&dims[..axis]);
    let inner = product(&dims[axis + 1..]);
    let row = dims[axis] * inner;
    let mut start = 0;
    sizes
        .iter()
        .map(|&s| {
            let len = s * inner;
            let mut d = dims.to_vec();
            d[axis] = s;
            let mut v = ferroflow_core::alloc::with_capacity(&d)?;
            for o in 0..outer {
                let b = o * row + start;
                v.extend_from_slice(&src[b..b + len]);
            }
            start += len;
            Tensor::new(d, v)
        })
        .collect()
}

fn split_axis(ctx: &OpContext, dim: &Tensor, rank: usize) -> Result<usize, Status> {
    let d = checked_index_scalar(ctx, dim, |t| format!("split_dim must be a scalar but has rank {}", t.rank()))?;
    let r = rank as i64;
    if d < -r || d >= r {
        return Err(ctx.error(format!("-input rank(-{r}) <= split_dim < input rank ({r}), but got {d}")));
    }
    Ok(if d < 0 { d + r } else { d } as usize)
}

fn emit(ctx: &mut OpContext, x: &Tensor, axis: usize, sizes: &[usize]) -> Result<(), Status> {
    if sizes.len() == 1 {
        return ctx.set_output(0, x.clone());
    }
    let parts = ferroflow_core::with_dtype!(x.dtype(), T => split_typed::<T>(x, axis, sizes))?;
    for (i, t) in parts.into_iter().enumerate() {
        ctx.set_output(i, t)?;
    }
    Ok(())
}

op_kernel! {
    struct Split { num: usize }
    fn compute(&self, ctx) {
        let [dim, x] = ctx.inputs()?;
        let axis = split_axis(ctx, &dim, x.rank())?;
        let len = x.dims()[axis];
        if len % self.num != 0 {
            return Err(ctx.error(format!(
                "Number of ways to split should evenly divide the split dimension, but got split_dim {axis} (size = {len}) and num_split {}",
                self.num
            )));
        }
        emit(ctx, &x, axis, &vec![len / self.num; self.num])
    }
}

struct SplitV {
    num: usize,
}

fn size_values(ctx: &OpContext, t: &Tensor) -> Result<Vec<i64>, Status> {
    match t.dtype() {
        DataType::Int8 => Ok(t.as_slice::<i8>()?.iter().map(|&v| v as i64).collect()),
        DataType::Int32 => Ok(t.as_slice::<i32>()?.iter().map(|&v| v as i64).collect()),
        DataType::Int64 => Ok(t.as_slice::<i64>()?.to_vec()),
        d => Err(ctx.error(format!("size_splits must be int8, int32 or int64, got {d}"))),
    }
}

impl OpKernel for SplitV {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = ctx.input(0)?;
        let sizes_t = ctx.input(1)?;
        let dim = ctx.input(2)?;
        if sizes_t.rank() != 1 || sizes_t.num_elements() != self.num {
            return Err(ctx.error(format!(
                "Length of size_splits should be equal to the value of num_split, got shape {} for num_split {}",
                sizes_t.shape(),
                self.num
            )));
        }
        let axis = split_axis(ctx, &dim, x.rank())?;
        let len = x.dims()[axis] as i64;
        let mut sizes = size_values(ctx, &sizes_t)?;
        let mut unknown = None;
        let mut known = 0i64;
        for (i, &s) in sizes.iter().enumerate() {
            if s == -1 {
                if unknown.is_some() {
                    return Err(
                        ctx.error(format!("There can only be one -1 in the input, found a second one at index {i}"))
                    );
                }
                unknown = Some(i);
            } else if s < 0 {
                return Err(ctx.error(format!("Split size at index {i} must be >= 0. Got: {s}")));
            } else {
                known = known.saturating_add(s);
            }
        }
        if (unknown.is_none() && known != len) || (unknown.is_some() && known > len) {
            return Err(ctx.error(format!(
                "Determined shape must either match input shape along split_dim exactly if fully specified, or be less than the size of the input along split_dim if not fully specified.  Got: {known}"
            )));
        }
        if let Some(u) = unknown {
            sizes[u] = len - known;
        }
        let sizes: Vec<usize> = sizes.into_iter().map(|s| s as usize).collect();
        emit(ctx, &x, axis, &sizes)
    }
}

fn num_split(n: &NodeDef) -> Result<usize, Status> {
    let k = n.attr_int("num_split")?;
    if k < 1 {
        return Err(n.node_error(format!("attr 'num_split' must be >= 1, got {k}")));
    }
    Ok(k as usize)
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("Split", |n| Ok(Box::new(Split { num: num_split(n)? })));
    r.add("SplitV", |n| Ok(Box::new(SplitV { num: num_split(n)? })));
}
