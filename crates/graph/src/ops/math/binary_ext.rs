//! More broadcasting binary ops (TensorFlow's definitions): `Atan2`, `Xlogy`, `Xlog1py`,
//! `Xdivy`, `MulNoNan`, truncating and C-style division (`TruncateDiv`, `TruncateMod`, `Mod`),
//! the bitwise and shift ops, `NextAfter`, the special functions of two or three arguments
//! (`Igamma`, `Igammac`, `IgammaGradA`, `Polygamma`, `Zeta`, `Betainc`) and `ApproximateEqual`.

use ferroflow_core::{attr, Status};

use super::shapes::merge;
use crate::op_def::op;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{broadcast, Dims, ShapeCtx};

const FLOATS: &str = "{bfloat16, half, float, double}";
const FLOATS_COMPLEX: &str = "{half, bfloat16, float, double, complex64, complex128}";
const INTS: &str = "{int8, int16, int32, int64, uint8, uint16, uint32, uint64}";
const F32_F64: &str = "{float, double}";
/// TensorFlow's `numbertype` with the quantized types (ApproximateEqual's).
const APPROX: &str = "{float, double, int32, uint8, int16, int8, complex64, int64, qint8, quint8, qint32, bfloat16, \
                      qint16, quint16, uint16, complex128, half, uint32, uint64}";

/// Operand shapes of a two-input op that must match exactly (`ApproximateEqual`).
fn same_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![merge(c, &c.input(0), &c.input(1))?])
}

/// `Betainc`: `a`, `b` and `x` are scalars or share one shape.
fn betainc_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let mut out: Dims = Some(vec![]);
    let mut unknown = false;
    for i in 0..3 {
        match c.input(i) {
            None => unknown = true,
            Some(d) if d.is_empty() => {}
            d => out = if out.as_ref().is_some_and(|o| o.is_empty()) { d } else { merge(c, &out, &d)? },
        }
    }
    Ok(vec![if unknown && out.as_ref().is_some_and(|o| o.is_empty()) { None } else { out }])
}

pub(crate) fn register(r: &mut OpRegistry) {
    let bin = |r: &mut OpRegistry, name: &str, a: &str, b: &str, types: &str| {
        r.add(
            op(name)
                .input(&format!("{a}: T"))
                .input(&format!("{b}: T"))
                .output("z: T")
                .attr(&format!("T: {types}"))
                .shape_fn(broadcast)
                .build(),
        );
    };
    bin(r, "Atan2", "y", "x", FLOATS);
    for name in ["Xlogy", "Xlog1py", "Xdivy"] {
        bin(r, name, "x", "y", FLOATS_COMPLEX);
    }
    bin(r, "MulNoNan", "x", "y", "{bfloat16, half, float, double, complex64, complex128}");
    bin(
        r,
        "TruncateDiv",
        "x",
        "y",
        "{bfloat16, half, float, double, uint8, int8, uint16, int16, int32, uint32, uint64, int64, complex64, complex128}",
    );
    bin(r, "TruncateMod", "x", "y", "{int32, int64, bfloat16, half, float, double}");
    bin(r, "Mod", "x", "y", "{int32, int64, float16, half, bfloat16, float, double}");
    for name in ["BitwiseAnd", "BitwiseOr", "BitwiseXor", "LeftShift", "RightShift"] {
        bin(r, name, "x", "y", INTS);
    }
    for name in ["Igamma", "Igammac", "IgammaGradA"] {
        bin(r, name, "a", "x", if name == "IgammaGradA" { F32_F64 } else { FLOATS });
    }
    bin(r, "Polygamma", "a", "x", F32_F64);
    bin(r, "Zeta", "x", "q", F32_F64);
    r.add(
        op("NextAfter")
            .input("x1: T")
            .input("x2: T")
            .output("output: T")
            .attr("T: {double, float} = DT_FLOAT")
            .shape_fn(broadcast)
            .build(),
    );
    r.add(
        op("Betainc")
            .input("a: T")
            .input("b: T")
            .input("x: T")
            .output("z: T")
            .attr(&format!("T: {F32_F64}"))
            .shape_fn(betainc_shape)
            .build(),
    );
    r.add(
        op("ApproximateEqual")
            .input("x: T")
            .input("y: T")
            .output("z: bool")
            .attr(&format!("T: {APPROX}"))
            .attr("tolerance: float = 1e-05")
            .shape_fn(same_shape)
            .build(),
    );
}

two_input_builders! { x, y, " (NumPy broadcasting).":
    xlogy => "Xlogy": "x * ln y, or 0 where x is 0",
    xlog1py => "Xlog1py": "x * ln(1 + y), or 0 where x is 0",
    xdivy => "Xdivy": "x / y, or 0 where x is 0",
    mul_no_nan => "MulNoNan": "x * y, or 0 where y is 0",
    truncate_div => "TruncateDiv": "x / y rounded toward zero",
    truncate_mod => "TruncateMod": "the remainder of x / y with the sign of x",
    mod_ => "Mod": "the remainder of x / y with the sign of x (C fmod)",
    bitwise_and => "BitwiseAnd": "x & y",
    bitwise_or => "BitwiseOr": "x | y",
    bitwise_xor => "BitwiseXor": "x ^ y",
    left_shift => "LeftShift": "x << y (the shift clamped to the type's width)",
    right_shift => "RightShift": "x >> y (arithmetic for signed types; the shift clamped)",
    next_after => "NextAfter": "the next representable value after x toward y",
}

two_input_builders! { a, x, " (NumPy broadcasting).":
    igamma => "Igamma": "the regularized lower incomplete gamma function P(a, x)",
    igammac => "Igammac": "the regularized upper incomplete gamma function Q(a, x)",
    igamma_grad_a => "IgammaGradA": "∂P(a, x)/∂a",
    polygamma => "Polygamma": "ψ⁽ᵃ⁾(x), the a-th derivative of the digamma function",
}

/// `Atan2`: the angle of the point `(x, y)`, in `[-π, π]` (NumPy broadcasting).
pub fn atan2(s: &Scope, y: Output, x: Output) -> Output {
    s.op("Atan2").input(y).input(x).build().output(0)
}

/// `Zeta`: the Hurwitz zeta function `Σₖ (k + q)^-x` (NumPy broadcasting).
pub fn zeta(s: &Scope, x: Output, q: Output) -> Output {
    s.op("Zeta").input(x).input(q).build().output(0)
}

/// `Betainc`: the regularized incomplete beta function `I_x(a, b)`; operands are scalars or
/// of one shape.
pub fn betainc(s: &Scope, a: Output, b: Output, x: Output) -> Output {
    s.op("Betainc").input(a).input(b).input(x).build().output(0)
}

/// `ApproximateEqual`: `|x - y| < tolerance`, for operands of one shape.
pub fn approximate_equal(s: &Scope, x: Output, y: Output, tolerance: f32) -> Output {
    s.op("ApproximateEqual").input(x).input(y).attr("tolerance", attr::float(tolerance)).build().output(0)
}
