//! Smooth and leaky activations and their gradient ops: `Softplus`, `Softsign`, `Selu`,
//! `LeakyRelu` (TensorFlow's definitions: half, bfloat16, float and double).

use ferroflow_core::attr;

use super::{activation_def, activation_grad_def, FLOAT_TYPES};
use crate::op_def::op;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::unchanged;

pub(super) fn register(r: &mut OpRegistry) {
    let t = format!("T: {FLOAT_TYPES}");
    for name in ["Softplus", "Softsign", "Selu"] {
        r.add(activation_def(name, &t));
    }
    for (name, second) in [("SoftplusGrad", "features"), ("SoftsignGrad", "features"), ("SeluGrad", "outputs")] {
        r.add(activation_grad_def(name, second, &t));
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

activation_builders! {
    softplus, softplus_grad => "Softplus"(features): "`ln(1 + eˣ)` (x itself above, eˣ below TensorFlow's thresholds)",
        ": `gradients / (1 + e^-features)`";
    softsign, softsign_grad => "Softsign"(features): "`x / (1 + |x|)`", ": `gradients / (1 + |features|)²`";
    selu, selu_grad => "Selu"(outputs): "`scale * x` for `x >= 0`, `scale * alpha * (eˣ - 1)` below",
        " from the Selu `outputs`: `gradients * (outputs < 0 ? outputs + scale * alpha : scale)`";
}

/// `LeakyRelu`: `x > 0 ? x : alpha * x`.
pub fn leaky_relu(s: &Scope, features: Output, alpha: f32) -> Output {
    s.op("LeakyRelu").input(features).attr("alpha", attr::float(alpha)).build().output(0)
}

/// `LeakyReluGrad`: `features > 0 ? gradients : alpha * gradients`.
pub fn leaky_relu_grad(s: &Scope, gradients: Output, features: Output, alpha: f32) -> Output {
    s.op("LeakyReluGrad").input(gradients).input(features).attr("alpha", attr::float(alpha)).build().output(0)
}
