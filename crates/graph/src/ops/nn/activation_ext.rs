//! Smooth and leaky activations and their gradient ops: `Softplus`, `Softsign`, `Selu`,
//! `LeakyRelu` (TensorFlow's definitions: half, bfloat16, float and double).

use ferroflow_core::attr;

use super::FLOAT_TYPES;
use crate::op_def::op;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::unchanged;

pub(super) fn register(r: &mut OpRegistry) {
    let t = format!("T: {FLOAT_TYPES}");
    for name in ["Softplus", "Softsign", "Selu"] {
        r.add(op(name).input("features: T").output("activations: T").attr(&t).shape_fn(unchanged).build());
    }
    for (name, second) in [("SoftplusGrad", "features"), ("SoftsignGrad", "features"), ("SeluGrad", "outputs")] {
        r.add(
            op(name)
                .input("gradients: T")
                .input(&format!("{second}: T"))
                .output("backprops: T")
                .attr(&t)
                .shape_fn(unchanged)
                .build(),
        );
    }
    let t_default = format!("{t} = DT_FLOAT");
    r.add(
        op("LeakyRelu")
            .input("features: T")
            .output("activations: T")
            .attr("alpha: float = 0.2")
            .attr(&t_default)
            .shape_fn(unchanged)
            .build(),
    );
    r.add(
        op("LeakyReluGrad")
            .input("gradients: T")
            .input("features: T")
            .output("backprops: T")
            .attr("alpha: float = 0.2")
            .attr(&t_default)
            .shape_fn(unchanged)
            .build(),
    );
}

/// `Softplus`: `ln(1 + eˣ)` (x itself above, eˣ below TensorFlow's thresholds).
pub fn softplus(s: &Scope, features: Output) -> Output {
    s.op("Softplus").input(features).build().output(0)
}

/// `SoftplusGrad`: `gradients / (1 + e^-features)`.
pub fn softplus_grad(s: &Scope, gradients: Output, features: Output) -> Output {
    s.op("SoftplusGrad").input(gradients).input(features).build().output(0)
}

/// `Softsign`: `x / (1 + |x|)`.
pub fn softsign(s: &Scope, features: Output) -> Output {
    s.op("Softsign").input(features).build().output(0)
}

/// `SoftsignGrad`: `gradients / (1 + |features|)²`.
pub fn softsign_grad(s: &Scope, gradients: Output, features: Output) -> Output {
    s.op("SoftsignGrad").input(gradients).input(features).build().output(0)
}

/// `Selu`: `scale * x` for `x >= 0`, `scale * alpha * (eˣ - 1)` below.
pub fn selu(s: &Scope, features: Output) -> Output {
    s.op("Selu").input(features).build().output(0)
}

/// `SeluGrad` from the Selu `outputs`: `gradients * (outputs < 0 ? outputs + scale * alpha : scale)`.
pub fn selu_grad(s: &Scope, gradients: Output, outputs: Output) -> Output {
    s.op("SeluGrad").input(gradients).input(outputs).build().output(0)
}

/// `LeakyRelu`: `x > 0 ? x : alpha * x`.
pub fn leaky_relu(s: &Scope, features: Output, alpha: f32) -> Output {
    s.op("LeakyRelu").input(features).attr("alpha", attr::float(alpha)).build().output(0)
}

/// `LeakyReluGrad`: `features > 0 ? gradients : alpha * gradients`.
pub fn leaky_relu_grad(s: &Scope, gradients: Output, features: Output, alpha: f32) -> Output {
    s.op("LeakyReluGrad").input(gradients).input(features).attr("alpha", attr::float(alpha)).build().output(0)
}
