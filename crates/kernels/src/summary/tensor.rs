//! `TensorSummaryV2` (`tf.compat.v1.summary.tensor_summary`, `tf.compat.v1.summary.text`):
//! one value holding the tensor itself (strings in the typed field, everything else as
//! `tensor_content`, as TensorFlow writes them) and the summary metadata the client
//! serialized (the plugin that displays it).

use ferroflow_core::proto::{summary, Message, SummaryMetadata};
use ferroflow_core::{DataType, Status};

use super::{output, utf8};
use crate::{KernelRegistry, OpContext};

/// The string scalar at input `i`.
fn string_scalar(ctx: &OpContext, i: usize, what: &str) -> Result<Vec<u8>, Status> {
    let t = ctx.input(i)?;
    match t.as_slice::<Vec<u8>>() {
        Ok([s]) if t.rank() == 0 => Ok(s.clone()),
        _ => {
            Err(ctx.error(format!("{what} must be a string scalar, got a {} tensor of shape {}", t.dtype(), t.shape())))
        }
    }
}

op_kernel! {
    struct TensorSummaryV2;
    fn compute(&self, ctx) {
        let tag = utf8(ctx, &string_scalar(ctx, 0, "tag")?, "tag")?;
        let t = ctx.input(1)?;
        let meta = string_scalar(ctx, 2, "serialized_summary_metadata")?;
        let metadata = SummaryMetadata::decode(meta.as_slice())
            .map_err(|e| ctx.error(format!("serialized_summary_metadata is not a SummaryMetadata: {e}")))?;
        let proto = if t.dtype() == DataType::String { t.to_proto_field() } else { t.to_proto() };
        let v = summary::Value {
            tag,
            metadata: Some(metadata),
            value: Some(summary::value::Value::Tensor(proto)),
            ..Default::default()
        };
        output(ctx, vec![v])
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add_cheap("TensorSummaryV2", |_| Ok(Box::new(TensorSummaryV2)));
}
