//! Shape-function helpers for windowed ops (convolution, pooling): attrs and TensorFlow's
//! output-size arithmetic on partially known dims.

use ferroflow_core::{NodeAttrs, Status};

use crate::shape_fn::{Dims, ShapeCtx};

/// Window attrs of a node: (rows, cols) strides or sizes from a 4-element NHWC list.
pub(super) fn spatial(c: &ShapeCtx, name: &str) -> Result<(i64, i64), Status> {
    let v = c.node.attr_list_int(name)?;
    if v.len() != 4 {
        return Err(c.error(format!("{name} must specify 4 dimensions, got {v:?}")));
    }
    if v.iter().any(|&x| x <= 0) {
        return Err(c.error(format!("{name} entries must be > 0, got {v:?}")));
    }
    Ok((v[1], v[2]))
}

/// The padding attr: `Some(true)` for SAME, `Some(false)` for VALID, `None` for EXPLICIT
/// (shape left unknown; the kernel reports it).
pub(super) fn padding(c: &ShapeCtx) -> Result<Option<bool>, Status> {
    match c.node.attr_string("padding")?.as_str() {
        "SAME" => Ok(Some(true)),
        "VALID" => Ok(Some(false)),
        "EXPLICIT" => Ok(None),
        p => Err(c.error(format!("padding must be SAME, VALID or EXPLICIT, got '{p}'"))),
    }
}

/// Whether the node's `data_format` is NHWC (the default when absent).
pub(super) fn is_nhwc(c: &ShapeCtx) -> Result<bool, Status> {
    Ok(!c.node.has_attr("data_format") || c.node.attr_string("data_format")? == "NHWC")
}

/// Output size of one windowed dimension (-1 when the input or window size is unknown).
pub(super) fn out_size(c: &ShapeCtx, input: i64, k: i64, stride: i64, same: bool) -> Result<i64, Status> {
    if input < 0 || k < 0 {
        return Ok(-1);
    }
    let out = if same { (input + stride - 1) / stride } else { (input - k + stride) / stride };
    if out < 0 {
        return Err(c.error(format!(
            "Computed output size would be negative: {out} [input_size: {input}, effective_filter_size: {k}, stride: {stride}]"
        )));
    }
    Ok(out)
}

/// Checks a known shape has rank `r`; returns the dims or an all-unknown vector.
pub(super) fn with_rank(c: &ShapeCtx, d: &Dims, r: usize, what: &str) -> Result<Vec<i64>, Status> {
    match d {
        Some(v) if v.len() != r => Err(c.error(format!("{what} must be {r}-dimensional, got shape {v:?}"))),
        Some(v) => Ok(v.clone()),
        None => Ok(vec![-1; r]),
    }
}

/// Known dims from a constant 1-D shape input (`input_sizes`, `filter_sizes`, …).
pub(super) fn const_shape(c: &ShapeCtx, i: usize) -> Option<Vec<i64>> {
    let t = c.const_input(i)?;
    if t.rank() != 1 {
        return None;
    }
    t.to_f64_vec().ok().map(|v| v.into_iter().map(|x| x as i64).collect())
}
