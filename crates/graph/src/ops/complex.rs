//! Complex numbers from and to their parts (TensorFlow's definitions and builders):
//! `Complex` (real and imaginary parts, broadcast), `Real`, `Imag`, `ComplexAbs`, `Angle`
//! and `Conj`.

use ferroflow_core::{attr, DataType};

use crate::op_def::op;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{broadcast, unchanged};

pub(crate) fn register(r: &mut OpRegistry) {
    r.add(
        op("Complex")
            .input("real: T")
            .input("imag: T")
            .output("out: Tout")
            .attr("T: {float, double} = DT_FLOAT")
            .attr("Tout: {complex64, complex128} = DT_COMPLEX64")
            .shape_fn(broadcast)
            .build(),
    );
    for name in ["Real", "Imag", "ComplexAbs", "Angle"] {
        let input = if name == "ComplexAbs" { "x: T" } else { "input: T" };
        r.add(
            op(name)
                .input(input)
                .output(if name == "ComplexAbs" { "y: Tout" } else { "output: Tout" })
                .attr("T: {complex64, complex128} = DT_COMPLEX64")
                .attr("Tout: {float, double} = DT_FLOAT")
                .shape_fn(unchanged)
                .build(),
        );
    }
    r.add(
        op("Conj")
            .input("input: T")
            .output("output: T")
            .attr("T: {complex64, complex128, variant} = DT_COMPLEX64")
            .shape_fn(unchanged)
            .build(),
    );
}

/// The complex type whose parts are of real type `t` (`complex128` for `double`).
pub fn complex_of(t: DataType) -> DataType {
    if t == DataType::Double {
        DataType::Complex128
    } else {
        DataType::Complex64
    }
}

/// The real type of the parts of complex type `t` (`double` for `complex128`).
pub fn real_of(t: DataType) -> DataType {
    if t == DataType::Complex128 {
        DataType::Double
    } else {
        DataType::Float
    }
}

/// `Complex`: `real + imag·i`, element by element (broadcast).
pub fn complex(s: &Scope, real: Output, imag: Output) -> Output {
    let t = complex_of(real.dtype);
    s.op("Complex").input(real).input(imag).attr("Tout", attr::ty(t)).build().output(0)
}

/// A complex → real op (`Real`, `Imag`, `ComplexAbs`, `Angle`) of `x`.
pub fn complex_part(s: &Scope, op_type: &str, x: Output) -> Output {
    let t = real_of(x.dtype);
    s.op(op_type).input(x).attr("Tout", attr::ty(t)).build().output(0)
}

/// `Conj`: the complex conjugate of `x`.
pub fn conj(s: &Scope, x: Output) -> Output {
    s.op("Conj").input(x).build().output(0)
}
