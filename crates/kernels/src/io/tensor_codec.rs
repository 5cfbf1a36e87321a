//! `SerializeTensor` and `ParseTensor` (`tf.io.serialize_tensor`, `tf.io.parse_tensor`): a
//! tensor as one serialized `TensorProto` string and back. Numbers are written as
//! `tensor_content`, strings as `string_val` (TensorFlow's choice, byte for byte).

use ferroflow_core::proto::{Message, TensorProto};
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use crate::array::util::{tf_type_name, FnKernel};
use crate::{KernelRegistry, OpContext};

/// TensorFlow's encoding of `t` for `SerializeTensor`.
pub fn serialize_tensor(t: &Tensor) -> Result<Vec<u8>, Status> {
    let p = if t.dtype() == DataType::String { t.to_proto_field() } else { t.to_proto() };
    Ok(p.encode_to_vec())
}

fn serialize(ctx: &mut OpContext) -> Result<(), Status> {
    let t = ctx.input(0)?;
    let bytes = serialize_tensor(&t).map_err(|e| ctx.error_with(e))?;
    ctx.set_output(0, Tensor::scalar(bytes))
}

fn parse(ctx: &mut OpContext) -> Result<(), Status> {
    let want = ctx.node().attr_type("out_type")?;
    let s = ctx.input(0)?;
    if s.rank() != 0 {
        return Err(ctx.error(format!("Expected `serialized` to be a scalar, got shape: {}", s.shape())));
    }
    let bytes = &s.as_slice::<Vec<u8>>()?[0];
    let p = TensorProto::decode(bytes.as_slice())
        .map_err(|e| ctx.error(format!("Could not parse `serialized` as TensorProto: {e}")))?;
    let t = Tensor::from_proto(&p).map_err(|e| ctx.error_with(e))?;
    if t.dtype() != want {
        return Err(ctx.error(format!(
            "Type mismatch between parsed tensor ({}) and dtype ({})",
            tf_type_name(t.dtype()),
            tf_type_name(want)
        )));
    }
    ctx.set_output(0, t)
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("SerializeTensor", |_| Ok(FnKernel::cheap(serialize)));
    r.add("ParseTensor", |_| Ok(FnKernel::cheap(parse)));
}
