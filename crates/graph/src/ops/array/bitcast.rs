//! `Bitcast` (TensorFlow's definition and shape function): a tensor's bytes read as another
//! number type. Not differentiable.

use ferroflow_core::{DataType, NodeAttrs, Status};

use crate::op_def::op;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{Dims, ShapeCtx};

const TYPES: &str = "{bfloat16, half, float, double, int64, int32, uint8, uint16, uint32, uint64, int8, int16, \
                     complex64, complex128, qint8, quint8, qint16, quint16, qint32}";

fn bitcast_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let Some(dims) = c.input(0) else { return Ok(vec![None]) };
    let (from, to) = (c.node.attr_type("T")?, c.node.attr_type("type")?);
    let (a, b) = (from.byte_size().unwrap_or(1) as i64, to.byte_size().unwrap_or(1) as i64);
    Ok(vec![Some(if a == b {
        dims
    } else if a > b {
        let mut d = dims;
        d.push(a / b);
        d
    } else {
        let Some((&last, rest)) = dims.split_last() else {
            return Err(c.error(format!(
                "Cannot bitcast from {} to {} due to shape: a scalar",
                from.as_i32(),
                to.as_i32()
            )));
        };
        if last >= 0 && last != b / a {
            return Err(c.error(format!(
                "Cannot bitcast from {} to {} due to shape. {last} does not match {}",
                from.as_i32(),
                to.as_i32(),
                b / a
            )));
        }
        rest.to_vec()
    })])
}

pub(crate) fn register(r: &mut OpRegistry) {
    r.add(
        op("Bitcast")
            .input("input: T")
            .output("output: type")
            .attr(&format!("T: {TYPES}"))
            .attr(&format!("type: {TYPES}"))
            .shape_fn(bitcast_shape)
            .build(),
    );
}

/// `Bitcast`: the bytes of `input` as elements of `dtype` (`tf.bitcast`).
pub fn bitcast(s: &Scope, input: Output, dtype: DataType) -> Output {
    s.op("Bitcast").input(input).attr("type", ferroflow_core::attr::ty(dtype)).build().output(0)
}
