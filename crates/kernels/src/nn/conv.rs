//! `Conv2D` (NHWC input, HWIO filter) as blocked im2col + gemm: the output rows are split
//! into blocks whose patch matrix fits in L2; each block is one single-threaded gemm, and
//! blocks run in parallel on the rayon pool. A 1×1 stride-1 convolution is one gemm.

use crate::dispatch::dispatch;
use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};
use rayon::prelude::*;

use super::common::type_attr;
use super::common::{
    check_dtype, dims_str, padding_attr, require_nhwc, require_unit_dilations, spatial_attr, Padding, Window,
};
use super::conv_direct::{direct_applies, DirectScalar};
use super::conv_groups;
use super::depthwise::depthwise_forward;
use super::gemm::{GemmScalar, Mat, PAR_GEMM_MIN};
use super::im2col::{im2col, ConvGeom};
use super::winograd;
use crate::{OpContext, OpKernel};

/// Target size in bytes of one block of patches (the patch block, gemm's packed filter and
/// the output block share this machine's 512 KiB per-core L2; measured flat from 96 KiB to
/// 1.5 MiB on the MNIST layers).
pub(crate) const BLOCK_BYTES: usize = 384 * 1024;

/// Attrs shared by Conv2D and its gradients.
#[derive(Clone, Copy, Debug)]
pub struct ConvAttrs {
    /// (row, col) strides.
    pub strides: (usize, usize),
    /// SAME or VALID.
    pub padding: Padding,
}

impl ConvAttrs {
    /// Parses and checks `strides`, `padding`, `explicit_paddings`, `data_format`, `dilations`.
    pub fn parse(node: &NodeDef) -> Result<ConvAttrs, Status> {
        require_nhwc(node, true)?;
        let strides = spatial_attr(node, "strides")?;
        let padding = padding_attr(node)?;
        if node.has_attr("explicit_paddings") && !node.attr_list_int("explicit_paddings")?.is_empty() {
            return Err(
                node.node_error("explicit_paddings attribute must be empty if the padding attribute is not EXPLICIT")
            );
        }
        require_unit_dilations(node)?;
        Ok(ConvAttrs { strides, padding })
    }

    /// Validates input and filter dims (`label` prefixes messages, like TensorFlow's
    /// `Conv2DBackpropInput: …`) and computes one group's geometry and the number of groups
    /// (input depth / filter depth; 1 for an ordinary convolution).
    pub fn geom(
        &self,
        node: &NodeDef,
        label: &str,
        input: &[usize],
        filter: &[usize],
    ) -> Result<(ConvGeom, usize), Status> {
        if input.len() != 4 {
            return Err(node.node_error(format!("{label}input must be 4-dimensional{}", dims_str(input))));
        }
        if filter.len() != 4 {
            return Err(node.node_error(format!("{label}filter must be 4-dimensional: {}", dims_str(filter))));
        }
        let (c, fc, oc) = (input[3], filter[2], filter[3]);
        if fc == 0 || c % fc != 0 {
            return Err(
                node.node_error(format!("{label}input depth must be evenly divisible by filter depth: {c} vs {fc}"))
            );
        }
        let groups = c / fc;
        if oc % groups != 0 {
            return Err(node.node_error(format!(
                "{label}output depth must be evenly divisible by number of groups: {oc} vs {groups}"
            )));
        }
        let win = |i: usize, k: usize, s: usize| {
            Window::new(i, k, s, self.padding).map_err(|e| node.node_error(format!("{label}{e}")))
        };
        let g = ConvGeom {
            n: input[0],
            c: fc,
            oc: oc / groups,
            y: win(input[1], filter[0], self.strides.0)?,
            x: win(input[2], filter[1], self.strides.1)?,
        };
        Ok((g, groups))
    }
}

/// `out[rows × oc] = patches(input) · filter[K × oc]`.
pub(crate) fn conv2d_forward<T: GemmScalar>(g: &ConvGeom, input: &[T], filter: &[T], out: &mut [T]) {
    let (m, k, oc) = (g.rows(), g.k(), g.oc);
    if m == 0 || oc == 0 {
        return;
    }
    if k == 0 {
        out.fill(T::default());
        return;
    }
    let fm = Mat::row_major(filter, oc, false);
    if g.is_pointwise() {
        T::gemm(m, oc, k, Mat::row_major(input, k, false), fm, out, oc, false, true);
        return;
    }
    let threads = rayon::current_num_threads();
    let parallel = threads > 1 && m * k * oc >= PAR_GEMM_MIN;
    let mut rb = g.block_rows(std::mem::size_of::<T>(), BLOCK_BYTES);
    if parallel {
        rb = rb.min(m.div_ceil(threads));
    }
    let rb = rb.min(m);
    let block = |buf: &mut Vec<T>, (bi, chunk): (usize, &mut [T])| {
        let rows = chunk.len() / oc;
        im2col(g, input, bi * rb, rows, buf);
        T::gemm(rows, oc, k, Mat::row_major(&buf[..rows * k], k, false), fm, chunk, oc, false, false);
    };
    let init = || vec![T::default(); rb * k];
    if parallel {
        out.par_chunks_mut(rb * oc).enumerate().for_each_init(init, block);
    } else {
        let mut buf = init();
        out.chunks_mut(rb * oc).enumerate().for_each(|x| block(&mut buf, x));
    }
}

struct Conv2D {
    attrs: ConvAttrs,
    dtype: DataType,
}

pub(crate) fn conv2d_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let dtype = type_attr(node, &[DataType::Float, DataType::Double, DataType::Int32])?;
    Ok(Box::new(Conv2D { attrs: ConvAttrs::parse(node)?, dtype }))
}

/// Element types of Conv2D: floats may take the direct path for few input channels.
pub(crate) trait ConvScalar: GemmScalar {
    fn conv(g: &ConvGeom, x: &[Self], f: &[Self], out: &mut [Self]) {
        conv2d_forward(g, x, f, out)
    }

    /// A grouped convolution with one input channel per group by the depthwise kernel
    /// (floats); false when it does not apply.
    fn depthwise(_g: &ConvGeom, _groups: usize, _x: &[Self], _f: &[Self], _out: &mut [Self]) -> bool {
        false
    }
}

/// The depthwise path of [`ConvScalar::depthwise`] for float types.
fn depthwise_float<T: super::depthwise_simd::DwScalar>(
    g: &ConvGeom,
    groups: usize,
    x: &[T],
    f: &[T],
    out: &mut [T],
) -> bool {
    match conv_groups::as_depthwise(g, groups) {
        Some(dw) => {
            depthwise_forward(&dw, x, f, out);
            true
        }
        None => false,
    }
}

impl ConvScalar for i32 {}

/// A float convolution by the direct kernel (few input channels) or im2col + gemm.
pub(crate) fn direct_or_gemm<T: DirectScalar + GemmScalar>(g: &ConvGeom, x: &[T], f: &[T], out: &mut [T]) {
    if direct_applies(g) {
        T::conv2d_direct(g, x, f, out)
    } else {
        conv2d_forward(g, x, f, out)
    }
}

impl ConvScalar for f64 {
    fn depthwise(g: &ConvGeom, groups: usize, x: &[f64], f: &[f64], out: &mut [f64]) -> bool {
        depthwise_float(g, groups, x, f, out)
    }

    fn conv(g: &ConvGeom, x: &[f64], f: &[f64], out: &mut [f64]) {
        direct_or_gemm(g, x, f, out)
    }
}

impl ConvScalar for f32 {
    fn depthwise(g: &ConvGeom, groups: usize, x: &[f32], f: &[f32], out: &mut [f32]) -> bool {
        depthwise_float(g, groups, x, f, out)
    }

    fn conv(g: &ConvGeom, x: &[f32], f: &[f32], out: &mut [f32]) {
        if !winograd::forward(g, x, f, out) {
            direct_or_gemm(g, x, f, out)
        }
    }
}

impl Conv2D {
    fn run<T: ConvScalar>(&self, ctx: &mut OpContext, x: &Tensor, f: &Tensor) -> Result<(), Status> {
        let (g, groups) = self.attrs.geom(ctx.node(), "", x.dims(), f.dims())?;
        let oc = g.oc * groups;
        let dims = vec![g.n, g.y.output, g.x.output, oc];
        ferroflow_core::check_tensor_alloc(&dims, self.dtype).map_err(|e| ctx.error_with(e))?;
        let (x, f) = (x.as_slice::<T>()?, f.as_slice::<T>()?);
        let mut out = ferroflow_core::alloc::zeroed::<T>(&dims)?;
        if groups == 1 {
            T::conv(&g, x, f, &mut out);
        } else if !T::depthwise(&g, groups, x, f, &mut out) {
            out = conv_groups::forward(&g, groups, x, f, T::conv)?;
        }
        ctx.set_output(0, Tensor::new(dims, out)?)
    }
}

impl OpKernel for Conv2D {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let (x, f) = (ctx.input(0)?, ctx.input(1)?);
        check_dtype(ctx.node(), "input", x.dtype(), self.dtype)?;
        check_dtype(ctx.node(), "filter", f.dtype(), self.dtype)?;
        dispatch!(self.dtype, ctx, [f32, f64, i32], |T| self.run::<T>(ctx, &x, &f))
    }
}
