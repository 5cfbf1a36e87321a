//! Elementwise unary ops and the gradient helpers of unary functions.

use ferroflow_core::Status;

use super::shapes::merge;
use crate::op_def::{op, OpDef};
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{unchanged, Dims, ShapeCtx};

/// `y` and `dy` have one shape (the kernel accepts equal element counts; the output takes
/// `y`'s shape).
fn grad_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let (y, dy) = (c.input(0), c.input(1));
    match (&y, &dy) {
        (Some(a), Some(b)) if a.len() == b.len() => Ok(vec![merge(c, &y, &dy)?]),
        _ => Ok(vec![y]),
    }
}

/// An elementwise op: `x` → `y` (of type `out`) of the same shape, `T` among `types`.
pub(super) fn unary_def(name: &str, types: &str, out: &str) -> OpDef {
    op(name).input("x: T").output(&format!("y: {out}")).attr(&format!("T: {types}")).shape_fn(unchanged).build()
}

pub(crate) fn register(r: &mut OpRegistry) {
    let unary = |r: &mut OpRegistry, name: &str, types: &str| r.add(unary_def(name, types, "T"));
    unary(r, "Round", "{float, double, int32, int64}");
    for name in ["Sign", "Reciprocal", "Inv"] {
        unary(r, name, "{float, double, int32, int64, complex64, complex128}");
    }
    // TensorFlow's OpDef types.
    unary(r, "Neg", "{bfloat16, half, float, double, int8, int16, int32, int64, complex64, complex128}");
    unary(r, "Abs", "{bfloat16, half, float, double, int8, int16, int32, int64}");
    unary(
        r,
        "Square",
        "{bfloat16, half, float, double, int8, int16, int32, int64, uint8, uint16, uint32, uint64, complex64, complex128}",
    );
    for name in ["Sqrt", "Rsqrt", "Exp", "Log", "Log1p", "Tanh", "Sigmoid"] {
        unary(r, name, "{float, double, complex64, complex128}");
    }
    for name in ["Floor", "Ceil"] {
        unary(r, name, "{float, double}");
    }
    for name in ["TanhGrad", "SigmoidGrad", "SqrtGrad", "RsqrtGrad", "ReciprocalGrad", "InvGrad"] {
        r.add(
            op(name)
                .input("y: T")
                .input("dy: T")
                .output("z: T")
                .attr("T: {float, double}")
                .shape_fn(grad_shape)
                .build(),
        );
    }
}

unary_builders! {
    neg => "Neg": "-x",
    square => "Square": "x * x",
    sqrt => "Sqrt": "√x",
    rsqrt => "Rsqrt": "1 / √x",
    exp => "Exp": "eˣ",
    log => "Log": "ln x",
    log1p => "Log1p": "ln(1 + x)",
    tanh => "Tanh": "tanh x",
    sigmoid => "Sigmoid": "1 / (1 + e⁻ˣ)",
    floor => "Floor": "⌊x⌋",
    ceil => "Ceil": "⌈x⌉",
    round => "Round": "x rounded half to even",
    abs => "Abs": "|x|",
    sign => "Sign": "-1, 0 or 1 (NaN stays NaN)",
    reciprocal => "Reciprocal": "1 / x",
}

two_input_builders! { y, dy, " from the function's output `y` and incoming gradient `dy`.":
    tanh_grad => "TanhGrad": "dy * (1 - y²)",
    sigmoid_grad => "SigmoidGrad": "dy * y * (1 - y)",
    sqrt_grad => "SqrtGrad": "dy * 0.5 / y",
    rsqrt_grad => "RsqrtGrad": "dy * -0.5 * y³",
    reciprocal_grad => "ReciprocalGrad": "-dy * y²",
}
