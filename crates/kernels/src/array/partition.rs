//! DynamicPartition: splits the rows of `data` into `num_partitions` outputs by an int32
//! `partitions` tensor (`data.shape` starts with `partitions.shape`; output `i` holds, in
//! order, every row whose partition is `i`).

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Shape, Status, Tensor, TensorType};

use super::gather::multi_index;
use super::util::{dims_str, product};
use crate::{KernelRegistry, OpContext, OpKernel};

/// More outputs than any real graph uses; bounds what a remote graph can make a task allocate.
const MAX_PARTITIONS: i64 = 1 << 20;

struct DynamicPartition {
    num: usize,
}

fn partition_typed<T: TensorType>(
    data: &Tensor,
    parts: &[i32],
    num: usize,
    tail: &[usize],
) -> Result<Vec<Tensor>, Status> {
    let src = data.as_slice::<T>()?;
    let inner = product(tail);
    let mut counts = vec![0usize; num];
    for &p in parts {
        counts[p as usize] += 1;
    }
    let dims_of = |c: usize| {
        let mut dims = vec![c];
        dims.extend_from_slice(tail);
        dims
    };
    let mut outs: Vec<Vec<T>> =
        counts.iter().map(|&c| ferroflow_core::alloc::with_capacity(&dims_of(c))).collect::<Result<_, _>>()?;
    for (i, &p) in parts.iter().enumerate() {
        outs[p as usize].extend_from_slice(&src[i * inner..(i + 1) * inner]);
    }
    outs.into_iter().zip(counts).map(|(v, c)| Tensor::new(Shape::new(dims_of(c)), v)).collect()
}

impl OpKernel for DynamicPartition {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let data = ctx.input(0)?;
        let pt = ctx.input(1)?;
        let parts =
            pt.as_slice::<i32>().map_err(|_| ctx.error(format!("partitions must be int32, got {}", pt.dtype())))?;
        let r = pt.rank();
        if data.rank() < r || data.dims()[..r] != *pt.dims() {
            return Err(ctx.error(format!(
                "data.shape must start with partitions.shape, got data.shape = {}, partitions.shape = {}",
                dims_str(data.dims()),
                dims_str(pt.dims())
            )));
        }
        if let Some(k) = parts.iter().position(|&p| p < 0 || p as usize >= self.num) {
            return Err(ctx.error(format!(
                "partitions[{}] = {} is not in [0, {})",
                multi_index(k, pt.dims()),
                parts[k],
                self.num
            )));
        }
        let tail = data.dims()[r..].to_vec();
        let outs = ferroflow_core::with_dtype!(data.dtype(), T => partition_typed::<T>(&data, parts, self.num, &tail))?;
        for (i, t) in outs.into_iter().enumerate() {
            ctx.set_output(i, t)?;
        }
        Ok(())
    }
}

fn make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let num = n.attr_int("num_partitions")?;
    if !(1..=MAX_PARTITIONS).contains(&num) {
        return Err(n.node_error(format!("num_partitions must be in [1, {MAX_PARTITIONS}], got {num}")));
    }
    Ok(Box::new(DynamicPartition { num: num as usize }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("DynamicPartition", make);
}
