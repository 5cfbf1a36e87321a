//! AddN, Select, SelectV2, Cast, BroadcastGradientArgs.

use ferroflow_core::{attr, DataType, Status};

use super::shapes::{const_ints, merge};
use crate::op_def::op;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{broadcast_dims, unchanged, Dims, ShapeCtx};

const SELECT_TYPES: &str = "{float, double, uint8, int32, int64, bool, string}";

fn add_n_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let mut out = c.input(0);
    for i in 1..c.inputs.len() {
        out = merge(c, &out, &c.input(i))?;
    }
    Ok(vec![out])
}

/// TensorFlow 1 Select: `t` and `e` match; the condition is a scalar, a vector over the
/// first dimension, or the same shape.
fn select_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let out = merge(c, &c.input(1), &c.input(2))?;
    match (c.input(0), &out) {
        (Some(cond), Some(t)) if cond.is_empty() || (cond.len() == 1 && t.len() != 1) => {
            if cond.len() == 1 {
                if t.is_empty() {
                    return Err(c.error("'then' must be at least a vector, but saw a scalar"));
                }
                let mut t2 = t.clone();
                t2[0] = merge(c, &Some(vec![cond[0]]), &Some(vec![t[0]]))?.map_or(-1, |d| d[0]);
                return Ok(vec![Some(t2)]);
            }
            Ok(vec![out])
        }
        (cond @ Some(_), _) => Ok(vec![merge(c, &cond, &out)?]),
        (None, _) => Ok(vec![out]),
    }
}

fn select_v2_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let te = broadcast_dims(c, &c.input(1), &c.input(2))?;
    Ok(vec![broadcast_dims(c, &c.input(0), &te)?])
}

fn bcast_args_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    for i in 0..2 {
        if let Some(d) = c.input(i) {
            if d.len() != 1 {
                return Err(c.error(format!("input {i} must be a vector, got rank {}", d.len())));
            }
        }
    }
    if let (Some(a), Some(b)) = (c.const_input(0).and_then(const_ints), c.const_input(1).and_then(const_ints)) {
        let n = a.len().max(b.len());
        let dim = |s: &[i64], i: usize| if i + s.len() >= n { s[i + s.len() - n] } else { 1 };
        let (mut r0, mut r1) = (0, 0);
        for i in 0..n {
            let (x, y) = (dim(&a, i), dim(&b, i));
            r0 += (x == 1) as i64;
            r1 += (y == 1) as i64;
            if x != 1 && y != 1 && x != y {
                return Err(c.error(format!("Incompatible shapes: {a:?} vs. {b:?}")));
            }
        }
        return Ok(vec![Some(vec![r0]), Some(vec![r1])]);
    }
    Ok(vec![Some(vec![-1]), Some(vec![-1])])
}

pub(crate) fn register(r: &mut OpRegistry) {
    r.add(
        op("AddN")
            .input("inputs: N * T")
            .output("sum: T")
            .attr("N: int >= 1")
            .attr("T: {float, double, uint8, int32, int64, complex64, complex128, variant}")
            .shape_fn(add_n_shape)
            .build(),
    );
    r.add(
        op("Select")
            .input("condition: bool")
            .input("t: T")
            .input("e: T")
            .output("output: T")
            .attr(&format!("T: {SELECT_TYPES}"))
            .shape_fn(select_shape)
            .build(),
    );
    r.add(
        op("SelectV2")
            .input("condition: bool")
            .input("t: T")
            .input("e: T")
            .output("output: T")
            .attr(&format!("T: {SELECT_TYPES}"))
            .shape_fn(select_v2_shape)
            .build(),
    );
    r.add(
        op("CheckNumerics")
            .input("tensor: T")
            .output("output: T")
            .attr("T: {bfloat16, half, float, double}")
            .attr("message: string")
            .stateful()
            .shape_fn(unchanged)
            .build(),
    );
    r.add(
        op("Cast")
            .input("x: SrcT")
            .output("y: DstT")
            .attr("SrcT: type")
            .attr("DstT: type")
            .attr("Truncate: bool = false")
            .shape_fn(unchanged)
            .build(),
    );
    r.add(
        op("BroadcastGradientArgs")
            .input("s0: T")
            .input("s1: T")
            .output("r0: T")
            .output("r1: T")
            .attr("T: {int32, int64} = DT_INT32")
            .shape_fn(bcast_args_shape)
            .build(),
    );
}

/// `AddN`: the elementwise sum of tensors of one shape and type.
pub fn add_n(s: &Scope, xs: Vec<Output>) -> Output {
    s.op("AddN").input_list(xs).build().output(0)
}

/// `Select` (TensorFlow 1): `t` where `condition`, else `e`; a vector condition picks rows.
pub fn select(s: &Scope, condition: Output, t: Output, e: Output) -> Output {
    s.op("Select").input(condition).input(t).input(e).build().output(0)
}

/// `SelectV2`: `t` where `condition`, else `e`, all three broadcast together.
pub fn select_v2(s: &Scope, condition: Output, t: Output, e: Output) -> Output {
    s.op("SelectV2").input(condition).input(t).input(e).build().output(0)
}

/// `Cast` to `dtype`.
pub fn cast(s: &Scope, x: Output, dtype: DataType) -> Output {
    s.op("Cast").input(x).attr("DstT", attr::ty(dtype)).attr("Truncate", attr::bool(false)).build().output(0)
}

two_output_builders! {
    /// `BroadcastGradientArgs`: the axes to sum each operand's gradient over, for operand shapes
    /// `a` and `b` (int32 or int64 vectors).
    broadcast_gradient_args => "BroadcastGradientArgs"(a, b);
}
