//! `FusedBatchNorm`, `FusedBatchNormV2`, `FusedBatchNormV3` (float): per-channel
//! normalization over every other dim, in NHWC/NDHWC (channel innermost) or NCHW/NCDHW
//! (one contiguous plane per batch and channel), without transposing.
//!
//! Training (TensorFlow's CPU semantics): `y` uses the biased batch variance; `batch_mean`
//! and `batch_variance` (Bessel-corrected) are blended with the incoming `mean` and
//! `variance` when `exponential_avg_factor != 1` (otherwise those may be empty);
//! `reserve_space_1/2` hold the batch mean and the biased variance the gradient needs. An
//! empty `x` gives NaN statistics. Inference: `y` from the given `mean` and `variance`,
//! which the other outputs repeat. V3's `reserve_space_3` is a scalar 0.
//!
//! `T` half or bfloat16 (V2, V3) computes in float: `x` is widened once and `y` rounded.

use ferroflow_core::proto::NodeDef;
use std::borrow::Cow;

use ferroflow_core::half::{bf16, f16};
use ferroflow_core::{DataType, NodeAttrs, Status, Storage, Tensor};
use rayon::prelude::*;

use super::batch_norm_act::Act;
use super::batch_norm_rows::{MapRows, SumRows};
use super::common::type_attr;
use super::common::{dims_str, for_chunks};
use crate::{OpContext, OpKernel};

/// Rows (channel-last) per rayon task of the reductions.
const ROWS_PER_TASK: usize = 512;

/// Independent partial sums per plane run (channel-first reductions).
const LANES: usize = 16;

/// How the channel dim sits in `x`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Layout {
    /// `[rows, c]`: NHWC / NDHWC.
    Last { rows: usize, c: usize },
    /// `[n, c, s]`: NCHW / NCDHW.
    First { n: usize, c: usize, s: usize },
}

impl Layout {
    /// The layout of `x` (rank 4 or 5) for a `data_format` whose channel is first or last.
    pub fn of(node: &NodeDef, dims: &[usize], channels_first: bool) -> Result<Layout, Status> {
        if dims.len() != 4 && dims.len() != 5 {
            return Err(node.node_error(format!("input must be 4 or 5-dimensional{}", dims_str(dims))));
        }
        let total: usize = dims.iter().product();
        Ok(if channels_first {
            let (n, c) = (dims[0], dims[1]);
            Layout::First { n, c, s: dims[2..].iter().product() }
        } else {
            let c = dims[dims.len() - 1];
            Layout::Last { rows: total.checked_div(c).unwrap_or(0), c }
        })
    }

    /// Number of channels.
    pub fn channels(&self) -> usize {
        match *self {
            Layout::Last { c, .. } | Layout::First { c, .. } => c,
        }
    }

    /// Elements per channel (TensorFlow's `rest_size`).
    pub fn rest(&self) -> usize {
        match *self {
            Layout::Last { rows, .. } => rows,
            Layout::First { n, s, .. } => n * s,
        }
    }

    /// Per channel, the sums over the channel's elements of `f(a, b, e, p)`, where `a`, `b`
    /// and `e` are the elements of `a`, `b` and `e` at one position and `p` holds each of
    /// `params` at the channel (callers that need fewer operands pass one slice twice).
    /// Partial sums are f32 over short runs, accumulated in f64.
    #[allow(clippy::needless_range_loop)] // k indexes K accumulators and f's K results together
    pub fn sums<const K: usize, const P: usize>(
        &self,
        [a, b, e]: [&[f32]; 3],
        params: [&[f32]; P],
        f: impl Fn(f32, f32, f32, [f32; P]) -> [f32; K] + Sync,
    ) -> [Vec<f64>; K] {
        let c = self.channels();
        let mut out: [Vec<f64>; K] = std::array::from_fn(|_| vec![0.0; c]);
        match *self {
            Layout::Last { rows, c } => {
                if rows == 0 || c == 0 {
                    return out;
                }
                let task = ROWS_PER_TASK * c;
                let partial = |((ai, bi), ei): ((&[f32], &[f32]), &[f32])| {
                    let mut acc: [Vec<f32>; K] = std::array::from_fn(|_| vec![0.0; c]);
                    let data = [ai, bi, ei];
                    crate::isa::run(SumRows { data, params, c, f: &f, acc: &mut acc });
                    acc
                };
                let parts: Vec<[Vec<f32>; K]> = if a.len() > task && rayon::current_num_threads() > 1 {
                    a.par_chunks(task).zip(b.par_chunks(task)).zip(e.par_chunks(task)).map(partial).collect()
                } else {
                    a.chunks(task).zip(b.chunks(task)).zip(e.chunks(task)).map(partial).collect()
                };
                for p in parts {
                    for k in 0..K {
                        for (o, &v) in out[k].iter_mut().zip(&p[k]) {
                            *o += f64::from(v);
                        }
                    }
                }
            }
            Layout::First { n, c, s } => {
                let plane = |i: usize| {
                    let plane = i * s..(i + 1) * s;
                    let p: [f32; P] = std::array::from_fn(|q| params[q][i % c]);
                    let (ap, bp, ep) = (&a[plane.clone()], &b[plane.clone()], &e[plane]);
                    let mut acc = [0.0f64; K];
                    crate::isa::vectorized(|| {
                        let runs = ap.chunks(ROWS_PER_TASK).zip(bp.chunks(ROWS_PER_TASK)).zip(ep.chunks(ROWS_PER_TASK));
                        for ((ac, bc), ec) in runs {
                            // LANES independent partial sums per run, so the loop vectorizes.
                            let mut lanes = [[0.0f32; LANES]; K];
                            let (ax, bx, ex) = (ac.chunks_exact(LANES), bc.chunks_exact(LANES), ec.chunks_exact(LANES));
                            let (ra, rb, re) = (ax.remainder(), bx.remainder(), ex.remainder());
                            for ((x8, y8), z8) in ax.zip(bx).zip(ex) {
                                for (k, lane) in lanes.iter_mut().enumerate() {
                                    for (((s, &x), &y), &z) in lane.iter_mut().zip(x8).zip(y8).zip(z8) {
                                        *s += f(x, y, z, p)[k];
                                    }
                                }
                            }
                            for ((&x, &y), &z) in ra.iter().zip(rb).zip(re) {
                                let v = f(x, y, z, p);
                                for k in 0..K {
                                    lanes[k][0] += v[k];
                                }
                            }
                            for k in 0..K {
                                acc[k] += lanes[k].iter().map(|&v| f64::from(v)).sum::<f64>();
                            }
                        }
                    });
                    acc
                };
                let parts: Vec<[f64; K]> = if a.len() > ROWS_PER_TASK * 64 && rayon::current_num_threads() > 1 {
                    (0..n * c).into_par_iter().map(plane).collect()
                } else {
                    (0..n * c).map(plane).collect()
                };
                for (i, p) in parts.iter().enumerate() {
                    for k in 0..K {
                        out[k][i % c] += p[k];
                    }
                }
            }
        }
        out
    }

    /// A new buffer of `a.len()` elements, `out[i] = f(a[i], b[i], e[i], [p[0][ch], p[1][ch], …])`,
    /// `ch` the element's channel: written once, never zero-filled first (from the
    /// fallible allocation path; `dims` name the tensor in its error).
    pub fn map<const N: usize>(
        &self,
        dims: &[usize],
        [a, b, e]: [&[f32]; 3],
        p: [&[f32]; N],
        f: impl Fn(f32, f32, f32, [f32; N]) -> f32 + Sync,
    ) -> Result<Vec<f32>, Status> {
        let len = a.len();
        let mut v = ferroflow_core::alloc::with_capacity::<f32>(dims)?;
        let out = &mut v.spare_capacity_mut()[..len];
        match *self {
            Layout::Last { c, .. } => for_chunks(out, c, |off, chunk| {
                let span = off..off + chunk.len();
                let data = [&a[span.clone()], &b[span.clone()], &e[span]];
                crate::isa::run(MapRows { out: chunk, data, params: p, c, f: &f });
            }),
            Layout::First { c, s, .. } => for_chunks(out, s, |off, chunk| {
                for (i, o) in chunk.chunks_exact_mut(s.max(1)).enumerate() {
                    let start = off + i * s;
                    let ch = (start / s.max(1)) % c.max(1);
                    let q: [f32; N] = std::array::from_fn(|k| p[k][ch]);
                    let plane = start..start + s;
                    let (ap, bp, ep) = (&a[plane.clone()], &b[plane.clone()], &e[plane]);
                    for ((o, &x), (&y, &z)) in o.iter_mut().zip(ap).zip(bp.iter().zip(ep)) {
                        o.write(f(x, y, z, q));
                    }
                }
            }),
        }
        // SAFETY: both layouts cover every element of `out` exactly once (`Last`: whole
        // rows of `c`, and `len` is a multiple of `c`; `First`: whole planes of `s`, and
        // `len` is `n * c * s`), so the first `len` elements are initialized.
        unsafe { v.set_len(len) };
        Ok(v)
    }
}

/// Attrs shared by the forward and gradient kernels.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BnAttrs {
    /// `T`: float, half or bfloat16.
    pub dtype: DataType,
    pub epsilon: f32,
    pub training: bool,
    pub channels_first: bool,
}

impl BnAttrs {
    /// Parses `T` (float, half, bfloat16), `U` (float), `epsilon`, `is_training`, `data_format`.
    pub fn parse(node: &NodeDef) -> Result<BnAttrs, Status> {
        let dtype = type_attr(node, &[DataType::Float, DataType::Half, DataType::BFloat16])?;
        if node.has_attr("U") {
            let u = node.attr_type("U")?;
            if u != DataType::Float {
                return Err(super::common::unimplemented(node, format!("no CPU kernel for U={u}")));
            }
        }
        let format = if node.has_attr("data_format") { node.attr_string("data_format")? } else { "NHWC".into() };
        let channels_first = match format.as_str() {
            "NHWC" | "NDHWC" => false,
            "NCHW" | "NCDHW" => true,
            f => return Err(node.node_error(format!("Invalid data format: {f}"))),
        };
        let epsilon = if node.has_attr("epsilon") { node.attr_float("epsilon")? } else { 1e-4 };
        let training = !node.has_attr("is_training") || node.attr_bool("is_training")?;
        Ok(BnAttrs { dtype, epsilon, training, channels_first })
    }
}

/// Checks that `t` (input `what`) is 1-D with `depth` elements (or empty, if allowed).
pub(crate) fn check_channel_vec(
    ctx: &OpContext,
    t: &Tensor,
    what: &str,
    depth: usize,
    prefix: &str,
) -> Result<(), Status> {
    if t.dims().len() != 1 {
        return Err(ctx.error(format!("{what} must be 1-dimensional{}", dims_str(t.dims()))));
    }
    if t.dims()[0] != depth {
        return Err(ctx.error(format!(
            "{prefix}{what} must have the same number of elements as the channels of x, got {} and {depth}",
            t.dims()[0]
        )));
    }
    Ok(())
}

/// Checks that the first `t_inputs` inputs have dtype `t` and the other named ones float.
pub(crate) fn check_inputs(ctx: &OpContext, t: DataType, t_inputs: usize, names: &[&str]) -> Result<(), Status> {
    for (i, name) in names.iter().enumerate() {
        let (dt, want) = (ctx.input(i)?.dtype(), if i < t_inputs { t } else { DataType::Float });
        if dt != want {
            return Err(ctx.error(format!("{name} is {dt} but the kernel takes {want}")));
        }
    }
    Ok(())
}

/// The values of a float, half or bfloat16 tensor as f32 (borrowed when float).
pub(crate) fn load_f32(t: &Tensor) -> Result<Cow<'_, [f32]>, Status> {
    Ok(match t.storage() {
        Storage::F16(v) => Cow::Owned(v.iter().map(|x| x.to_f32()).collect()),
        Storage::BF16(v) => Cow::Owned(v.iter().map(|x| x.to_f32()).collect()),
        _ => Cow::Borrowed(t.as_slice::<f32>()?),
    })
}

/// A tensor of `dtype` (float, half or bfloat16) from f32 values, rounded to nearest.
pub(crate) fn store_f32(dtype: DataType, dims: &[usize], v: Vec<f32>) -> Result<Tensor, Status> {
    match dtype {
        DataType::Half => {
            Tensor::from_storage(dims.to_vec().into(), Storage::F16(v.iter().map(|&x| f16::from_f32(x)).collect()))
        }
        DataType::BFloat16 => {
            Tensor::from_storage(dims.to_vec().into(), Storage::BF16(v.iter().map(|&x| bf16::from_f32(x)).collect()))
        }
        _ => Tensor::new(dims.to_vec(), v),
    }
}

struct FusedBatchNorm {
    attrs: BnAttrs,
    factor: f32,
    v3: bool,
    /// `_FusedBatchNormEx`'s activation of `y`.
    act: Act,
}

pub(crate) fn fused_batch_norm_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let factor = if node.has_attr("exponential_avg_factor") { node.attr_float("exponential_avg_factor")? } else { 1.0 };
    let v3 = matches!(node.op.as_str(), "FusedBatchNormV3" | "_FusedBatchNormEx");
    Ok(Box::new(FusedBatchNorm { attrs: BnAttrs::parse(node)?, factor, v3, act: Act::parse(node)? }))
}

fn vec_tensor(v: Vec<f32>) -> Result<Tensor, Status> {
    Tensor::new(vec![v.len()], v)
}

impl OpKernel for FusedBatchNorm {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        check_inputs(ctx, self.attrs.dtype, 1, &["x", "scale", "offset", "mean", "variance"])?;
        let (x, scale, offset, mean, var) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?, ctx.input(3)?, ctx.input(4)?);
        let l = Layout::of(ctx.node(), x.dims(), self.attrs.channels_first)?;
        let c = l.channels();
        check_channel_vec(ctx, &scale, "scale", c, "")?;
        check_channel_vec(ctx, &offset, "offset", c, "")?;
        let stats_used = !self.attrs.training || self.factor != 1.0;
        if stats_used {
            let prefix =
                if self.attrs.training { "When exponential_avg_factor != 1, " } else { "When is_training=false, " };
            check_channel_vec(ctx, &mean, "mean", c, prefix)?;
            check_channel_vec(ctx, &var, "variance", c, prefix)?;
        } else {
            for (t, what) in [(&mean, "mean"), (&var, "variance")] {
                if t.dims().len() != 1 || (t.dims()[0] != 0 && t.dims()[0] != c) {
                    check_channel_vec(ctx, t, what, c, "")?;
                }
            }
        }
        let xs = load_f32(&x)?;
        let (xs, sc, of) = (&xs[..], scale.as_slice::<f32>()?, offset.as_slice::<f32>()?);
        let eps = self.attrs.epsilon;
        // An empty batch leaves `y` empty.
        let mut y = Vec::new();
        let (batch_mean, batch_var, saved_mean, saved_var) = if self.attrs.training {
            let rest = l.rest();
            if rest == 0 || xs.is_empty() {
                let nan = vec![f32::NAN; c];
                (nan.clone(), nan.clone(), nan.clone(), nan)
            } else {
                let (m, v) = super::batch_norm_moments::moments(&l, xs);
                let a = inv_scale(sc, &v, eps);
                y = self.act.normalize(&l, x.dims(), xs, [&m[..], &a[..], of])?;
                let adjust = if rest > 1 { rest as f32 / (rest - 1) as f32 } else { 1.0 };
                let (mut new_m, mut new_v) = (m.clone(), v.iter().map(|v| v * adjust).collect::<Vec<_>>());
                if self.factor != 1.0 {
                    let (mi, vi, f) = (mean.as_slice::<f32>()?, var.as_slice::<f32>()?, self.factor);
                    new_m.iter_mut().zip(mi).for_each(|(n, &o)| *n = (1.0 - f) * o + f * *n);
                    new_v.iter_mut().zip(vi).for_each(|(n, &o)| *n = (1.0 - f) * o + f * *n);
                }
                (new_m, new_v, m, v)
            }
        } else {
            let (m, v) = (mean.as_slice::<f32>()?.to_vec(), var.as_slice::<f32>()?.to_vec());
            let a = inv_scale(sc, &v, eps);
            y = self.act.normalize(&l, x.dims(), xs, [&m[..], &a[..], of])?;
            (m.clone(), v.clone(), m, v)
        };
        ctx.set_output(0, store_f32(self.attrs.dtype, x.dims(), y)?)?;
        ctx.set_output(1, vec_tensor(batch_mean)?)?;
        ctx.set_output(2, vec_tensor(batch_var)?)?;
        ctx.set_output(3, vec_tensor(saved_mean)?)?;
        ctx.set_output(4, vec_tensor(saved_var)?)?;
        if self.v3 {
            ctx.set_output(5, Tensor::scalar(0.0f32))?;
        }
        Ok(())
    }
}

/// Per channel, `scale / sqrt(variance + epsilon)`: `y = (x - mean) * that + offset`.
pub(crate) fn inv_scale(scale: &[f32], var: &[f32], eps: f32) -> Vec<f32> {
    scale.iter().zip(var).map(|(&s, &v)| s * (1.0 / (v + eps).sqrt())).collect()
}
