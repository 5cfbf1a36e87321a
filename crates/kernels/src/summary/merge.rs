//! `MergeSummary`: concatenates the values of serialized summaries; a tag may appear once.

use std::collections::HashSet;

use ferroflow_core::proto::{Message, Summary};

use super::output;
use crate::KernelRegistry;

op_kernel! {
    struct MergeSummary;
    fn compute(&self, ctx) {
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
