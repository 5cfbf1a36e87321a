//! Fake quantization ops (TensorFlow's definitions and builders): `FakeQuantWithMinMaxArgs`,
//! `FakeQuantWithMinMaxVars`, `FakeQuantWithMinMaxVarsPerChannel` and their gradient ops.

use ferroflow_core::attr;

use crate::op_def::{op, OpDefBuilder};
use crate::ops::op_output;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{unchanged, Dims, ShapeCtx, ShapeFn};

type R = Result<Vec<Dims>, ferroflow_core::Status>;

const BITS: [&str; 2] = ["num_bits: int = 8", "narrow_range: bool = false"];

pub(crate) fn register(r: &mut OpRegistry) {
    let with_bits = |b: OpDefBuilder| b.attr(BITS[0]).attr(BITS[1]);
    r.add(
        with_bits(op("FakeQuantWithMinMaxArgs").input("inputs: float").output("outputs: float"))
            .attr("min: float = -6")
            .attr("max: float = 6")
            .shape_fn(unchanged)
            .build(),
    );
    r.add(
        with_bits(
            op("FakeQuantWithMinMaxArgsGradient")
                .input("gradients: float")
                .input("inputs: float")
                .output("backprops: float"),
        )
        .attr("min: float = -6")
        .attr("max: float = 6")
        .shape_fn(unchanged)
        .build(),
    );
    let ranged: [(&str, ShapeFn); 2] =
        [("FakeQuantWithMinMaxVars", scalar_range_grad), ("FakeQuantWithMinMaxVarsPerChannel", channel_range_grad)];
    for (name, grad_shape) in ranged {
        let with_range = |b: OpDefBuilder| with_bits(b.input("min: float").input("max: float"));
        r.add(with_range(op(name).input("inputs: float")).output("outputs: float").shape_fn(unchanged).build());
        r.add(
            with_range(op(&format!("{name}Gradient")).input("gradients: float").input("inputs: float"))
                .output("backprops_wrt_input: float")
                .output("backprop_wrt_min: float")
                .output("backprop_wrt_max: float")
                .shape_fn(grad_shape)
                .build(),
        );
    }
}

/// The gradients of the input (its shape) and of the scalar range ends.
fn scalar_range_grad(c: &ShapeCtx) -> R {
    Ok(vec![c.input(1), Some(vec![]), Some(vec![])])
}

/// The gradients of the input (its shape) and of each channel's range ends.
fn channel_range_grad(c: &ShapeCtx) -> R {
    let depth = c.input(1).and_then(|d| d.last().copied()).unwrap_or(-1);
    Ok(vec![c.input(1), Some(vec![depth]), Some(vec![depth])])
}

/// `FakeQuantWithMinMaxArgs` over [`min`, `max`] on `num_bits` bits.
pub fn fake_quant_with_min_max_args(s: &Scope, x: Output, min: f32, max: f32, num_bits: i64) -> Output {
    let attrs = [("min", attr::float(min)), ("max", attr::float(max)), ("num_bits", attr::int(num_bits))];
    op_output(s, "FakeQuantWithMinMaxArgs", [x], attrs)
}

/// `FakeQuantWithMinMaxVars` (scalar `min`/`max`) or, for vectors over the last dim,
/// `FakeQuantWithMinMaxVarsPerChannel`, on `num_bits` bits.
pub fn fake_quant_with_min_max_vars(
    s: &Scope,
    x: Output,
    min: Output,
    max: Output,
    num_bits: i64,
    per_channel: bool,
) -> Output {
    let name = if per_channel { "FakeQuantWithMinMaxVarsPerChannel" } else { "FakeQuantWithMinMaxVars" };
    s.op(name).input(x).input(min).input(max).attr("num_bits", attr::int(num_bits)).build().output(0)
}
