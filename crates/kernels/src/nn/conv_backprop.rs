//! `Conv2DBackpropInput` (patch gradients `dy · filterᵀ`, scattered back with col2im, one
//! image per rayon task) and `Conv2DBackpropFilter` (`Σ patchesᵀ · dy`, one partial sum per
//! thread over blocks of rows that stay in cache).

use ferroflow_core::{Status, Tensor};
use rayon::prelude::*;

use super::common::{attrs_kernel, float_kernel};
use super::common::{dims_str, gradient_dims, shape_values};
use super::conv::{ConvAttrs, BLOCK_BYTES};
use super::conv_direct::DirectScalar;
use super::conv_groups;
use super::depthwise_backprop::{depthwise_backprop_filter, depthwise_backprop_input};
use super::depthwise_simd::DwScalar;

/// Block size of the input gradient: a whole image when it fits (measured best).
const INPUT_BLOCK_BYTES: usize = 1024 * 1024;
use super::gemm::{GemmScalar, Mat, PAR_GEMM_MIN};
use super::im2col::{col2im_add, im2col, ConvGeom};
use crate::OpContext;

/// Reads a shape given as a 1-D int32 tensor (`input_sizes`, `filter_sizes`).
fn sizes(ctx: &OpContext, t: &Tensor, label: &str, what: &str) -> Result<Vec<usize>, Status> {
    let what = format!("{label}{what}");
    if t.rank() != 1 {
        return Err(ctx.error(format!("{what} input must be 1-dimensional, not {}", t.rank())));
    }
    let v = shape_values(ctx, t, &what, "int32")?;
    gradient_dims(ctx, &v, &what)
}

/// Checks that `dy` has the shape the forward convolution would produce.
fn check_out_backprop(
    ctx: &OpContext,
    label: &str,
    g: &ConvGeom,
    groups: usize,
    dy: &[usize],
    filter: &[usize],
) -> Result<(), Status> {
    if dy.len() != 4 {
        return Err(ctx.error(format!("{label}out_backprop must be 4-dimensional{}", dims_str(dy))));
    }
    if dy[0] != g.n {
        return Err(ctx.error(format!(
            "{label}input and out_backprop must have the same batch size, input batch: {} outbackprop batch: {} batch_dim: 0",
            g.n, dy[0]
        )));
    }
    if dy[3] != g.oc * groups {
        return Err(ctx.error(format!(
            "{label}filter and out_backprop must have the same out_depth, filter: {} out_backprop: {}",
            filter[3], dy[3]
        )));
    }
    for (dim, w, actual) in [(1, &g.y, dy[1]), (2, &g.x, dy[2])] {
        if w.output != actual {
            return Err(ctx.error(format!(
                "{label}Size of out_backprop doesn't match computed: actual = {actual}, computed = {} spatial_dim: {dim} \
                 input: {} filter: {} output: {actual} stride: {} dilation: 1",
                w.output, w.input, w.size, w.stride
            )));
        }
    }
    Ok(())
}

/// `dx` (zeroed, `n·h·w·c`) = col2im(dy[rows × oc] · filter[K × oc]ᵀ): at stride 1 the
/// forward convolution of `dy` with the filter turned 180° ([`transposed`]), otherwise patch
/// gradients scattered back.
pub fn conv2d_backprop_input<T: GemmScalar + DirectScalar>(g: &ConvGeom, filter: &[T], dy: &[T], dx: &mut [T]) {
    let (m, k, oc) = (g.rows(), g.k(), g.oc);
    if m == 0 || k == 0 {
        return;
    }
    // filterᵀ as an [oc × K] view of the [K × oc] row-major filter.
    let ft = Mat { data: filter, rs: 1, cs: oc };
    if g.is_pointwise() {
        T::gemm(m, k, oc, Mat::row_major(dy, oc, false), ft, dx, k, false, true);
        return;
    }
    if let Some(t) = transposed(g).filter(|_| filter.len() < TURN_MAX) {
        // The product has `dx`'s shape, depth `K·oc/c`, and no 9×-wide patch gradients to
        // scatter (ResNet50's 3×3 layers at 32×32×64: 4.9 → 3.1 ms; at 16×16×128: 4.2 →
        // 3.3 ms).
        let turned = turn_filter(g, filter);
        super::conv::direct_or_gemm(&t, dy, &turned, dx);
        return;
    }
    let per = g.rows_per_image();
    let rb = g.block_rows(std::mem::size_of::<T>(), INPUT_BLOCK_BYTES).min(per);
    let parallel_images = g.n > 1 && rayon::current_num_threads() > 1 && m * k * oc >= PAR_GEMM_MIN;
    let image = |buf: &mut Vec<T>, (b, dxi): (usize, &mut [T])| {
        let mut start = b * per;
        while start < (b + 1) * per {
            let cnt = rb.min((b + 1) * per - start);
            let dyb = Mat::row_major(&dy[start * oc..(start + cnt) * oc], oc, false);
            T::gemm(cnt, k, oc, dyb, ft, buf, k, false, !parallel_images);
            col2im_add(g, buf, start, cnt, dxi, b * g.image_len());
            start += cnt;
        }
    };
    let init = || vec![T::default(); rb * k];
    if parallel_images {
        dx.par_chunks_mut(g.image_len()).enumerate().for_each_init(init, image);
    } else {
        let mut buf = init();
        dx.chunks_mut(g.image_len()).enumerate().for_each(|x| image(&mut buf, x));
    }
}

/// `dw[K × oc] = Σ_rows patches(x)ᵀ · dy`.
pub(crate) fn conv2d_backprop_filter<T: GemmScalar + DirectScalar>(
    g: &ConvGeom,
    x: &[T],
    dy: &[T],
) -> Result<Vec<T>, Status> {
    let (m, k, oc) = (g.rows(), g.k(), g.oc);
    let dims = [g.y.size, g.x.size, g.c, oc];
    let mut dw = ferroflow_core::alloc::zeroed::<T>(&dims)?;
    if m == 0 || k == 0 || oc == 0 {
        return Ok(dw);
    }
    if let Some(dw) = T::backprop_filter_direct(g, x, dy) {
        return Ok(dw);
    }
    let threads = rayon::current_num_threads();
    let parts = if threads > 1 && m * k * oc >= PAR_GEMM_MIN { threads.min(m) } else { 1 };
    if g.is_pointwise() {
        pointwise_filter(parts, (m, k, oc), x, dy, &mut dw)?;
        return Ok(dw);
    }
    if parts > 1 && m <= parts * oc {
        // Few output pixels (the deep layers of a ResNet: 8×4×4 rows for 3·3·512 × 512
        // weights): the whole patch matrix is no larger than the per-thread partial sums
        // would be, so build it once and let one product split the weights between the
        // threads; no partial sums to add.
        let mut patches = ferroflow_core::alloc::zeroed::<T>(&[m, k])?;
        im2col(g, x, 0, m, &mut patches);
        T::gemm(
            k,
            oc,
            m,
            Mat { data: &patches, rs: 1, cs: k },
            Mat::row_major(dy, oc, false),
            &mut dw,
            oc,
            false,
            true,
        );
        return Ok(dw);
    }
    let rows_per_part = m.div_ceil(parts);
    let rb = g.block_rows(std::mem::size_of::<T>(), BLOCK_BYTES).min(rows_per_part);
    let part = |p: usize, acc: &mut [T]| {
        let mut buf = vec![T::default(); rb * k];
        let (lo, hi) = (p * rows_per_part, ((p + 1) * rows_per_part).min(m));
        let mut start = lo;
        while start < hi {
            let cnt = rb.min(hi - start);
            im2col(g, x, start, cnt, &mut buf);
            let dyb = Mat::row_major(&dy[start * oc..(start + cnt) * oc], oc, false);
            T::gemm(k, oc, cnt, Mat { data: &buf[..cnt * k], rs: 1, cs: k }, dyb, acc, oc, start > lo, false);
            start += cnt;
        }
    };
    if parts == 1 {
        part(0, &mut dw);
    } else {
        let partials: Vec<Vec<T>> = (0..parts)
            .into_par_iter()
            .map(|p| {
                let mut acc = ferroflow_core::alloc::zeroed::<T>(&dims)?;
                part(p, &mut acc);
                Ok(acc)
            })
            .collect::<Result<_, Status>>()?;
        add_partials(&mut dw, partials);
    }
    Ok(dw)
}

fn add_partials<T: GemmScalar + DirectScalar>(dw: &mut [T], partials: Vec<Vec<T>>) {
    for p in partials {
        for (a, v) in dw.iter_mut().zip(p) {
            *a += v;
        }
    }
}

/// A 1×1 filter's gradient `xᵀ · dy`: a product with a long inner dimension (every pixel of
/// the batch) and a small result (MobileNetV2's `16 × 96` at 80×80×16 pixels), which one
/// product cannot share between threads. Split the pixels instead, one partial sum per thread.
fn pointwise_filter<T: GemmScalar + DirectScalar>(
    parts: usize,
    (m, k, oc): (usize, usize, usize),
    x: &[T],
    dy: &[T],
    dw: &mut [T],
) -> Result<(), Status> {
    // `parallel`: whether this one product may split itself over the threads.
    let whole = |lo: usize, hi: usize, acc: &mut [T], parallel: bool| {
        let xb = Mat { data: &x[lo * k..hi * k], rs: 1, cs: k };
        T::gemm(k, oc, hi - lo, xb, Mat::row_major(&dy[lo * oc..hi * oc], oc, false), acc, oc, false, parallel);
    };
    if parts == 1 || m < parts * oc {
        // Few pixels for a wide result (ResNet50's 1×1 layers at 8×8 and 4×4: 256 × 1024
        // weights from 512 pixels): one product, whose result the threads split.
        whole(0, m, dw, true);
        return Ok(());
    }
    let rows = m.div_ceil(parts);
    let partials: Vec<Vec<T>> = (0..parts)
        .into_par_iter()
        .map(|p| {
            let mut acc = ferroflow_core::alloc::zeroed::<T>(&[k, oc])?;
            whole(p * rows, ((p + 1) * rows).min(m), &mut acc, false);
            Ok(acc)
        })
        .collect::<Result<_, Status>>()?;
    add_partials(dw, partials);
    Ok(())
}

/// Filters of at least this many elements are not turned: copying them costs more than the
/// product saves (ResNet50's 3×3×256×256 at 8×8: 3.7 ms by scattered patch gradients,
/// 5.3 ms turned, a quarter of it the copy; one product per tap reading the filter in place
/// instead, 4.1 ms).
const TURN_MAX: usize = 1 << 18;

/// The filter `[kh, kw, c, oc]` turned 180° with its channels swapped (`[kh, kw, oc, c]`):
/// each tap's `c × oc` matrix transposed in cache-sized tiles.
fn turn_filter<T: Copy + Default>(g: &ConvGeom, filter: &[T]) -> Vec<T> {
    const TILE: usize = 16;
    let (taps, c, oc) = (g.y.size * g.x.size, g.c, g.oc);
    let mut turned = vec![T::default(); filter.len()];
    let turn = |(t, dst): (usize, &mut [T])| {
        let src = &filter[(taps - 1 - t) * c * oc..(taps - t) * c * oc];
        for c0 in (0..c).step_by(TILE) {
            for o0 in (0..oc).step_by(TILE) {
                for ci in c0..(c0 + TILE).min(c) {
                    for o in o0..(o0 + TILE).min(oc) {
                        dst[o * c + ci] = src[ci * oc + o];
                    }
                }
            }
        }
    };
    turned.chunks_mut(c * oc).enumerate().for_each(turn);
    turned
}

/// The geometry of a stride-1 convolution's input gradient as a forward convolution: `dy`
/// (its output) is the input, the turned filter maps `oc` channels to `c`, and the padding
/// before becomes `size - 1 - pad`; `None` at other strides.
fn transposed(g: &ConvGeom) -> Option<ConvGeom> {
    Some(ConvGeom { n: g.n, c: g.oc, oc: g.c, y: g.y.turned()?, x: g.x.turned()? })
}

attrs_kernel!(BackpropInput, ConvAttrs, backprop_input_factory);

const INPUT_LABEL: &str = "Conv2DBackpropInput: ";
const FILTER_LABEL: &str = "Conv2DBackpropFilter: ";

impl BackpropInput {
    fn run<T: GemmScalar + DirectScalar + DwScalar>(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let (sz, f, dy) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?);
        let mut shape = sizes(ctx, &sz, INPUT_LABEL, "input_sizes")?;
        if shape.len() == 2 && dy.rank() == 4 && f.rank() == 4 {
            shape = vec![dy.dims()[0], shape[0], shape[1], f.dims()[2]];
        } else if shape.len() != 4 {
            return Err(ctx.error(format!(
                "{INPUT_LABEL}input_sizes must contain 4 values or 2 values, but got: {}",
                shape.len()
            )));
        }
        let (g, groups) = self.attrs.geom(ctx.node(), INPUT_LABEL, &shape, f.dims())?;
        check_out_backprop(ctx, INPUT_LABEL, &g, groups, dy.dims(), f.dims())?;
        let mut dx = ferroflow_core::alloc::zeroed::<T>(&[g.n, g.y.input, g.x.input, g.c * groups])?;
        let (f, dy) = (f.as_slice::<T>()?, dy.as_slice::<T>()?);
        let ungrouped = |g: &ConvGeom, f: &[T], dy: &[T], dx: &mut [T]| {
            if !T::backprop_input_winograd(g, f, dy, dx) {
                conv2d_backprop_input(g, f, dy, dx);
            }
        };
        if groups == 1 {
            ungrouped(&g, f, dy, &mut dx);
        } else if let Some(dw) = conv_groups::as_depthwise(&g, groups) {
            depthwise_backprop_input(&dw, f, dy, &mut dx);
        } else {
            conv_groups::backprop_input(&g, groups, f, dy, &mut dx, ungrouped)?;
        }
        ctx.set_output(0, Tensor::new(shape, dx)?)
    }
}

float_kernel!(BackpropInput, [(1, "filter"), (2, "out_backprop")]);

attrs_kernel!(BackpropFilter, ConvAttrs, backprop_filter_factory);

impl BackpropFilter {
    fn run<T: GemmScalar + DirectScalar + DwScalar>(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let (x, sz, dy) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?);
        let shape = sizes(ctx, &sz, FILTER_LABEL, "filter_sizes")?;
        let (g, groups) = self.attrs.geom(ctx.node(), FILTER_LABEL, x.dims(), &shape)?;
        check_out_backprop(ctx, FILTER_LABEL, &g, groups, dy.dims(), &shape)?;
        let (x, dy) = (x.as_slice::<T>()?, dy.as_slice::<T>()?);
        let dw = if groups == 1 {
            conv2d_backprop_filter(&g, x, dy)?
        } else if let Some(dwg) = conv_groups::as_depthwise(&g, groups) {
            let mut dw = ferroflow_core::alloc::zeroed::<T>(&[g.y.size, g.x.size, g.c, g.oc * groups])?;
            depthwise_backprop_filter(&dwg, x, dy, &mut dw)?;
            dw
        } else {
            conv_groups::backprop_filter(&g, groups, x, dy, conv2d_backprop_filter)?
        };
        ctx.set_output(0, Tensor::new(shape, dw)?)
    }
}

float_kernel!(BackpropFilter, [(0, "input"), (2, "out_backprop")]);
