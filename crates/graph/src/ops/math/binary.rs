//! Broadcasting binary ops: arithmetic, comparisons, logic.

use ferroflow_core::{NodeAttrs, Status};

use crate::op_def::{op, OpDef};
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{broadcast, broadcast_dims, unchanged, Dims, ShapeCtx};

const NUMERIC: &str = "{float, double, uint8, int32, int64}";
/// TensorFlow's OpDef types of the arithmetic ops (every number; which ones have a kernel
/// is the kernel's business, as in TensorFlow).
const NUMBER: &str =
    "{bfloat16, half, float, double, uint8, int8, uint16, int16, int32, uint32, uint64, int64, complex64, complex128}";
/// Add (v1) has no uint16/uint32/uint64 (its string support is not implemented).
const ADD_V1: &str = "{bfloat16, half, float, double, uint8, int8, int16, int32, int64, complex64, complex128, string}";
/// Real numbers: Maximum, Minimum and the ordered comparisons.
const REAL: &str = "{bfloat16, half, float, double, int8, uint8, int16, uint16, int32, uint32, int64, uint64}";

fn binop(name: &str, types: &str, out: &str) -> OpDef {
    op(name)
        .input("x: T")
        .input("y: T")
        .output(&format!("z: {out}"))
        .attr(&format!("T: {types}"))
        .shape_fn(broadcast)
        .build()
}

/// Equal/NotEqual: with `incompatible_shape_error = false` non-broadcastable shapes give a
/// scalar at run time, so the static shape is unknown.
fn equal_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    match broadcast_dims(c, &c.input(0), &c.input(1)) {
        Ok(d) => Ok(vec![d]),
        Err(e) => {
            if c.node.attr_bool("incompatible_shape_error").unwrap_or(true) {
                Err(e)
            } else {
                Ok(vec![None])
            }
        }
    }
}

/// The elementwise comparison and logic ops (boolean results): not differentiable, and
/// free of side effects.
pub(crate) const COMPARISON_AND_LOGIC_OPS: [&str; 9] =
    ["Greater", "GreaterEqual", "Less", "LessEqual", "Equal", "NotEqual", "LogicalAnd", "LogicalOr", "LogicalNot"];

pub(crate) fn register(r: &mut OpRegistry) {
    r.add(binop("Add", ADD_V1, "T"));
    for name in ["AddV2", "Sub", "Mul", "Div", "RealDiv"] {
        r.add(binop(name, NUMBER, "T"));
    }
    for name in ["Maximum", "Minimum"] {
        r.add(binop(name, REAL, "T"));
    }
    for name in ["FloorDiv", "FloorMod"] {
        r.add(binop(name, NUMERIC, "T"));
    }
    r.add(binop("Pow", "{float, double, int32, int64}", "T"));
    r.add(binop("SquaredDifference", "{float, double, int32, int64}", "T"));
    r.add(binop("DivNoNan", "{float, double, complex64, complex128}", "T"));
    for name in ["Greater", "GreaterEqual", "Less", "LessEqual"] {
        r.add(binop(name, REAL, "bool"));
    }
    for name in ["Equal", "NotEqual"] {
        r.add(
            op(name)
                .input("x: T")
                .input("y: T")
                .output("z: bool")
                .attr("T: type")
                .attr("incompatible_shape_error: bool = true")
                .shape_fn(equal_shape)
                .build(),
        );
    }
    for name in ["LogicalAnd", "LogicalOr"] {
        r.add(op(name).input("x: bool").input("y: bool").output("z: bool").shape_fn(broadcast).build());
    }
    r.add(op("LogicalNot").input("x: bool").output("y: bool").shape_fn(unchanged).build());
}

two_input_builders! { x, y, " (NumPy broadcasting).":
    add => "Add": "x + y",
    add_v2 => "AddV2": "x + y",
    sub => "Sub": "x - y",
    mul => "Mul": "x * y",
    real_div => "RealDiv": "x / y for floats",
    div => "Div": "x / y (integers truncate toward zero)",
    maximum => "Maximum": "max(x, y), NaN propagating",
    minimum => "Minimum": "min(x, y), NaN propagating",
    pow => "Pow": "x to the power y",
    floor_div => "FloorDiv": "floor(x / y)",
    floor_mod => "FloorMod": "x - floor(x / y) * y, with the sign of y",
    squared_difference => "SquaredDifference": "(x - y)^2",
    div_no_nan => "DivNoNan": "x / y, or 0 where y is 0",
    greater => "Greater": "x > y",
    greater_equal => "GreaterEqual": "x >= y",
    less => "Less": "x < y",
    less_equal => "LessEqual": "x <= y",
    equal => "Equal": "x == y",
    not_equal => "NotEqual": "x != y",
    logical_and => "LogicalAnd": "x && y",
    logical_or => "LogicalOr": "x || y",
}

/// `LogicalNot`: `!x`.
pub fn logical_not(s: &Scope, x: Output) -> Output {
    s.op("LogicalNot").input(x).build().output(0)
}
