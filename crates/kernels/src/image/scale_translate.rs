//! `ScaleAndTranslate` and `ScaleAndTranslateGrad` (what `tf.image.resize` runs for
//! antialiasing and the lanczos / gaussian / mitchell methods): separable resampling with
//! a sampling kernel, rows first then columns, each output pixel's weights normalized.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use super::common::{as_f32, dtype_attr, image_dims, is_real, resize_images, size_input, zeros};
use crate::array::util::scratch_vec;
use crate::{OpContext, OpKernel};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kernel {
    Lanczos(f32),
    Gaussian,
    Box,
    Triangle,
    KeysCubic,
    MitchellCubic,
}

impl Kernel {
    fn parse(s: &str) -> Option<Kernel> {
        Some(match s {
            "lanczos1" => Kernel::Lanczos(1.0),
            "lanczos3" => Kernel::Lanczos(3.0),
            "lanczos5" => Kernel::Lanczos(5.0),
            "gaussian" => Kernel::Gaussian,
            "box" => Kernel::Box,
            "triangle" => Kernel::Triangle,
            "keyscubic" => Kernel::KeysCubic,
            "mitchellcubic" => Kernel::MitchellCubic,
            _ => return None,
        })
    }

    fn radius(self) -> f32 {
        match self {
            Kernel::Lanczos(r) => r,
            Kernel::Gaussian => 1.5,
            Kernel::Box | Kernel::Triangle => 1.0,
            Kernel::KeysCubic | Kernel::MitchellCubic => 2.0,
        }
    }

    fn at(self, x: f32) -> f32 {
        let x = x.abs();
        match self {
            Kernel::Lanczos(r) => {
                const PI: f32 = std::f32::consts::PI;
                if x > r {
                    0.0
                } else if x <= 1e-3 {
                    1.0
                } else {
                    r * (PI * x).sin() * (PI * x / r).sin() / (PI * PI * x * x)
                }
            }
            Kernel::Gaussian => {
                let sigma = 1.5f32 / 3.0;
                if x >= 1.5 {
                    0.0
                } else {
                    (f64::from(-x * x) / (2.0 * f64::from(sigma) * f64::from(sigma))).exp() as f32
                }
            }
            Kernel::Box => {
                if x < 0.5 {
                    1.0
                } else if x == 0.5 {
                    0.5
                } else {
                    0.0
                }
            }
            Kernel::Triangle => {
                if x < 1.0 {
                    1.0 - x
                } else {
                    0.0
                }
            }
            Kernel::KeysCubic => {
                if x >= 2.0 {
                    0.0
                } else if x >= 1.0 {
                    ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0
                } else {
                    ((1.5 * x - 2.5) * x) * x + 1.0
                }
            }
            Kernel::MitchellCubic => {
                if x >= 2.0 {
                    0.0
                } else if x >= 1.0 {
                    (((-7.0 / 18.0) * x + 2.0) * x - 10.0 / 3.0) * x + 16.0 / 9.0
                } else {
                    (((7.0 / 6.0) * x - 2.0) * x) * x + 8.0 / 9.0
                }
            }
        }
    }
}

/// Per output index: the first input index and `size` weights.
struct Spans {
    size: usize,
    starts: Vec<usize>,
    weights: Vec<f32>,
}

impl Spans {
    /// Sets `dst` to output `i`'s weighted sum of the `dst.len()`-long runs of `src`
    /// (`limit` runs in all; taps past the last one are dropped).
    #[inline]
    fn blend(&self, i: usize, limit: usize, src: &[f32], dst: &mut [f32]) {
        let unit = dst.len();
        dst.iter_mut().for_each(|v| *v = 0.0);
        let start = self.starts[i];
        let real = (start + self.size).min(limit).saturating_sub(start);
        for (j, &w) in self.weights[i * self.size..][..real].iter().enumerate() {
            let run = &src[(start + j) * unit..][..unit];
            dst.iter_mut().zip(run).for_each(|(d, &s)| *d += w * s);
        }
    }
}

/// `n` span starts, 0 (a size input sizes them: from the fallible path).
fn span_starts(n: usize) -> Result<Vec<usize>, Status> {
    let mut v = scratch_vec(n, "span starts")?;
    v.resize(n, 0);
    Ok(v)
}

fn spans(k: Kernel, out: usize, inp: usize, scale: f32, translate: f32, antialias: bool) -> Result<Spans, Status> {
    let inv_scale = (1.0 / f64::from(scale)) as f32;
    let inv_translate = -inv_scale * translate;
    let kscale = if antialias { inv_scale.max(1.0) } else { 1.0 };
    let reach = k.radius() * kscale;
    let size = ((2.0 * reach.ceil() + 1.0).min(inp as f32)) as usize;
    let size = size.max(1);
    let mut s = Spans { size, starts: span_starts(out)?, weights: ferroflow_core::alloc::zeroed(&[out, size])? };
    let inv_k = 1.0 / kscale;
    let mut tmp = Vec::with_capacity(size);
    for x in 0..out {
        let sample = (x as f32 + 0.5) * inv_scale + inv_translate;
        if !(sample >= 0.0 && sample <= inp as f32) {
            continue;
        }
        let last = inp as i64 - 1;
        let start = ((sample - reach - 0.5).ceil() as i64).clamp(0, last);
        let end = ((sample + reach - 0.5).floor() as i64).clamp(0, last) + 1;
        let n = (end - start).max(0) as usize;
        if n > size {
            return Err(Status::internal(format!("Span is too large: {n} vs {size}.")));
        }
        tmp.clear();
        let mut total = 0.0f32;
        for src in start..end {
            let w = k.at((src as f32 + 0.5 - sample) * inv_k);
            total += w;
            tmp.push(w);
        }
        if total.abs() >= 1000.0 * f32::MIN_POSITIVE {
            let inv = 1.0 / total;
            for (d, w) in s.weights[x * size..].iter_mut().zip(&tmp) {
                *d = w * inv;
            }
        }
        s.starts[x] = start as usize;
    }
    Ok(s)
}

/// The spans of the gradient: for each forward input index, the forward outputs it fed.
fn grad_spans(f: &Spans, fwd_out: usize, fwd_in: usize) -> Result<Spans, Status> {
    let mut comps: Vec<Vec<(usize, f32)>> = vec![Vec::new(); fwd_in];
    for o in 0..fwd_out {
        for j in 0..f.size {
            let i = f.starts[o] + j;
            let w = f.weights[o * f.size + j];
            if w != 0.0 && i < fwd_in {
                comps[i].push((o, w));
            }
        }
    }
    // Outputs were visited in order, so each list is sorted by output index.
    let size = comps.iter().filter_map(|c| Some(c.last()?.0 - c.first()?.0 + 1)).max().unwrap_or(0);
    let mut s = Spans { size, starts: span_starts(fwd_in)?, weights: ferroflow_core::alloc::zeroed(&[fwd_in, size])? };
    for (i, c) in comps.iter().enumerate() {
        if let Some(&(first, _)) = c.first() {
            s.starts[i] = first;
            for &(o, w) in c {
                s.weights[i * size + o - first] += w;
            }
        }
    }
    Ok(s)
}

/// Resamples each image `[in_h, in_w, c]` of `x` with the row and column spans.
fn gather(
    x: &[f32],
    n: usize,
    [ih, iw, c]: [usize; 3],
    rows: &Spans,
    cols: &Spans,
    out: &mut [f32],
) -> Result<(), Status> {
    let (oh, ow) = (rows.starts.len(), cols.starts.len());
    let mut mid = ferroflow_core::alloc::zeroed::<f32>(&[oh, iw, c])?;
    let row_len = iw * c;
    for b in 0..n {
        let img = &x[b * ih * row_len..][..ih * row_len];
        for (y, mrow) in mid.chunks_exact_mut(row_len).enumerate() {
            rows.blend(y, ih, img, mrow);
        }
        let o = &mut out[b * oh * ow * c..][..oh * ow * c];
        for (y, orow) in o.chunks_exact_mut(ow * c).enumerate() {
            let mrow = &mid[y * row_len..][..row_len];
            for (xo, px) in orow.chunks_exact_mut(c).enumerate() {
                cols.blend(xo, iw, mrow, px);
            }
        }
    }
    Ok(())
}

/// A float `[2]` vector input (scale or translation).
fn pair(ctx: &OpContext, i: usize, what: &str) -> Result<(f32, f32), Status> {
    let t = ctx.input(i)?;
    if t.rank() != 1 || t.num_elements() != 2 {
        return Err(ctx.error(format!("{what} must be 1-dimensional with two elements, got shape {}", t.shape())));
    }
    let v = t.as_slice::<f32>().map_err(|_| ctx.error(format!("{what} must be float")))?;
    Ok((v[0], v[1]))
}

/// (rows, columns) of the scale or the translation.
type Pair = (f32, f32);

fn scales(ctx: &OpContext) -> Result<(Pair, Pair), Status> {
    let s = pair(ctx, 2, "scale")?;
    if !(s.0 > 0.0 && s.1 > 0.0) {
        return Err(ctx.error(format!("Scale must be greater than zero, got {s:?}")));
    }
    Ok((s, pair(ctx, 3, "translation")?))
}

op_kernel! {
    struct ScaleAndTranslate { kernel: Kernel, antialias: bool }
    fn compute(&self, ctx) {
        let (img, [n, ih, iw, c]) = resize_images(ctx)?;
        let (oh, ow) = size_input(ctx, 1, "size")?;
        let ((sr, sc), (tr, tc)) = scales(ctx)?;
        let dims = [n, oh, ow, c];
        let mut out = zeros::<f32>(&dims, DataType::Float)?;
        let cols = spans(self.kernel, ow, iw, sc, tc, self.antialias)?;
        let rows = spans(self.kernel, oh, ih, sr, tr, self.antialias)?;
        let x = as_f32(ctx, &img)?;
        gather(&x, n, [ih, iw, c], &rows, &cols, &mut out)?;
        ctx.set_output(0, Tensor::new(dims.to_vec(), out)?)
    }
}

op_kernel! {
    struct ScaleAndTranslateGrad { kernel: Kernel, antialias: bool }
    fn compute(&self, ctx) {
        let (g, orig) = (ctx.input(0)?, ctx.input(1)?);
        let [n, goh, gow, c] = image_dims(ctx, &g, "input_grad")?;
        let [_, ih, iw, _] = image_dims(ctx, &orig, "original_image")?;
        if g.dtype() != DataType::Float {
            return Err(ctx.error(format!("input_grad must be of type float, got {}", g.dtype())));
        }
        if ih > i32::MAX as usize || iw > i32::MAX as usize {
            return Err(ctx.error("original sizes must be between 0 and max int32"));
        }
        let ((sr, sc), (tr, tc)) = scales(ctx)?;
        let dims = [n, ih, iw, c];
        let mut out = zeros::<f32>(&dims, DataType::Float)?;
        if out.is_empty() || goh == 0 || gow == 0 {
            return ctx.set_output(0, Tensor::new(dims.to_vec(), out)?);
        }
        let cols = grad_spans(&spans(self.kernel, gow, iw, sc, tc, self.antialias)?, gow, iw)?;
        let rows = grad_spans(&spans(self.kernel, goh, ih, sr, tr, self.antialias)?, goh, ih)?;
        gather(g.as_slice::<f32>()?, n, [goh, gow, c], &rows, &cols, &mut out)?;
        ctx.set_output(0, Tensor::new(dims.to_vec(), out)?)
    }
}

fn attrs(node: &NodeDef) -> Result<(Kernel, bool), Status> {
    let k = node.attr_string("kernel_type")?;
    let kernel = Kernel::parse(&k).ok_or_else(|| node.node_error(format!("Unrecognized kernel type: {k}")))?;
    Ok((kernel, node.attr_bool("antialias")?))
}

pub(crate) fn factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    dtype_attr(node, "T", is_real)?;
    let (kernel, antialias) = attrs(node)?;
    Ok(Box::new(ScaleAndTranslate { kernel, antialias }))
}

pub(crate) fn grad_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    dtype_attr(node, "T", |d| d == DataType::Float)?;
    let (kernel, antialias) = attrs(node)?;
    Ok(Box::new(ScaleAndTranslateGrad { kernel, antialias }))
}
