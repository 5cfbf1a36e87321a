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
//! without a `dy` tensor in between.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{Status, Tensor};

use super::batch_norm::{check_channel_vec, check_inputs, load_f32, store_f32, BnAttrs, Layout};
use super::batch_norm_act::Act;
use super::common::dims_str;
use crate::{OpContext, OpKernel};

struct FusedBatchNormGrad {
    attrs: BnAttrs,
    /// `_FusedBatchNormGradEx`'s activation (`None`: the plain ops, no `y` input).
    act: Option<Act>,
}

pub(crate) fn fused_batch_norm_grad_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let act = if node.op == "_FusedBatchNormGradEx" { Some(Act::parse(node)?) } else { None };
    Ok(Box::new(FusedBatchNormGrad { attrs: BnAttrs::parse(node)?, act }))
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
        let (dys, xs) = (load_f32(&dy)?, load_f32(&x)?);
        let ys = y.as_ref().map(load_f32).transpose()?;
        let (dys, xs, sc) = (&dys[..], &xs[..], scale.as_slice::<f32>()?);
        let ys = ys.as_deref().unwrap_or(xs);
        let (m, v) = (mean.as_slice::<f32>()?, var.as_slice::<f32>()?);
        let args = Args { l: &l, dims: x.dims(), g: dys, x: xs, y: ys, scale: sc, m, v };
        let (dx, scale_backprop, offset_backprop) = match self.act {
            None | Some(Act::Identity) => backprop(&args, self.attrs, |g, _| g)?,
            Some(Act::Relu) => backprop(&args, self.attrs, |g, y| Act::Relu.backprop(g, y))?,
            Some(Act::Relu6) => backprop(&args, self.attrs, |g, y| Act::Relu6.backprop(g, y))?,
        };
        ctx.set_output(0, store_f32(self.attrs.dtype, x.dims(), dx)?)?;
        ctx.set_output(1, Tensor::new(vec![c], scale_backprop)?)?;
        ctx.set_output(2, Tensor::new(vec![c], offset_backprop)?)?;
        ctx.set_output(3, Tensor::new(vec![0], Vec::<f32>::new())?)?;
        ctx.set_output(4, Tensor::new(vec![0], Vec::<f32>::new())?)
    }
}

/// What [`backprop`] reads: the incoming gradient `g`, `x`, the activation output `y` (`x`
/// again when there is none), `scale` and the saved mean and variance.
struct Args<'a> {
    l: &'a Layout,
    dims: &'a [usize],
    g: &'a [f32],
    x: &'a [f32],
    y: &'a [f32],
    scale: &'a [f32],
    m: &'a [f32],
    v: &'a [f32],
}

/// `(x_backprop, scale_backprop, offset_backprop)`.
type Grads = (Vec<f32>, Vec<f32>, Vec<f32>);

/// [`Grads`] with `dy = d(g, y)` at every element.
fn backprop(a: &Args, attrs: BnAttrs, d: impl Fn(f32, f32) -> f32 + Sync + Copy) -> Result<Grads, Status> {
    let (l, c) = (a.l, a.l.channels());
    let r: Vec<f32> = a.v.iter().map(|&v| 1.0 / (v + attrs.epsilon).sqrt()).collect();
    let [sum_dy, sum_dy_xc] = l.sums([a.g, a.x, a.y], a.m, |g, x, y, m| {
        let g = d(g, y);
        [g, g * (x - m)]
    });
    let offset_backprop: Vec<f32> = sum_dy.iter().map(|&s| s as f32).collect();
    let scale_backprop: Vec<f32> = sum_dy_xc.iter().zip(&r).map(|(&s, &r)| s as f32 * r).collect();
    let k1: Vec<f32> = a.scale.iter().zip(&r).map(|(&s, &r)| s * r).collect();
    let dx = if attrs.training {
        let inv_n = if l.rest() == 0 { 0.0 } else { 1.0 / l.rest() as f64 };
        let k2: Vec<f32> = (0..c).map(|j| -(k1[j] * r[j] * r[j]) * (sum_dy_xc[j] * inv_n) as f32).collect();
        let mean_dy: Vec<f32> = sum_dy.iter().map(|&s| (s * inv_n) as f32).collect();
        l.map(a.dims, [a.g, a.x, a.y], [&k1[..], &mean_dy[..], &k2[..], a.m], |g, x, y, [k, md, b, m]| {
            k * (d(g, y) - md) + b * (x - m)
        })?
    } else {
        l.map(a.dims, [a.g, a.x, a.y], [&k1[..]], |g, _, y, [k]| d(g, y) * k)?
    };
    Ok((dx, scale_backprop, offset_backprop))
}
