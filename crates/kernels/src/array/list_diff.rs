//! ListDiff (`tf.compat.v1.setdiff1d`): the elements of 1-D `x` that are not in 1-D `y`,
//! in `x`'s order and with repeats kept (`out`), and their positions in `x` (`idx`).
//! Floats compare by value: `-0.0` equals `0.0` and a NaN equals nothing.

use std::collections::HashSet;
use std::hash::Hash;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, Status, Tensor, TensorType};

use super::util::{index_tensor, index_type_attr};
use crate::{KernelRegistry, OpContext, OpKernel};

struct ListDiff {
    out_idx: DataType,
}

/// `(out, idx)` for elements mapped to hashable keys by `key` (`None`: equal to nothing).
fn diff_by<T: TensorType, K: Hash + Eq>(x: &[T], y: &[T], key: impl Fn(&T) -> Option<K>) -> (Tensor, Vec<i64>) {
    let drop: HashSet<K> = y.iter().filter_map(&key).collect();
    let (mut out, mut idx) = (Vec::new(), Vec::new());
    for (i, v) in x.iter().enumerate() {
        if key(v).is_none_or(|k| !drop.contains(&k)) {
            out.push(v.clone());
            idx.push(i as i64);
        }
    }
    (Tensor::vec(out), idx)
}

fn list_diff(x: &Tensor, y: &Tensor) -> Result<(Tensor, Vec<i64>), Status> {
    macro_rules! exact {
        ($t:ty) => {
            diff_by(x.as_slice::<$t>()?, y.as_slice::<$t>()?, |v| Some(v.clone()))
        };
    }
    Ok(match x.dtype() {
        DataType::Float => {
            diff_by(x.as_slice::<f32>()?, y.as_slice::<f32>()?, |v| (!v.is_nan()).then(|| (v + 0.0).to_bits()))
        }
        DataType::Double => {
            diff_by(x.as_slice::<f64>()?, y.as_slice::<f64>()?, |v| (!v.is_nan()).then(|| (v + 0.0).to_bits()))
        }
        DataType::Int32 => exact!(i32),
        DataType::Int64 => exact!(i64),
        DataType::Int8 => exact!(i8),
        DataType::Int16 => exact!(i16),
        DataType::UInt8 => exact!(u8),
        DataType::UInt16 => exact!(u16),
        DataType::UInt32 => exact!(u32),
        DataType::UInt64 => exact!(u64),
        DataType::Bool => exact!(bool),
        DataType::String => exact!(Vec<u8>),
        d => return Err(Status::unimplemented(format!("ListDiff of {d} is not supported"))),
    })
}

impl OpKernel for ListDiff {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = ctx.input(0)?;
        let y = ctx.input(1)?;
        if x.rank() != 1 || y.rank() != 1 {
            return Err(ctx.error(format!("x and y should be 1D vectors, got shapes {} and {}", x.shape(), y.shape())));
        }
        if x.dtype() != y.dtype() {
            return Err(ctx.error(format!("x and y must have the same type, got {} and {}", x.dtype(), y.dtype())));
        }
        let (out, idx) = list_diff(&x, &y).map_err(|e| ctx.error(e.message))?;
        let n = idx.len();
        ctx.set_output(0, out)?;
        ctx.set_output(1, index_tensor(self.out_idx, vec![n], idx)?)
    }
}

fn make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(ListDiff { out_idx: index_type_attr(n, "out_idx")? }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("ListDiff", make);
}
