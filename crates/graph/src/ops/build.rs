//! The common body of the builder functions: one node of an op type on its inputs and attrs.

use ferroflow_core::proto::AttrValue;

use crate::scope::{Output, Scope};

/// Output 0 of a new `op_type` node on `inputs` (one single-tensor argument each, in order)
/// with `attrs` set: what a one-output builder function does with its arguments.
pub fn op_output<'a>(
    s: &Scope,
    op_type: &str,
    inputs: impl IntoIterator<Item = Output>,
    attrs: impl IntoIterator<Item = (&'a str, AttrValue)>,
) -> Output {
    attrs.into_iter().fold(s.op(op_type).inputs(inputs), |b, (name, v)| b.attr(name, v)).build().output(0)
}
