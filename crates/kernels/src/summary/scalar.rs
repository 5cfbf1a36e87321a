//! `ScalarSummary`: one `simple_value` per tag.

use ferroflow_core::proto::summary;
use ferroflow_core::Status;

use super::{output, tagged, utf8};
use crate::KernelRegistry;

op_kernel! {
    struct ScalarSummary;
    fn compute(&self, ctx) {
        let [tags, values] = ctx.inputs()?;
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
