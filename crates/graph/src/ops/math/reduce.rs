//! Reductions (Sum, Mean, Max, Min, Prod) and ArgMax/ArgMin.

use ferroflow_core::{attr, DataType, NodeAttrs, Status};

use super::shapes::const_ints;
use crate::op_def::op;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{Dims, ShapeCtx};

pub(crate) fn reduction_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let keep = c.node.attr_bool("keep_dims")?;
    let input = c.input(0);
    if let Some(idx) = c.input(1) {
        if idx.len() > 1 {
            return Err(c.error(format!("reduction_indices must be a scalar or vector, got rank {}", idx.len())));
        }
        if idx.first() == Some(&0) {
            return Ok(vec![input]);
        }
    }
    let Some(dims) = input else { return Ok(vec![None]) };
    let rank = dims.len() as i64;
    let Some(axes) = c.const_input(1).and_then(const_ints) else {
        return Ok(vec![if keep { Some(vec![-1; dims.len()]) } else { None }]);
    };
    let mut mask = vec![false; dims.len()];
    for a in axes {
        if a < -rank || a >= rank {
            return Err(c.error(format!("Invalid reduction dimension {a} for input with {rank} dimensions")));
        }
        mask[if a < 0 { a + rank } else { a } as usize] = true;
    }
    let out = dims
        .iter()
        .zip(&mask)
        .filter_map(|(&d, &m)| match (m, keep) {
            (false, _) => Some(d),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect();
    Ok(vec![Some(out)])
}

fn arg_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    if let Some(d) = c.input(1) {
        if !d.is_empty() {
            return Err(c.error(format!("dimension must be a scalar, got rank {}", d.len())));
        }
    }
    let Some(dims) = c.input(0) else { return Ok(vec![None]) };
    if dims.len() <= 1 {
        return Ok(vec![Some(vec![])]);
    }
    let rank = dims.len() as i64;
    let Some(d) = c.const_input(1).and_then(const_ints).and_then(|v| v.first().copied()) else {
        return Ok(vec![Some(vec![-1; dims.len() - 1])]);
    };
    if d < -rank || d >= rank {
        return Err(c.error(format!(
            "Dimension ({d}) must be in the range [{}, {rank}), where {rank} is the number of dimensions in the input",
            -rank
        )));
    }
    let axis = if d < 0 { d + rank } else { d } as usize;
    Ok(vec![Some(dims.iter().enumerate().filter(|&(i, _)| i != axis).map(|(_, &v)| v).collect())])
}

const NUMBER_AND_QUANTIZED: &str = "T: {float, double, int32, uint8, int16, int8, complex64, int64, qint8, quint8, \
     qint32, bfloat16, qint16, quint16, uint16, complex128, half, uint32, uint64}";
const REAL_AND_QUANTIZED: &str =
    "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, \
     uint64, qint8, quint8, qint32, qint16, quint16}";

pub(crate) fn register(r: &mut OpRegistry) {
    for name in ["Sum", "Mean", "Max", "Min", "Prod", "EuclideanNorm"] {
        r.add(
            op(name)
                .input("input: T")
                .input("reduction_indices: Tidx")
                .output("output: T")
                .attr("keep_dims: bool = false")
                // TensorFlow's OpDef types (its kernels cover fewer: no quantized ones).
                .attr(if matches!(name, "Max" | "Min") { REAL_AND_QUANTIZED } else { NUMBER_AND_QUANTIZED })
                .attr("Tidx: {int32, int64} = DT_INT32")
                .shape_fn(reduction_shape)
                .build(),
        );
    }
    for name in ["All", "Any"] {
        r.add(
            op(name)
                .input("input: bool")
                .input("reduction_indices: Tidx")
                .output("output: bool")
                .attr("keep_dims: bool = false")
                .attr("Tidx: {int32, int64} = DT_INT32")
                .shape_fn(reduction_shape)
                .build(),
        );
    }
    for name in ["ArgMax", "ArgMin"] {
        r.add(
            op(name)
                .input("input: T")
                .input("dimension: Tidx")
                .output("output: output_type")
                .attr("T: {float, double, uint8, int32, int64, bool}")
                .attr("Tidx: {int32, int64} = DT_INT32")
                .attr("output_type: {int32, int64} = DT_INT64")
                .shape_fn(arg_shape)
                .build(),
        );
    }
}

macro_rules! reduce_builders {
    ($($f:ident => $op:literal),* $(,)?) => {$(
        #[doc = concat!("`", $op, "` of `x` over `axes` (scalar or vector, negative counts from the end; empty = none), keeping reduced dimensions as 1 when `keep_dims`.")]
        pub fn $f(s: &Scope, x: Output, axes: Output, keep_dims: bool) -> Output {
            s.op($op).input(x).input(axes).attr("keep_dims", attr::bool(keep_dims)).build().output(0)
        }
    )*};
}

reduce_builders! { sum => "Sum", mean => "Mean", max => "Max", min => "Min", prod => "Prod", euclidean_norm => "EuclideanNorm" }

/// `ArgMax`: index of the largest value along `dim` (a scalar), as `output_type`.
pub fn arg_max(s: &Scope, x: Output, dim: Output, output_type: DataType) -> Output {
    s.op("ArgMax").input(x).input(dim).attr("output_type", attr::ty(output_type)).build().output(0)
}

/// `ArgMin`: index of the smallest value along `dim` (a scalar), as `output_type`.
pub fn arg_min(s: &Scope, x: Output, dim: Output, output_type: DataType) -> Output {
    s.op("ArgMin").input(x).input(dim).attr("output_type", attr::ty(output_type)).build().output(0)
}
