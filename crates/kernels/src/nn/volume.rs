//! Helpers of the 3-D (NDHWC) convolution and pooling kernels: window attrs with five
//! entries, the three-window geometry, shape inputs, and moving the depth axis in front of
//! the batch so that one depth slice of every image is contiguous.

use std::borrow::Cow;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor, TensorType};

use super::common::{dims_str, gradient_dims, padding_attr, shape_values, unimplemented, Padding, Window};
use crate::OpContext;

/// Checks that `data_format` (if present) is NDHWC, the only layout of TensorFlow's CPU
/// kernels.
pub(crate) fn require_ndhwc(node: &NodeDef) -> Result<(), Status> {
    if node.has_attr("data_format") {
        let f = node.attr_string("data_format")?;
        if f != "NDHWC" {
            return Err(unimplemented(node, format!("only the NDHWC format is supported on the CPU, got {f}")));
        }
    }
    Ok(())
}

/// Reads a 5-element NDHWC window attr (`strides`, `ksize`) and returns its (planes, rows,
/// cols) part; batch and depth entries must be 1.
pub(crate) fn attr3(node: &NodeDef, name: &str) -> Result<[usize; 3], Status> {
    let v = node.attr_list_int(name)?;
    if v.len() != 5 {
        return Err(node.node_error(format!("{name} must specify 5 dimensions, got {v:?}")));
    }
    if v.iter().any(|&x| x <= 0 || x >= 1 << 31) {
        return Err(node.node_error(format!("{name} entries must be in [1, 2^31), got {v:?}")));
    }
    if v[0] != 1 || v[4] != 1 {
        return Err(unimplemented(node, format!("{name} {v:?}: {name} in the batch and depth dimensions must be 1")));
    }
    Ok([v[1] as usize, v[2] as usize, v[3] as usize])
}

/// Checks that `dilations` (if present) is all ones.
pub(crate) fn require_unit_dilations3(node: &NodeDef) -> Result<(), Status> {
    if node.has_attr("dilations") {
        let d = node.attr_list_int("dilations")?;
        if d.len() != 5 {
            return Err(node.node_error(format!("dilations must specify 5 dimensions, got {d:?}")));
        }
        if d.iter().any(|&x| x != 1) {
            return Err(unimplemented(node, format!("dilations {d:?} are not supported on the CPU (only all ones)")));
        }
    }
    Ok(())
}

/// The window attrs of a 3-D op: `strides`, `padding` and (for pooling) `ksize`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Attrs3 {
    pub strides: [usize; 3],
    pub ksize: [usize; 3],
    pub padding: Padding,
}

impl Attrs3 {
    /// Parses `strides`, `padding`, `data_format`, `dilations` and, when `pool`, `ksize`.
    pub fn parse(node: &NodeDef, pool: bool) -> Result<Attrs3, Status> {
        require_ndhwc(node)?;
        require_unit_dilations3(node)?;
        let ksize = if pool { attr3(node, "ksize")? } else { [1; 3] };
        Ok(Attrs3 { strides: attr3(node, "strides")?, ksize, padding: padding_attr(node)? })
    }

    /// The three windows of an NDHWC `input` under window sizes `k` (`label` prefixes
    /// errors).
    pub fn windows(&self, node: &NodeDef, label: &str, input: &[usize], k: [usize; 3]) -> Result<[Window; 3], Status> {
        if input.len() != 5 {
            return Err(node.node_error(format!("{label}input must be 5-dimensional{}", dims_str(input))));
        }
        let w = |i: usize| {
            Window::new(input[1 + i], k[i], self.strides[i], self.padding)
                .map_err(|e| node.node_error(format!("{label}{e}")))
        };
        Ok([w(0)?, w(1)?, w(2)?])
    }
}

/// The output dims `[n, planes, rows, cols, c]` of windows `w`, checked to be allocatable.
pub(crate) fn out_dims(
    ctx: &OpContext,
    n: usize,
    w: &[Window; 3],
    c: usize,
    dtype: DataType,
) -> Result<Vec<usize>, Status> {
    let dims = vec![n, w[0].output, w[1].output, w[2].output, c];
    ferroflow_core::check_tensor_alloc(&dims, dtype).map_err(|e| ctx.error_with(e))?;
    Ok(dims)
}

/// Reads a 5-element shape input (`input_sizes`, `filter_sizes`, `orig_input_shape`),
/// checked to be allocatable.
pub(crate) fn shape5(ctx: &OpContext, t: &Tensor, label: &str, what: &str) -> Result<Vec<usize>, Status> {
    let what = format!("{label}{what}");
    let v = shape_values(ctx, t, &what, "int32 or int64")?;
    if t.rank() != 1 || v.len() != 5 {
        return Err(ctx.error(format!("{what} must be a vector of 5 elements, got shape {}", t.shape())));
    }
    gradient_dims(ctx, &v, &what)
}

/// `[n, depth, s]` → `[depth, n, s]` (borrowed when `n` is 1).
pub fn depth_major<T: TensorType + Copy>(src: &[T], n: usize, depth: usize, s: usize) -> Result<Cow<'_, [T]>, Status> {
    if n <= 1 || depth <= 1 {
        return Ok(Cow::Borrowed(src));
    }
    let mut out = ferroflow_core::alloc::with_capacity(&[depth, n, s])?;
    for d in 0..depth {
        for b in 0..n {
            out.extend_from_slice(&src[(b * depth + d) * s..(b * depth + d + 1) * s]);
        }
    }
    Ok(Cow::Owned(out))
}

/// `[depth, n, s]` → `[n, depth, s]`, the inverse of [`depth_major`].
pub fn batch_major<T: TensorType + Copy>(src: Vec<T>, n: usize, depth: usize, s: usize) -> Result<Vec<T>, Status> {
    if n <= 1 || depth <= 1 {
        return Ok(src);
    }
    let mut out = ferroflow_core::alloc::with_capacity(&[n, depth, s])?;
    for b in 0..n {
        for d in 0..depth {
            out.extend_from_slice(&src[(d * n + b) * s..(d * n + b + 1) * s]);
        }
    }
    Ok(out)
}

/// The input plane read by output plane `o` at filter tap `k`, if inside the input.
pub fn tap(w: &Window, o: usize, k: usize) -> Option<usize> {
    (o * w.stride + k).checked_sub(w.pad).filter(|&i| i < w.input)
}
