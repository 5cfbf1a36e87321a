//! nn ops: matrix products, bias, activations, softmax and cross-entropy, convolution and
//! pooling (TensorFlow's definitions, shape functions and one builder per op).

/// An activation's builder `f(s, features)` and its gradient op's `f_grad(s, gradients, $arg)`
/// (`$arg`: the forward input `features` or the forward result `outputs`), documented by their
/// formulas.
macro_rules! activation_builders {
    ($($f:ident, $grad:ident => $op:literal($arg:ident): $doc:literal, $grad_doc:literal;)*) => {$(
        #[doc = concat!("`", $op, "`: ", $doc, ".")]
        pub fn $f(s: &Scope, features: Output) -> Output {
            s.op($op).input(features).build().output(0)
        }

        #[doc = concat!("`", $op, "Grad`", $grad_doc, ".")]
        pub fn $grad(s: &Scope, gradients: Output, $arg: Output) -> Output {
            s.op(concat!($op, "Grad")).input(gradients).input($arg).build().output(0)
        }
    )*};
}

mod activation;
mod activation_ext;
mod batch_norm;
mod batch_norm_ex;
mod conv;
mod depthwise;
mod fractional_pool;
mod lrn;
mod matmul;
mod pool;
mod pool_argmax;
mod volume;
mod window;
mod window_builders;

pub use activation::*;
pub use activation_ext::*;
pub use batch_norm::*;
pub use conv::*;
pub use depthwise::*;
pub use fractional_pool::*;
pub use lrn::*;
pub use matmul::*;
pub use pool::*;
pub use pool_argmax::*;
pub use volume::*;

use crate::op_def::{op, OpDef};
use crate::registry::OpRegistry;
use crate::shape_fn::unchanged;

/// TensorFlow's `numbertype` (without the quantized types).
const NUMBER_TYPES: &str =
    "{float, double, int32, uint8, int16, int8, complex64, int64, bfloat16, uint16, complex128, half, uint32, uint64}";
/// TensorFlow's `realnumbertype`.
const REAL_TYPES: &str = "{float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64}";
/// Floating-point types of the softmax and pooling ops.
const FLOAT_TYPES: &str = "{half, bfloat16, float, double}";

/// An activation op: `features` → `activations` of the same shape, `T` as attr spec `t`.
fn activation_def(name: &str, t: &str) -> OpDef {
    op(name).input("features: T").output("activations: T").attr(t).shape_fn(unchanged).build()
}

/// An activation's gradient op: (`gradients`, `{second}`: the forward input or result) →
/// `backprops` of the same shape, `T` as attr spec `t`.
fn activation_grad_def(name: &str, second: &str, t: &str) -> OpDef {
    op(name)
        .input("gradients: T")
        .input(&format!("{second}: T"))
        .output("backprops: T")
        .attr(t)
        .shape_fn(unchanged)
        .build()
}

pub(crate) fn register(r: &mut OpRegistry) {
    ferroflow_core::register_modules! { r: matmul, activation, activation_ext, conv, pool, pool_argmax, fractional_pool, batch_norm, batch_norm_ex, depthwise, lrn, volume }
}

#[cfg(test)]
mod tests;
