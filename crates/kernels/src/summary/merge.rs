//! `MergeSummary`: concatenates the values of serialized summaries; a tag may appear once.

use std::collections::HashSet;

use ferroflow_core::proto::{Message, Summary};
use ferroflow_core::Status;

use super::output;
use crate::{KernelRegistry, OpContext, OpKernel};

struct MergeSummary;

impl OpKernel for MergeSummary {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let mut merged = Vec::new();
        let mut tags = HashSet::new();
        for i in 0..ctx.num_inputs() {
            let t = ctx.input(i)?;
            let items = t.as_slice::<Vec<u8>>().map_err(|_| ctx.error(format!("input {i} must be strings")))?;
            for b in items {
                let s = Summary::decode(b.as_slice())
                    .map_err(|e| ctx.error(format!("could not parse one of the summary inputs: {e}")))?;
                for v in s.value {
                    if !v.tag.is_empty() && !tags.insert(v.tag.clone()) {
                        return Err(ctx.error(format!("Duplicate tag {} found in summary inputs", v.tag)));
                    }
                    merged.push(v);
                }
            }
        }
        output(ctx, merged)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add_cheap("MergeSummary", |_| Ok(Box::new(MergeSummary)));
}

#[cfg(test)]
mod tests {
    use ferroflow_core::proto::summary;
    use ferroflow_core::{attr, Code, Tensor};

    use super::*;
    use crate::testutil::{node, run_kernel};

    fn one(tag: &str, v: f32) -> Tensor {
        let s = Summary {
            value: vec![summary::Value {
                tag: tag.into(),
                value: Some(summary::value::Value::SimpleValue(v)),
                ..Default::default()
            }],
        };
        Tensor::scalar(s.encode_to_vec())
    }

    #[test]
    fn merges_and_rejects_duplicates() {
        let n = node("MergeSummary", &[("N", attr::int(2))]);
        let out = run_kernel(n.clone(), vec![one("a", 1.0), one("b", 2.0)], 1).unwrap();
        let s = Summary::decode(out[0].scalar_value::<Vec<u8>>().unwrap().as_slice()).unwrap();
        assert_eq!(s.value.iter().map(|v| v.tag.as_str()).collect::<Vec<_>>(), vec!["a", "b"]);
        let e = run_kernel(n.clone(), vec![one("a", 1.0), one("a", 2.0)], 1).unwrap_err();
        assert!(e.message.contains("Duplicate tag a"), "{e}");
        let e = run_kernel(n, vec![one("a", 1.0), Tensor::scalar(vec![0xffu8, 0xff])], 1).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument);
    }
}
