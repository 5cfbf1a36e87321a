//! `DepthwiseConv2dNative` (NHWC input, filter [rows, cols, in_depth, multiplier]): output
//! channel `c * multiplier + m` is input channel `c` convolved with filter `[.., .., c, m]`.
//! Each output pixel accumulates whole filter rows over its window, the channels (times the
//! multiplier) as the contiguous inner loop; output rows run in parallel.
//!
//! [`DwAttrs`] and [`DwGeom`] are shared with the two backprop kernels.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Status, Tensor};
use rayon::prelude::*;

use super::common::{attrs_kernel, dims_str, float_kernel, unimplemented, Window};
use super::depthwise_simd::DwScalar;
use crate::real::Real;
use crate::OpContext;

/// Multiply-adds per rayon task (below this a layer runs on one thread).
const TASK_WORK: usize = 64 * 1024;

/// Padding of one depthwise convolution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DwPadding {
    Same,
    Valid,
    /// (top, bottom, left, right).
    Explicit([usize; 4]),
}

/// Parsed `strides`, `padding`, `explicit_paddings` (checked like TensorFlow's CPU kernels).
#[derive(Clone, Copy, Debug)]
pub(crate) struct DwAttrs {
    stride: usize,
    padding: DwPadding,
}

impl DwAttrs {
    /// Parses and checks the attrs (NHWC only, no dilation, equal row/col strides).
    pub fn parse(node: &NodeDef) -> Result<DwAttrs, Status> {
        if node.has_attr("data_format") && node.attr_string("data_format")? != "NHWC" {
            return Err(unimplemented(node, "Depthwise convolution on CPU is only supported for NHWC format"));
        }
        let s = node.attr_list_int("strides")?;
        if s.len() != 4 {
            return Err(node.node_error(format!("Sliding window strides field must specify 4 dimensions, got {s:?}")));
        }
        if s[0] != 1 || s[3] != 1 {
            return Err(node
                .node_error("Current implementation does not yet support strides in the batch and depth dimensions."));
        }
        if s[1] != s[2] {
            return Err(node.node_error(
                "Current implementation only supports equal length strides in the row and column dimensions.",
            ));
        }
        let stride = usize::try_from(s[1]).ok().filter(|&v| v > 0 && v < (1 << 31));
        let stride = stride.ok_or_else(|| node.node_error(format!("strides must be > 0, got {s:?}")))?;
        if node.has_attr("dilations") {
            let d = node.attr_list_int("dilations")?;
            if d.len() != 4 {
                return Err(node.node_error(format!("dilations must specify 4 dimensions, got {d:?}")));
            }
            if d.iter().any(|&v| v != 1) {
                let d: Vec<String> = d.iter().map(|v| v.to_string()).collect();
                return Err(unimplemented(
                    node,
                    format!("Current kernel implementation does not support dilations, received [{}]", d.join(" ")),
                ));
            }
        }
        let explicit =
            if node.has_attr("explicit_paddings") { node.attr_list_int("explicit_paddings")? } else { vec![] };
        let padding = match node.attr_string("padding")?.as_str() {
            "SAME" | "VALID" if !explicit.is_empty() => {
                return Err(node
                    .node_error("explicit_paddings attribute must be empty if the padding attribute is not EXPLICIT"))
            }
            "SAME" => DwPadding::Same,
            "VALID" => DwPadding::Valid,
            "EXPLICIT" => {
                if explicit.len() != 8 {
                    return Err(node.node_error(format!(
                        "explicit_paddings attribute must contain 8 values, but got: {}",
                        explicit.len()
                    )));
                }
                if explicit.iter().any(|&p| p < 0) {
                    return Err(node.node_error("All elements of explicit_paddings must be nonnegative"));
                }
                if explicit[0] != 0 || explicit[1] != 0 || explicit[6] != 0 || explicit[7] != 0 {
                    return Err(
                        node.node_error("Nonzero explicit padding in the batch or depth dimensions is not supported")
                    );
                }
                let p = |i: usize| usize::try_from(explicit[i]).ok().filter(|&v| v < (1 << 31));
                match (p(2), p(3), p(4), p(5)) {
                    (Some(a), Some(b), Some(c), Some(d)) => DwPadding::Explicit([a, b, c, d]),
                    _ => return Err(node.node_error(format!("explicit_paddings {explicit:?} are too large"))),
                }
            }
            other => return Err(node.node_error(format!("padding must be SAME, VALID or EXPLICIT, got '{other}'"))),
        };
        Ok(DwAttrs { stride, padding })
    }

    fn window(&self, input: usize, k: usize, before: usize, after: usize) -> Result<Window, String> {
        match self.padding {
            DwPadding::Same => Window::new(input, k, self.stride, super::common::Padding::Same),
            DwPadding::Valid => Window::new(input, k, self.stride, super::common::Padding::Valid),
            DwPadding::Explicit(_) => {
                let span = (input + before + after) as i64 - k as i64;
                if span < 0 {
                    return Err(format!(
                        "computed output size would be negative: {} [input_size: {input}, effective_filter_size: {k}, stride: {}]",
                        span / self.stride as i64 + 1,
                        self.stride
                    ));
                }
                let output = span as usize / self.stride + 1;
                Ok(Window { input, size: k, stride: self.stride, output, pad: before })
            }
        }
    }

    /// The geometry of `input` [n, rows, cols, depth] and `filter` [rows, cols, depth, mult];
    /// `label` prefixes error messages (`DepthwiseConv2DBackpropInput: `).
    pub fn geom(&self, node: &NodeDef, label: &str, input: &[usize], filter: &[usize]) -> Result<DwGeom, Status> {
        if input.len() != 4 {
            return Err(node.node_error(format!("{label}input must be 4-dimensional{}", dims_str(input))));
        }
        if filter.len() != 4 {
            return Err(node.node_error(format!("{label}filter must be 4-dimensional: {}", dims_str(filter))));
        }
        if input[3] != filter[2] {
            return Err(node.node_error(format!(
                "{label}input and filter must have the same depth: {} vs {}",
                input[3], filter[2]
            )));
        }
        let [t, b, l, r] = match self.padding {
            DwPadding::Explicit(p) => p,
            _ => [0; 4],
        };
        let err = |e: String| node.node_error(format!("{label}{e}"));
        let y = self.window(input[1], filter[0], t, b).map_err(err)?;
        let x = self.window(input[2], filter[1], l, r).map_err(err)?;
        let geom = DwGeom { n: input[0], c: input[3], m: filter[3], y, x };
        geom.out_dims()
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .ok_or_else(|| err("output too large".into()))?;
        Ok(geom)
    }
}

/// The geometry of one depthwise convolution.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DwGeom {
    /// Batch.
    pub n: usize,
    /// Input channels.
    pub c: usize,
    /// Channel multiplier.
    pub m: usize,
    /// Row window.
    pub y: Window,
    /// Column window.
    pub x: Window,
}

impl DwGeom {
    /// Output channels.
    pub fn oc(&self) -> usize {
        self.c * self.m
    }

    /// Output dims [n, out_rows, out_cols, c * m].
    pub fn out_dims(&self) -> [usize; 4] {
        [self.n, self.y.output, self.x.output, self.oc()]
    }

    /// Rows (of `unit_len` elements each) per parallel task for `work` multiply-adds a row.
    pub fn rows_per_task(&self, rows: usize, work_per_row: usize) -> usize {
        if rayon::current_num_threads() < 2 {
            return rows.max(1);
        }
        (TASK_WORK / work_per_row.max(1)).clamp(1, rows.div_ceil(rayon::current_num_threads()).max(1))
    }

    /// Runs `row(r, out_row)` over the `rows` rows of `row_len` elements of `out`: in tasks of
    /// [`rows_per_task`](Self::rows_per_task) rows (of `work_per_row` each) on the rayon pool,
    /// or on this thread when one task holds them all. Each task's loop is compiled for the
    /// process's instruction-set path ([`crate::isa::vectorized`]).
    pub(crate) fn for_each_row<T: Send>(
        &self,
        out: &mut [T],
        (rows, row_len): (usize, usize),
        work_per_row: usize,
        row: impl Fn(usize, &mut [T]) + Sync,
    ) {
        let per = self.rows_per_task(rows, work_per_row);
        let task = |(ti, chunk): (usize, &mut [T])| {
            crate::isa::vectorized(|| {
                for (ri, orow) in chunk.chunks_exact_mut(row_len).enumerate() {
                    row(ti * per + ri, orow);
                }
            })
        };
        if per >= rows {
            task((0, out));
        } else {
            out.par_chunks_mut(per * row_len).enumerate().for_each(task);
        }
    }
}

/// `acc[j] += x[j / m] * f[j]` over one input pixel's channels (`acc`, `f`: c * m).
#[inline(always)]
pub(crate) fn mul_acc<T: Real>(acc: &mut [T], x: &[T], f: &[T], m: usize) {
    if m == 1 {
        for ((a, &xv), &fv) in acc.iter_mut().zip(x).zip(f) {
            *a += xv * fv;
        }
    } else {
        for ((a, &xv), fv) in acc.chunks_exact_mut(m).zip(x).zip(f.chunks_exact(m)) {
            for (a, &fv) in a.iter_mut().zip(fv) {
                *a += xv * fv;
            }
        }
    }
}

/// The forward convolution into `out` (dims `g.out_dims()`).
pub(crate) fn depthwise_forward<T: DwScalar>(g: &DwGeom, input: &[T], filter: &[T], out: &mut [T]) {
    if T::forward_simd(g, input, filter, out) {
        return;
    }
    depthwise_forward_portable(g, input, filter, out)
}

/// [`depthwise_forward`] without the vectorized path.
pub(crate) fn depthwise_forward_portable<T: Real>(g: &DwGeom, input: &[T], filter: &[T], out: &mut [T]) {
    let (oc, ow, oh) = (g.oc(), g.x.output, g.y.output);
    let row_len = ow * oc;
    if row_len == 0 || out.is_empty() {
        return;
    }
    let (w, c) = (g.x.input, g.c);
    g.for_each_row(out, (g.n * oh, row_len), row_len * g.y.size * g.x.size, |r, orow| {
        let (b, oy) = (r / oh, r % oh);
        let (y0, y1) = g.y.range(oy);
        let ky0 = (y0 as isize - (oy * g.y.stride) as isize + g.y.pad as isize) as usize;
        for (ox, acc) in orow.chunks_exact_mut(oc).enumerate() {
            acc.fill(T::ZERO);
            let (x0, x1) = g.x.range(ox);
            let kx0 = (x0 as isize - (ox * g.x.stride) as isize + g.x.pad as isize) as usize;
            for (ky, iy) in (ky0..).zip(y0..y1) {
                let base = (b * g.y.input + iy) * w;
                for (kx, ix) in (kx0..).zip(x0..x1) {
                    let xp = &input[(base + ix) * c..(base + ix + 1) * c];
                    let fp = &filter[(ky * g.x.size + kx) * oc..(ky * g.x.size + kx + 1) * oc];
                    mul_acc(acc, xp, fp, g.m);
                }
            }
        }
    });
}

attrs_kernel!(DepthwiseConv2dNative, DwAttrs, depthwise_factory);

impl DepthwiseConv2dNative {
    fn run<T: DwScalar>(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let (x, f) = (ctx.input(0)?, ctx.input(1)?);
        let g = self.attrs.geom(ctx.node(), "", x.dims(), f.dims())?;
        let dims = g.out_dims();
        ferroflow_core::check_tensor_alloc(&dims, self.dtype).map_err(|e| ctx.error_with(e))?;
        let mut out = ferroflow_core::alloc::zeroed::<T>(&dims)?;
        depthwise_forward(&g, x.as_slice::<T>()?, f.as_slice::<T>()?, &mut out);
        ctx.set_output(0, Tensor::new(dims.to_vec(), out)?)
    }
}

float_kernel!(DepthwiseConv2dNative, [(0, "input"), (1, "filter")]);
