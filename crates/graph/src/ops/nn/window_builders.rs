//! Builder helpers shared by the windowed ops (convolution, pooling): a convolution node,
//! the pooling window attrs, and the backprop builders of a convolution family.

use ferroflow_core::attr;

use crate::ops::op_output;
use crate::scope::{OpBuilder, Output, Scope};

/// Output 0 of an `op_type` convolution node on `inputs` with its `strides` and `padding`.
pub(super) fn conv_op<const N: usize>(
    s: &Scope,
    op_type: &str,
    inputs: [Output; N],
    strides: &[i64],
    padding: &str,
) -> Output {
    op_output(s, op_type, inputs, [("strides", attr::list_int(strides)), ("padding", attr::string(padding))])
}

/// `b` with a pooling window's `ksize`, `strides` and `padding` attrs.
pub(super) fn window_attrs(b: OpBuilder, ksize: &[i64], strides: &[i64], padding: &str) -> OpBuilder {
    b.attr("ksize", attr::list_int(ksize))
        .attr("strides", attr::list_int(strides))
        .attr("padding", attr::string(padding))
}

/// The two gradient builders of a convolution family, each on two given inputs and
/// `out_backprop`, with the forward convolution's `strides` and `padding`.
macro_rules! conv_backprop_builders {
    ($($(#[$doc:meta])* $f:ident => $op:literal ($a:ident, $b:ident);)*) => {$(
        $(#[$doc])*
        pub fn $f(s: &Scope, $a: Output, $b: Output, out_backprop: Output, strides: &[i64], padding: &str) -> Output {
            $crate::ops::nn::window_builders::conv_op(s, $op, [$a, $b, out_backprop], strides, padding)
        }
    )*};
}
pub(super) use conv_backprop_builders;
