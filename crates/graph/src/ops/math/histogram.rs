//! `HistogramFixedWidth` (TensorFlow's definition): counts of `values` in `nbins` equal
//! bins over `value_range`; `[nbins]` when `nbins` is a constant. Not differentiable.

use ferroflow_core::{attr, DataType, Status};

use crate::op_def::op;
use crate::ops::op_output;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{Dims, ShapeCtx};

fn histogram_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    if let Some(d) = c.input(1) {
        if d.len() != 1 || (d[0] >= 0 && d[0] != 2) {
            return Err(c.error(format!("value_range must be a vector of 2 elements, but has shape {d:?}")));
        }
    }
    if let Some(d) = c.input(2) {
        if !d.is_empty() {
            return Err(c.error(format!("nbins must be a scalar, but has shape {d:?}")));
        }
    }
    let n = match c.const_input(2) {
        Some(t) => {
            let n = t.scalar_value::<i32>()?;
            if n <= 0 {
                return Err(c.error(format!("nbins should be a positive number, but got '{n}'")));
            }
            n as i64
        }
        None => -1,
    };
    Ok(vec![Some(vec![n])])
}

pub(crate) fn register(r: &mut OpRegistry) {
    r.add(
        op("HistogramFixedWidth")
            .input("values: T")
            .input("value_range: T")
            .input("nbins: int32")
            .output("out: dtype")
            .attr("T: {int32, int64, float32, float64}")
            .attr("dtype: {int32, int64} = DT_INT32")
            .shape_fn(histogram_shape)
            .build(),
    );
}

/// `HistogramFixedWidth`: counts (`dtype` int32 or int64) of `values` in `nbins` equal
/// bins over `value_range = [lo, hi]`; values outside count in the end bins.
pub fn histogram_fixed_width(s: &Scope, values: Output, value_range: Output, nbins: Output, dtype: DataType) -> Output {
    op_output(s, "HistogramFixedWidth", [values, value_range, nbins], [("dtype", attr::ty(dtype))])
}
