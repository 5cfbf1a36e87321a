//! `ScalarSummary`: one `simple_value` per tag.

use ferroflow_core::proto::summary;
use ferroflow_core::Status;

use super::{output, tagged, utf8};
use crate::{KernelRegistry, OpContext, OpKernel};

struct ScalarSummary;

impl OpKernel for ScalarSummary {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let tags = ctx.input(0)?;
        let values = ctx.input(1)?;
        if tags.shape() != values.shape() {
            return Err(ctx.error(format!(
                "tags and values are not the same shape: {} != {}",
                tags.shape(),
                values.shape()
            )));
        }
        let tag_list = tags.as_slice::<Vec<u8>>().map_err(|_| ctx.error("tags must be strings"))?;
        let vals = values.to_f64_vec().map_err(|e| ctx.error(e.message))?;
        let values = tag_list
            .iter()
            .zip(vals)
            .map(|(t, v)| Ok(tagged(utf8(ctx, t, "tag")?, summary::value::Value::SimpleValue(v as f32))));
        let values = values.collect::<Result<Vec<_>, Status>>()?;
        output(ctx, values)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add_cheap("ScalarSummary", |_| Ok(Box::new(ScalarSummary)));
}

#[cfg(test)]
mod tests {
    use ferroflow_core::proto::{Message, Summary};
    use ferroflow_core::{attr, Code, DataType, Tensor};

    use super::*;
    use crate::testutil::{node, run_kernel};

    #[test]
    fn one_value_per_tag() {
        let n = node("ScalarSummary", &[("T", attr::ty(DataType::Float))]);
        let tags = Tensor::vec(vec![b"loss".to_vec(), b"acc".to_vec()]);
        let out = run_kernel(n.clone(), vec![tags, Tensor::vec(vec![0.5f32, 0.25])], 1).unwrap();
        let bytes = out[0].scalar_value::<Vec<u8>>().unwrap();
        let s = Summary::decode(bytes.as_slice()).unwrap();
        assert_eq!(s.value.len(), 2);
        assert_eq!(s.value[1].tag, "acc");
        assert_eq!(s.value[1].value, Some(summary::value::Value::SimpleValue(0.25)));
        let e = run_kernel(n, vec![Tensor::scalar(b"x".to_vec()), Tensor::vec(vec![1.0f32])], 1).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument);
        assert!(e.message.contains("not the same shape"), "{e}");
    }
}
