//! `FusedBatchNormGrad`, `FusedBatchNormGradV2`, `FusedBatchNormGradV3` (float).
//!
//! With `m` = reserve_space_1 and `v` = reserve_space_2 (training: the batch mean and biased
//! variance the forward op saved; inference: the population mean and variance),
//! `r = 1 / sqrt(v + epsilon)` and `n` elements per channel:
//! `offset_backprop = Σ dy`, `scale_backprop = r · Σ dy (x - m)`, and
//! `x_backprop = scale · r · (dy - Σdy / n - (x - m) · r² · Σ dy (x - m) / n)` in training,
//! `scale · r · dy` in inference. The last two outputs are empty, like TensorFlow's on CPU.
//! `T` half or bfloat16 computes in float.
//!
//! `_FusedBatchNormGradEx` (the remapper's form of an activation's gradient followed by
//! this one) takes the activation's incoming gradient as `y_backprop` and its output as
//! input 7 (`y`), and reads `dy` as the activation's gradient of the two on the fly,
//! without a `dy` tensor in between. When the remapper has checked that `y` is the
//! activation of the forward batch norm of this `x` (its attr `_y_from_x`), the kernel
//! recomputes each element's activation input from `x`, `scale`, the saved statistics and
//! `offset` (input 6) exactly as the forward op did, bit for bit, instead of reading `y`: the
//! two passes then read two tensors each instead of three.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use super::batch_norm::{check_channel_vec, check_inputs, inv_scale, load_f32, store_f32, BnAttrs, Layout};
use super::batch_norm_act::Act;
use super::common::dims_str;
use crate::{OpContext, OpKernel};

struct FusedBatchNormGrad {
    attrs: BnAttrs,
    /// `_FusedBatchNormGradEx`'s activation (`None`: the plain ops, no `y` input).
    act: Option<Act>,
    /// The remapper's `_y_from_x`: `y` is `act` of the forward batch norm of this `x`.
    y_from_x: bool,
}

pub(crate) fn fused_batch_norm_grad_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let act = if node.op == "_FusedBatchNormGradEx" { Some(Act::parse(node)?) } else { None };
    let y_from_x = act.is_some() && node.has_attr("_y_from_x") && node.attr_bool("_y_from_x")?;
    Ok(Box::new(FusedBatchNormGrad { attrs: BnAttrs::parse(node)?, act, y_from_x }))
}

impl OpKernel for FusedBatchNormGrad {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        check_inputs(ctx, self.attrs.dtype, 2, &["y_backprop", "x", "scale", "reserve_space_1", "reserve_space_2"])?;
        let (dy, x, scale, mean, var) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?, ctx.input(3)?, ctx.input(4)?);
        let l = Layout::of(ctx.node(), x.dims(), self.attrs.channels_first)?;
        if dy.dims() != x.dims() {
            return Err(ctx.error(format!(
                "x and y_backprop must have same shape, but x has shape {} and y_backprop has shape {}",
                dims_str(x.dims()),
                dims_str(dy.dims())
            )));
        }
        let c = l.channels();
        check_channel_vec(ctx, &scale, "scale", c, "")?;
        check_channel_vec(ctx, &mean, "reserve_space_1", c, "")?;
        check_channel_vec(ctx, &var, "reserve_space_2", c, "")?;
        let y = match self.act {
            Some(_) => {
                let y = ctx.input(7)?;
                if y.dims() != x.dims() || y.dtype() != x.dtype() {
                    return Err(ctx.error(format!(
                        "y must have the shape and type of x, but x is {} {} and y is {} {}",
                        x.dtype(),
                        dims_str(x.dims()),
                        y.dtype(),
                        dims_str(y.dims())
                    )));
                }
                Some(y)
            }
            None => None,
        };
        // Recomputing the activation from `x` gives the forward's bits only for float `y`.
        let recompute = self.y_from_x && self.attrs.dtype == DataType::Float;
        let offset = if recompute {
            let o = ctx.input(6)?;
            check_channel_vec(ctx, &o, "offset", c, "")?;
            Some(o)
        } else {
            None
        };
        let (dys, xs) = (load_f32(&dy)?, load_f32(&x)?);
        let ys = if recompute { None } else { y.as_ref().map(load_f32).transpose()? };
        let (dys, xs, sc) = (&dys[..], &xs[..], scale.as_slice::<f32>()?);
        let ys = ys.as_deref().unwrap_or(xs);
        let (m, v) = (mean.as_slice::<f32>()?, var.as_slice::<f32>()?);
        let a = if recompute { inv_scale(sc, v, self.attrs.epsilon) } else { Vec::new() };
        let o = match &offset {
            Some(o) => o.as_slice::<f32>()?,
            None => m,
        };
        let a = if recompute { &a[..] } else { m };
        let args = Args { l: &l, dims: x.dims(), g: dys, x: xs, y: ys, scale: sc, m, v, a, o };
        let (dx, scale_backprop, offset_backprop) = match (self.act, recompute) {
            (None | Some(Act::Identity), _) => backprop(&args, self.attrs, |g, _, _, _| g)?,
            (Some(Act::Relu), false) => backprop(&args, self.attrs, |g, _, y, _| Act::Relu.backprop(g, y))?,
            (Some(Act::Relu6), false) => backprop(&args, self.attrs, |g, _, y, _| Act::Relu6.backprop(g, y))?,
            // The activation's input gives its gradient's mask (`Act::backprop`).
            (Some(Act::Relu), true) => {
                backprop(&args, self.attrs, |g, x, _, [m, a, o]| Act::Relu.backprop(g, (x - m) * a + o))?
            }
            (Some(Act::Relu6), true) => {
                backprop(&args, self.attrs, |g, x, _, [m, a, o]| Act::Relu6.backprop(g, (x - m) * a + o))?
            }
        };
        ctx.set_output(0, store_f32(self.attrs.dtype, x.dims(), dx)?)?;
        ctx.set_output(1, Tensor::new(vec![c], scale_backprop)?)?;
        ctx.set_output(2, Tensor::new(vec![c], offset_backprop)?)?;
        ctx.set_output(3, Tensor::new(vec![0], Vec::<f32>::new())?)?;
        ctx.set_output(4, Tensor::new(vec![0], Vec::<f32>::new())?)
    }
}

/// What [`backprop`] reads: the incoming gradient `g`, `x`, the activation output `y` (`x`
/// again when there is none or it is recomputed), `scale`, the saved mean and variance, and
/// the forward's per-channel factor `a` and `offset` `o` (when `y` is recomputed; `m` again
/// otherwise).
struct Args<'a> {
    l: &'a Layout,
    dims: &'a [usize],
    g: &'a [f32],
    x: &'a [f32],
    y: &'a [f32],
    scale: &'a [f32],
    m: &'a [f32],
    v: &'a [f32],
    a: &'a [f32],
    o: &'a [f32],
}

/// `(x_backprop, scale_backprop, offset_backprop)`.
type Grads = (Vec<f32>, Vec<f32>, Vec<f32>);

/// [`Grads`] with `dy = d(g, x, y, [m, a, o])` at every element.
fn backprop(
    a: &Args,
    attrs: BnAttrs,
    d: impl Fn(f32, f32, f32, [f32; 3]) -> f32 + Sync + Copy,
) -> Result<Grads, Status> {
    let (l, c) = (a.l, a.l.channels());
    let r: Vec<f32> = a.v.iter().map(|&v| 1.0 / (v + attrs.epsilon).sqrt()).collect();
    let [sum_dy, sum_dy_xc] = l.sums([a.g, a.x, a.y], [a.m, a.a, a.o], |g, x, y, [m, fa, o]| {
        let g = d(g, x, y, [m, fa, o]);
        [g, g * (x - m)]
    });
    let offset_backprop: Vec<f32> = sum_dy.iter().map(|&s| s as f32).collect();
    let scale_backprop: Vec<f32> = sum_dy_xc.iter().zip(&r).map(|(&s, &r)| s as f32 * r).collect();
    let k1: Vec<f32> = a.scale.iter().zip(&r).map(|(&s, &r)| s * r).collect();
    let dx = if attrs.training {
        let inv_n = if l.rest() == 0 { 0.0 } else { 1.0 / l.rest() as f64 };
        let k2: Vec<f32> = (0..c).map(|j| -(k1[j] * r[j] * r[j]) * (sum_dy_xc[j] * inv_n) as f32).collect();
        let mean_dy: Vec<f32> = sum_dy.iter().map(|&s| (s * inv_n) as f32).collect();
        let p = [&k1[..], &mean_dy[..], &k2[..], a.m, a.a, a.o];
        l.map(a.dims, [a.g, a.x, a.y], p, |g, x, y, [k, md, b, m, fa, o]| {
            k * (d(g, x, y, [m, fa, o]) - md) + b * (x - m)
        })?
    } else {
        l.map(a.dims, [a.g, a.x, a.y], [&k1[..], a.m, a.a, a.o], |g, x, y, [k, m, fa, o]| d(g, x, y, [m, fa, o]) * k)?
    };
    Ok((dx, scale_backprop, offset_backprop))
}
