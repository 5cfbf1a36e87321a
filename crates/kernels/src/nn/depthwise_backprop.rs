//! `DepthwiseConv2dNativeBackpropInput` and `DepthwiseConv2dNativeBackpropFilter`.
//!
//! The input gradient gathers, for each input pixel, the output pixels whose windows cover
//! it (input rows run in parallel, no write conflicts). The filter gradient accumulates
//! `input pixel × output gradient` per filter tap in one private filter-sized buffer per
//! task of output rows, then sums the buffers.

use ferroflow_core::{DataType, Status, Tensor};
use rayon::prelude::*;

use super::common::{attrs_kernel, dims_str, float_kernel};
use super::depthwise::{mul_acc, DwAttrs, DwGeom};
use super::depthwise_simd::DwScalar;
use super::pool::shape_input;
use crate::real::Real;
use crate::OpContext;

/// The kernel offsets `k` and output positions `o` with `o * stride + k - pad == i`.
#[inline(always)]
pub(crate) fn taps(i: usize, w: &super::common::Window) -> impl Iterator<Item = (usize, usize)> {
    let p = i + w.pad;
    let first = p % w.stride;
    let (size, stride, output) = (w.size, w.stride, w.output);
    (first..size.min(p + 1)).step_by(stride).filter_map(move |k| {
        let o = (p - k) / stride;
        (o < output).then_some((k, o))
    })
}

/// `acc[c] += Σ_m g[c * m + i] * f[c * m + i]` (channels of one input pixel).
#[inline(always)]
fn dot_acc<T: Real>(acc: &mut [T], g: &[T], f: &[T], m: usize) {
    if m == 1 {
        for ((a, &gv), &fv) in acc.iter_mut().zip(g).zip(f) {
            *a += gv * fv;
        }
    } else {
        for ((a, gv), fv) in acc.iter_mut().zip(g.chunks_exact(m)).zip(f.chunks_exact(m)) {
            let mut s = T::ZERO;
            for (&x, &y) in gv.iter().zip(fv) {
                s += x * y;
            }
            *a += s;
        }
    }
}

/// The input gradient into `dx` ([n, rows, cols, c]).
pub(crate) fn depthwise_backprop_input<T: DwScalar>(g: &DwGeom, filter: &[T], dy: &[T], dx: &mut [T]) {
    if T::backprop_input_simd(g, filter, dy, dx) {
        return;
    }
    depthwise_backprop_input_portable(g, filter, dy, dx)
}

/// [`depthwise_backprop_input`] without the vectorized path.
pub(crate) fn depthwise_backprop_input_portable<T: Real>(g: &DwGeom, filter: &[T], dy: &[T], dx: &mut [T]) {
    let (c, oc, w) = (g.c, g.oc(), g.x.input);
    let row_len = w * c;
    if row_len == 0 || dx.is_empty() {
        return;
    }
    let work = row_len * g.m * g.y.size.div_ceil(g.y.stride) * g.x.size.div_ceil(g.x.stride);
    let (oh, ow) = (g.y.output, g.x.output);
    g.for_each_row(dx, (g.n * g.y.input, row_len), work, |r, drow| {
        let (b, iy) = (r / g.y.input, r % g.y.input);
        for (ix, acc) in drow.chunks_exact_mut(c).enumerate() {
            acc.fill(T::ZERO);
            for (ky, oy) in taps(iy, &g.y) {
                let base = (b * oh + oy) * ow;
                for (kx, ox) in taps(ix, &g.x) {
                    let gp = &dy[(base + ox) * oc..(base + ox + 1) * oc];
                    let fp = &filter[(ky * g.x.size + kx) * oc..(ky * g.x.size + kx + 1) * oc];
                    dot_acc(acc, gp, fp, g.m);
                }
            }
        }
    });
}

/// The filter gradient into `df` ([rows, cols, c, multiplier]).
pub(crate) fn depthwise_backprop_filter<T: DwScalar>(
    g: &DwGeom,
    input: &[T],
    dy: &[T],
    df: &mut [T],
) -> Result<(), Status> {
    if T::backprop_filter_simd(g, input, dy, df) {
        return Ok(());
    }
    depthwise_backprop_filter_portable(g, input, dy, df)
}

/// [`depthwise_backprop_filter`] without the vectorized path.
pub(crate) fn depthwise_backprop_filter_portable<T: Real>(
    g: &DwGeom,
    input: &[T],
    dy: &[T],
    df: &mut [T],
) -> Result<(), Status> {
    let (c, oc, w) = (g.c, g.oc(), g.x.input);
    let (oh, ow) = (g.y.output, g.x.output);
    let rows = g.n * oh;
    df.fill(T::ZERO);
    if rows == 0 || ow == 0 || oc == 0 || df.is_empty() {
        return Ok(());
    }
    let threads = rayon::current_num_threads();
    let per = g.rows_per_task(rows, ow * oc * g.y.size * g.x.size).max(rows.div_ceil(threads * 2));
    let len = df.len();
    // Each task's partial sums, filter-sized (a filter_sizes input sizes it).
    let task = |t: usize| -> Result<Vec<T>, Status> {
        let mut acc = ferroflow_core::alloc::zeroed::<T>(&[len])?;
        crate::isa::vectorized(|| {
            for r in t * per..((t + 1) * per).min(rows) {
                let (b, oy) = (r / oh, r % oh);
                let (y0, y1) = g.y.range(oy);
                let ky0 = (y0 as isize - (oy * g.y.stride) as isize + g.y.pad as isize) as usize;
                for ox in 0..ow {
                    let (x0, x1) = g.x.range(ox);
                    let kx0 = (x0 as isize - (ox * g.x.stride) as isize + g.x.pad as isize) as usize;
                    let gp = &dy[(r * ow + ox) * oc..(r * ow + ox + 1) * oc];
                    for (ky, iy) in (ky0..).zip(y0..y1) {
                        let base = (b * g.y.input + iy) * w;
                        for (kx, ix) in (kx0..).zip(x0..x1) {
                            let xp = &input[(base + ix) * c..(base + ix + 1) * c];
                            let tap = (ky * g.x.size + kx) * oc;
                            mul_acc(&mut acc[tap..tap + oc], xp, gp, g.m);
                        }
                    }
                }
            }
        });
        Ok(acc)
    };
    let tasks = rows.div_ceil(per);
    let add = |mut a: Vec<T>, b: Vec<T>| {
        a.iter_mut().zip(&b).for_each(|(x, &y)| *x += y);
        Ok(a)
    };
    let sum = if tasks == 1 {
        task(0)?
    } else {
        (0..tasks).into_par_iter().map(task).try_reduce_with(add).transpose()?.unwrap_or_default()
    };
    if sum.len() == df.len() {
        df.copy_from_slice(&sum);
    }
    Ok(())
}

/// Checks the output gradient's dims against the geometry.
fn check_out_backprop(ctx: &OpContext, label: &str, g: &DwGeom, dy: &[usize]) -> Result<(), Status> {
    let want = g.out_dims();
    if dy.len() != 4 {
        return Err(ctx.error(format!("{label}out_backprop must be 4-dimensional{}", dims_str(dy))));
    }
    let names = ["batch", "rows", "columns", "depth"];
    for i in 0..4 {
        if dy[i] != want[i] {
            return Err(ctx.error(format!(
                "{label}Number of {} of out_backprop doesn't match computed: actual = {}, computed = {}",
                names[i], dy[i], want[i]
            )));
        }
    }
    Ok(())
}

/// The 4 sizes in `input_sizes` / `filter_sizes` (input `i`), checked against the memory limit.
fn sizes(ctx: &OpContext, i: usize, what: &str, label: &str, dtype: DataType) -> Result<Vec<usize>, Status> {
    let t = ctx.input(i)?;
    if t.rank() != 1 || t.dims()[0] != 4 {
        return Err(ctx.error(format!("{label}{what} must be 4-dimensional, got shape {}", t.shape())));
    }
    let dims = shape_input(ctx, &t, what)?;
    ferroflow_core::check_tensor_alloc(&dims, dtype).map_err(|e| ctx.error_with(e))?;
    Ok(dims)
}

attrs_kernel!(BackpropInput, DwAttrs, backprop_input_factory);

const INPUT_LABEL: &str = "DepthwiseConv2DBackpropInput: ";
const FILTER_LABEL: &str = "DepthwiseConv2DBackpropFilter: ";

impl BackpropInput {
    fn run<T: DwScalar>(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let shape = sizes(ctx, 0, "input_sizes", INPUT_LABEL, self.dtype)?;
        let (f, dy) = (ctx.input(1)?, ctx.input(2)?);
        let g = self.attrs.geom(ctx.node(), INPUT_LABEL, &shape, f.dims())?;
        check_out_backprop(ctx, INPUT_LABEL, &g, dy.dims())?;
        let mut dx = ferroflow_core::alloc::zeroed::<T>(&shape)?;
        depthwise_backprop_input(&g, f.as_slice::<T>()?, dy.as_slice::<T>()?, &mut dx);
        ctx.set_output(0, Tensor::new(shape, dx)?)
    }
}

float_kernel!(BackpropInput, [(1, "filter"), (2, "out_backprop")]);

attrs_kernel!(BackpropFilter, DwAttrs, backprop_filter_factory);

impl BackpropFilter {
    fn run<T: DwScalar>(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let shape = sizes(ctx, 1, "filter_sizes", FILTER_LABEL, self.dtype)?;
        let (x, dy) = (ctx.input(0)?, ctx.input(2)?);
        let g = self.attrs.geom(ctx.node(), FILTER_LABEL, x.dims(), &shape)?;
        check_out_backprop(ctx, FILTER_LABEL, &g, dy.dims())?;
        let mut df = ferroflow_core::alloc::zeroed::<T>(&shape)?;
        depthwise_backprop_filter(&g, x.as_slice::<T>()?, dy.as_slice::<T>()?, &mut df)?;
        ctx.set_output(0, Tensor::new(shape, df)?)
    }
}

float_kernel!(BackpropFilter, [(0, "input"), (2, "out_backprop")]);
