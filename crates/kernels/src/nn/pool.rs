//! Pooling attrs and geometry shared by `MaxPool`/`AvgPool` and their gradients (NHWC;
//! windows clipped to the input, so SAME padding is ignored rather than zero).

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};
use rayon::prelude::*;

use super::common::{
    dims_str, gradient_dims, padding_attr, require_nhwc, shape_values, spatial_attr, unsupported_type, Padding, Window,
    PAR_MIN,
};
use crate::OpContext;

/// Parsed `ksize`, `strides`, `padding`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PoolAttrs {
    /// (rows, cols) window.
    pub ksize: (usize, usize),
    /// (rows, cols) strides.
    pub strides: (usize, usize),
    /// SAME or VALID.
    pub padding: Padding,
}

/// Geometry of one pooling: batch, depth and the two windows.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PoolGeom {
    /// Batch.
    pub n: usize,
    /// Depth (channels).
    pub c: usize,
    /// Vertical window.
    pub y: Window,
    /// Horizontal window.
    pub x: Window,
}

impl PoolGeom {
    /// Output dims `[n, oh, ow, c]`.
    pub fn out_dims(&self) -> Vec<usize> {
        vec![self.n, self.y.output, self.x.output, self.c]
    }

    /// Elements of one input image.
    pub fn image_len(&self) -> usize {
        self.y.input * self.x.input * self.c
    }

    /// Elements of one output image.
    pub fn out_image_len(&self) -> usize {
        self.y.output * self.x.output * self.c
    }
}

impl PoolAttrs {
    /// Parses the attrs; `data_format` must be NHWC.
    pub fn parse(node: &NodeDef) -> Result<PoolAttrs, Status> {
        require_nhwc(node, false)?;
        let ksize = spatial_attr(node, "ksize")?;
        let strides = spatial_attr(node, "strides")?;
        let padding = padding_attr(node)?;
        if node.has_attr("explicit_paddings") && !node.attr_list_int("explicit_paddings")?.is_empty() {
            return Err(
                node.node_error("explicit_paddings attribute must be empty if the padding attribute is not EXPLICIT")
            );
        }
        Ok(PoolAttrs { ksize, strides, padding })
    }

    /// Whether every input element lies in at most one window (strides ≥ window).
    pub fn disjoint(&self) -> bool {
        self.strides.0 >= self.ksize.0 && self.strides.1 >= self.ksize.1
    }

    /// The geometry for input dims (must be 4-D).
    pub fn geom(&self, ctx: &OpContext, input: &[usize]) -> Result<PoolGeom, Status> {
        if input.len() != 4 {
            return Err(ctx.error(format!("input must be 4-dimensional, got {}", dims_str(input))));
        }
        let win = |i, k, s| Window::new(i, k, s, self.padding).map_err(|e| ctx.error(e));
        Ok(PoolGeom {
            n: input[0],
            c: input[3],
            y: win(input[1], self.ksize.0, self.strides.0)?,
            x: win(input[2], self.ksize.1, self.strides.1)?,
        })
    }
}

/// A pooling kernel: the window attrs and the element type. `K` names the op; each op's
/// file implements `run` and `OpKernel` for its `Pool<K>`.
pub(crate) struct Pool<K> {
    pub(crate) attrs: PoolAttrs,
    pub(crate) dtype: DataType,
    op: std::marker::PhantomData<K>,
}

/// Builds the pooling kernel `Pool<K>` from its node (int32/int64 accepted where `ints`).
pub(crate) fn pool_factory<K: 'static>(node: &NodeDef, ints: bool) -> Result<Box<dyn crate::OpKernel>, Status>
where
    Pool<K>: crate::OpKernel,
{
    let dtype = pool_type(node, ints)?;
    Ok(Box::new(Pool::<K> { attrs: PoolAttrs::parse(node)?, dtype, op: std::marker::PhantomData }))
}

/// The float dtype attr `T` of pooling ops (ints are accepted where `ints`).
pub(crate) fn pool_type(node: &NodeDef, ints: bool) -> Result<DataType, Status> {
    let dtype = node.attr_type("T")?;
    let ok = matches!(dtype, DataType::Float | DataType::Double)
        || (ints && matches!(dtype, DataType::Int32 | DataType::Int64));
    if !ok {
        return Err(unsupported_type(node, dtype));
    }
    Ok(dtype)
}

/// Runs `f(index, chunk)` over consecutive `unit`-sized chunks of `out`, in parallel when
/// `work` (an element-operation estimate) is large; `f` is compiled for the process's
/// instruction-set path ([`crate::isa::vectorized`]).
pub(crate) fn par_units<T: Send>(out: &mut [T], unit: usize, work: usize, f: impl Fn(usize, &mut [T]) + Sync + Send) {
    if unit == 0 || out.is_empty() {
        return;
    }
    if work >= PAR_MIN && rayon::current_num_threads() > 1 {
        out.par_chunks_mut(unit).enumerate().for_each(|(i, c)| crate::isa::vectorized(|| f(i, c)));
    } else {
        crate::isa::vectorized(|| out.chunks_mut(unit).enumerate().for_each(|(i, c)| f(i, c)));
    }
}

/// Reads a 4-element int32 shape input (`orig_input_shape`).
pub(crate) fn shape_input(ctx: &OpContext, t: &Tensor, what: &str) -> Result<Vec<usize>, Status> {
    let v = shape_values(ctx, t, what, "int32")?;
    if t.rank() != 1 || v.len() != 4 {
        return Err(ctx.error(format!("{what} must be 1-dimensional and 4 elements, got shape {}", t.shape())));
    }
    gradient_dims(ctx, &v, what)
}

/// Checks that a gradient has the pooled output's shape.
pub(crate) fn check_grad(ctx: &OpContext, g: &PoolGeom, grad: &[usize]) -> Result<(), Status> {
    let want = g.out_dims();
    if grad != want.as_slice() {
        return Err(ctx.error(format!("Expected grad shape to be {}, but got {}", dims_str(&want), dims_str(grad))));
    }
    Ok(())
}
