//! Math ops: broadcasting arithmetic, comparisons and logic, unary functions and their
//! gradient helpers, AddN, Select/SelectV2, Cast, BroadcastGradientArgs, reductions and
//! ArgMax/ArgMin — TensorFlow's definitions restricted to the dtypes ferroflow supports.

/// Builders of ops with two inputs, named `$a` and `$b`, and one output:
/// `pub fn f(s, $a, $b) -> Output` for each `f => "Op": "formula"`, documented by the
/// formula followed by `$tail`.
macro_rules! two_input_builders {
    ($a:ident, $b:ident, $tail:literal: $($f:ident => $op:literal: $doc:literal),* $(,)?) => {$(
        #[doc = concat!("`", $op, "`: ", $doc, $tail)]
        pub fn $f(s: &Scope, $a: Output, $b: Output) -> Output {
            s.op($op).input($a).input($b).build().output(0)
        }
    )*};
}

/// Builders of elementwise ops with one input `x` and one output: `pub fn f(s, x) -> Output`
/// for each `f => "Op": "formula"`, documented by the formula.
macro_rules! unary_builders {
    ($($f:ident => $op:literal: $doc:literal),* $(,)?) => {$(
        #[doc = concat!("`", $op, "`: ", $doc, ", elementwise.")]
        pub fn $f(s: &Scope, x: Output) -> Output {
            s.op($op).input(x).build().output(0)
        }
    )*};
}

mod binary;
mod binary_ext;
mod histogram;
mod linalg_qr;
mod misc;
mod reduce;
pub(crate) use binary::COMPARISON_AND_LOGIC_OPS;
pub(crate) use reduce::reduction_shape;
mod shapes;
mod unary;
mod unary_ext;

#[cfg(test)]
mod tests;

pub use binary::*;
pub use binary_ext::*;
pub use histogram::*;
pub use linalg_qr::*;
pub use misc::*;
pub use reduce::*;
pub use unary::*;
pub use unary_ext::*;

use crate::registry::OpRegistry;

pub(crate) fn register(r: &mut OpRegistry) {
    ferroflow_core::register_modules! { r: binary, binary_ext, histogram, linalg_qr, misc, reduce, unary, unary_ext }
}
