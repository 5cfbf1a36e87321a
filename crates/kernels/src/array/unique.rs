//! Unique and UniqueWithCounts: the distinct elements of a 1-D tensor in order of first
//! appearance (`y`), for every element its position in `y` (`idx`, int32 or int64 by
//! `out_idx`) and, for UniqueWithCounts, how often each distinct element occurs (`count`).
//! Floats compare by value: `-0.0` equals `0.0` and every NaN is distinct, as in
//! TensorFlow.

use std::collections::HashMap;
use std::hash::Hash;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, Status, Tensor, TensorType};

use super::util::{index_tensor, index_type_attr};
use crate::{KernelRegistry, OpContext, OpKernel};

struct Unique {
    out_idx: DataType,
    with_counts: bool,
}

/// `(y, idx)` for elements mapped to hashable keys by `key` (`None`: never equal).
fn unique_by<T: TensorType, K: Hash + Eq>(
    x: &[T],
    key: impl Fn(&T) -> Option<K>,
) -> Result<(Vec<T>, Vec<i64>), Status> {
    let mut seen: HashMap<K, i64> = HashMap::new();
    // Buckets for every element (a power of two over 8/7 of them) and a control byte each.
    let buckets = (x.len().saturating_mul(8) / 7).checked_next_power_of_two().unwrap_or(usize::MAX);
    let bytes = buckets.saturating_mul(std::mem::size_of::<(K, i64)>() + 1);
    let what = || format!("a hash table of {} entries", x.len());
    ferroflow_core::alloc::try_reserve_other(bytes, what, || seen.try_reserve(x.len()))?;
    let (mut y, mut idx) = (Vec::new(), ferroflow_core::alloc::with_capacity::<i64>(&[x.len()])?);
    for v in x {
        let next = y.len() as i64;
        let i = match key(v) {
            Some(k) => *seen.entry(k).or_insert(next),
            None => next,
        };
        if i == next {
            y.push(v.clone());
        }
        idx.push(i);
    }
    Ok((y, idx))
}

fn unique(x: &Tensor) -> Result<(Tensor, Vec<i64>), Status> {
    fn done<T: TensorType>(r: Result<(Vec<T>, Vec<i64>), Status>) -> Result<(Tensor, Vec<i64>), Status> {
        let (y, idx) = r?;
        Ok((Tensor::vec(y), idx))
    }
    match x.dtype() {
        DataType::Float => done(unique_by(x.as_slice::<f32>()?, |v| (!v.is_nan()).then(|| (v + 0.0).to_bits()))),
        DataType::Double => done(unique_by(x.as_slice::<f64>()?, |v| (!v.is_nan()).then(|| (v + 0.0).to_bits()))),
        DataType::Int32 => done(unique_by(x.as_slice::<i32>()?, |v| Some(*v))),
        DataType::Int64 => done(unique_by(x.as_slice::<i64>()?, |v| Some(*v))),
        DataType::UInt8 => done(unique_by(x.as_slice::<u8>()?, |v| Some(*v))),
        DataType::Int8 => done(unique_by(x.as_slice::<i8>()?, |v| Some(*v))),
        DataType::Int16 => done(unique_by(x.as_slice::<i16>()?, |v| Some(*v))),
        DataType::UInt16 => done(unique_by(x.as_slice::<u16>()?, |v| Some(*v))),
        DataType::UInt32 => done(unique_by(x.as_slice::<u32>()?, |v| Some(*v))),
        DataType::UInt64 => done(unique_by(x.as_slice::<u64>()?, |v| Some(*v))),
        DataType::Bool => done(unique_by(x.as_slice::<bool>()?, |v| Some(*v))),
        DataType::String => done(unique_by(x.as_slice::<Vec<u8>>()?, |v| Some(v.clone()))),
        d => Err(Status::unimplemented(format!("Unique of {d} is not supported"))),
    }
}

impl OpKernel for Unique {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = ctx.input(0)?;
        if x.rank() != 1 {
            return Err(ctx.error(format!("unique expects a 1D vector, got shape {}", x.shape())));
        }
        let (y, idx) = unique(&x).map_err(|e| ctx.error(e.message))?;
        let n = idx.len();
        let distinct = y.num_elements();
        ctx.set_output(0, y)?;
        if self.with_counts {
            let mut count = ferroflow_core::alloc::zeroed::<i64>(&[distinct])?;
            for &i in &idx {
                count[i as usize] += 1;
            }
            ctx.set_output(2, index_tensor(self.out_idx, vec![distinct], count)?)?;
        }
        ctx.set_output(1, index_tensor(self.out_idx, vec![n], idx)?)
    }
}

fn make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(Unique { out_idx: index_type_attr(n, "out_idx")?, with_counts: n.op == "UniqueWithCounts" }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("Unique", make);
    r.add("UniqueWithCounts", make);
}
