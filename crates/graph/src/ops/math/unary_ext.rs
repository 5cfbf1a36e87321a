//! More elementwise unary ops (TensorFlow's definitions): trigonometric and hyperbolic
//! functions, `Expm1`, the error and gamma families (`Erf`, `Erfc`, `Erfinv`, `Ndtri`,
//! `Lgamma`, `Digamma`), the modified Bessel functions `BesselI0`/`I0e`/`I1`/`I1e`, `Rint`, the `IsNan`/`IsInf`/`IsFinite` tests, bitwise `Invert` and
//! `L2Loss`.

use ferroflow_core::Status;

use super::unary::unary_def;
use crate::op_def::op;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{Dims, ShapeCtx};

const FLOATS: &str = "{bfloat16, half, float, double}";
const FLOATS_COMPLEX: &str = "{bfloat16, half, float, double, complex64, complex128}";
const INTS: &str = "{int8, int16, int32, int64, uint8, uint16, uint32, uint64}";

fn scalar_shape(_: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![Some(vec![])])
}

pub(crate) fn register(r: &mut OpRegistry) {
    let unary = |r: &mut OpRegistry, name: &str, types: &str, out: &str| r.add(unary_def(name, types, out));
    for name in ["Expm1", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh"] {
        unary(r, name, FLOATS_COMPLEX, "T");
    }
    for name in [
        "Erf",
        "Erfc",
        "Erfinv",
        "Ndtri",
        "Lgamma",
        "Digamma",
        "Rint",
        "BesselI0",
        "BesselI0e",
        "BesselI1",
        "BesselI1e",
        "BesselJ0",
        "BesselJ1",
        "BesselY0",
        "BesselY1",
        "BesselK0",
        "BesselK0e",
        "BesselK1",
        "BesselK1e",
        "Dawsn",
        "Expint",
        "FresnelCos",
        "FresnelSin",
        "Spence",
    ] {
        unary(r, name, FLOATS, "T");
    }
    for name in ["IsNan", "IsInf", "IsFinite"] {
        unary(r, name, FLOATS, "bool");
    }
    unary(r, "Invert", INTS, "T");
    r.add(
        op("L2Loss")
            .input("t: T")
            .output("output: T")
            .attr("T: {half, bfloat16, float, double}")
            .shape_fn(scalar_shape)
            .build(),
    );
}

unary_builders! {
    expm1 => "Expm1": "eˣ - 1",
    sin => "Sin": "sin x",
    cos => "Cos": "cos x",
    tan => "Tan": "tan x",
    asin => "Asin": "arcsin x",
    acos => "Acos": "arccos x",
    atan => "Atan": "arctan x",
    sinh => "Sinh": "sinh x",
    cosh => "Cosh": "cosh x",
    asinh => "Asinh": "arsinh x",
    acosh => "Acosh": "arcosh x",
    atanh => "Atanh": "artanh x",
    erf => "Erf": "the error function",
    erfc => "Erfc": "1 - erf x",
    erfinv => "Erfinv": "the inverse error function",
    ndtri => "Ndtri": "the inverse of the standard normal CDF",
    lgamma => "Lgamma": "ln |Γ(x)|",
    digamma => "Digamma": "ψ(x) = Γ'(x) / Γ(x)",
    bessel_i0 => "BesselI0": "the modified Bessel function I0(x)",
    bessel_i0e => "BesselI0e": "e^(-|x|)·I0(x)",
    bessel_i1 => "BesselI1": "the modified Bessel function I1(x)",
    bessel_i1e => "BesselI1e": "e^(-|x|)·I1(x)",
    bessel_j0 => "BesselJ0": "the Bessel function J0(x)",
    bessel_j1 => "BesselJ1": "the Bessel function J1(x)",
    bessel_y0 => "BesselY0": "the Bessel function Y0(x)",
    bessel_y1 => "BesselY1": "the Bessel function Y1(x)",
    bessel_k0 => "BesselK0": "the modified Bessel function K0(x)",
    bessel_k0e => "BesselK0e": "eˣ·K0(x)",
    bessel_k1 => "BesselK1": "the modified Bessel function K1(x)",
    bessel_k1e => "BesselK1e": "eˣ·K1(x)",
    dawsn => "Dawsn": "Dawson's integral",
    expint => "Expint": "the exponential integral Ei(x)",
    fresnel_cos => "FresnelCos": "the Fresnel cosine integral",
    fresnel_sin => "FresnelSin": "the Fresnel sine integral",
    spence => "Spence": "Spence's function ∫₁ˣ ln t / (1 - t) dt",
    rint => "Rint": "x rounded to the nearest integer, half to even",
    is_nan => "IsNan": "whether x is NaN",
    is_inf => "IsInf": "whether x is ±∞",
    is_finite => "IsFinite": "whether x is finite",
    invert => "Invert": "bitwise NOT",
}

/// `L2Loss`: `sum(t²) / 2`, a scalar.
pub fn l2_loss(s: &Scope, t: Output) -> Output {
    s.op("L2Loss").input(t).build().output(0)
}
