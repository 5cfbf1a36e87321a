//! `MaxPoolWithArgmax`, `MaxPoolGradWithArgmax`, `MaxPoolGradGradWithArgmax` (TensorFlow's
//! definitions; NHWC only): max pooling that also returns where each maximum was, as a flat
//! index into the input, and the two gradients that route through that index.

use ferroflow_core::{attr, DataType, Status};

use super::pool::pooled;
use super::REAL_TYPES;
use crate::op_def::{op, OpDefBuilder};
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{unchanged, Dims, ShapeCtx};

fn argmax_op(name: &str) -> OpDefBuilder {
    op(name)
        .attr("ksize: list(int) >= 4")
        .attr("strides: list(int) >= 4")
        .attr("Targmax: {int32, int64} = DT_INT64")
        .attr("padding: {'SAME', 'VALID'}")
        .attr("include_batch_in_index: bool = false")
        .attr(&format!("T: {REAL_TYPES}"))
}

fn forward_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let p = pooled(c, &c.input(0))?;
    Ok(vec![p.clone(), p])
}

fn grad_grad_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![pooled(c, &c.input(0))?])
}

pub(super) fn register(r: &mut OpRegistry) {
    r.add(
        argmax_op("MaxPoolWithArgmax")
            .input("input: T")
            .output("output: T")
            .output("argmax: Targmax")
            .shape_fn(forward_shape)
            .build(),
    );
    r.add(
        argmax_op("MaxPoolGradWithArgmax")
            .input("input: T")
            .input("grad: T")
            .input("argmax: Targmax")
            .output("output: T")
            .shape_fn(unchanged)
            .build(),
    );
    r.add(
        argmax_op("MaxPoolGradGradWithArgmax")
            .input("input: T")
            .input("grad: T")
            .input("argmax: Targmax")
            .output("output: T")
            .shape_fn(grad_grad_shape)
            .build(),
    );
}

/// `MaxPoolWithArgmax` (NHWC): the max pooling of `x` and, for each pooled element, the
/// flat index of its maximum in `x` (`(y * width + x) * channels + c`, plus the batch offset
/// when `include_batch_in_index`), as `Targmax` (int32 or int64).
pub fn max_pool_with_argmax(
    s: &Scope,
    x: Output,
    ksize: &[i64],
    strides: &[i64],
    padding: &str,
    targmax: DataType,
    include_batch_in_index: bool,
) -> (Output, Output) {
    let o = s
        .op("MaxPoolWithArgmax")
        .input(x)
        .attr("ksize", attr::list_int(ksize))
        .attr("strides", attr::list_int(strides))
        .attr("padding", attr::string(padding))
        .attr("Targmax", attr::ty(targmax))
        .attr("include_batch_in_index", attr::bool(include_batch_in_index))
        .build();
    (o.output(0), o.output(1))
}
