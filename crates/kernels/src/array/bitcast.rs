//! `Bitcast` (`tf.bitcast`): the bytes of a tensor read as another fixed-size type, without
//! copying their meaning. Between types of one size the shape is kept; to a narrower type a
//! last dimension of `in_size / out_size` is appended; to a wider type the last dimension
//! must be `out_size / in_size` and is removed. `tf.random.Generator` bitcasts its int64
//! state to the uint64 key and counter of the stateless samplers.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Shape, Status, Tensor};

use crate::{KernelRegistry, OpKernel};

/// The types TensorFlow's `Bitcast` allows (numbers and quantized numbers, not `bool`).
pub const BITCAST_TYPES: [DataType; 19] = [
    DataType::BFloat16,
    DataType::Half,
    DataType::Float,
    DataType::Double,
    DataType::Int64,
    DataType::Int32,
    DataType::UInt8,
    DataType::UInt16,
    DataType::UInt32,
    DataType::UInt64,
    DataType::Int8,
    DataType::Int16,
    DataType::Complex64,
    DataType::Complex128,
    DataType::QInt8,
    DataType::QUInt8,
    DataType::QInt16,
    DataType::QUInt16,
    DataType::QInt32,
];

/// The output dims of bitcasting `dims` from `in_size`-byte to `out_size`-byte elements, or
/// `None` when the last dimension does not hold a whole output element.
pub fn bitcast_dims(dims: &[usize], in_size: usize, out_size: usize) -> Option<Vec<usize>> {
    use std::cmp::Ordering::*;
    match in_size.cmp(&out_size) {
        Equal => Some(dims.to_vec()),
        Greater => {
            let mut d = dims.to_vec();
            d.push(in_size / out_size);
            Some(d)
        }
        Less => match dims.split_last() {
            Some((&last, rest)) if last * in_size == out_size => Some(rest.to_vec()),
            _ => None,
        },
    }
}

op_kernel! {
    struct Bitcast { from: DataType, to: DataType }
    fn compute(&self, ctx) {
        let x = ctx.take_input(0)?;
        if x.dtype() != self.from {
            return Err(ctx.error(format!("input must be {}, got {}", self.from.tf_name(), x.dtype().tf_name())));
        }
        if self.from == self.to {
            return ctx.set_output(0, x);
        }
        // Both sizes are known: the types are checked at construction.
        let (a, b) = (self.from.byte_size().unwrap_or(1), self.to.byte_size().unwrap_or(1));
        let dims = bitcast_dims(x.dims(), a, b).ok_or_else(|| {
            ctx.error(format!(
                "Cannot bitcast from {} to {}: the last dimension of shape {} must be {} (the output's \
                 element size over the input's)",
                self.from.as_i32(),
                self.to.as_i32(),
                x.shape(),
                b / a
            ))
        })?;
        let bytes = x.raw_bytes().ok_or_else(|| ctx.error(format!("{} has no fixed-size bytes", x.dtype())))?;
        let out = Tensor::from_content(self.to, Shape::from(dims), bytes).map_err(|e| ctx.error_with(e))?;
        ctx.set_output(0, out)
    }
}

fn make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let from = n.attr_type("T")?;
    let to = n.attr_type("type")?;
    for (what, t) in [("T", from), ("type", to)] {
        if !BITCAST_TYPES.contains(&t) {
            return Err(Status::invalid_argument(format!(
                "Bitcast's {what} must be a number or quantized type, not {}",
                t.tf_name()
            ))
            .in_node(&n.name, &n.op));
        }
    }
    Ok(Box::new(Bitcast { from, to }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add_cheap("Bitcast", make);
}
