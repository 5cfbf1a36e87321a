//! `FusedBatchNormGrad`, `FusedBatchNormGradV2`, `FusedBatchNormGradV3` (float).
//!
//! With `m` = reserve_space_1 and `v` = reserve_space_2 (training: the batch mean and biased
//! variance the forward op saved; inference: the population mean and variance),
//! `r = 1 / sqrt(v + epsilon)` and `n` elements per channel:
//! `offset_backprop = Σ dy`, `scale_backprop = r · Σ dy (x - m)`, and
//! `x_backprop = scale · r · (dy - Σdy / n - (x - m) · r² · Σ dy (x - m) / n)` in training,
//! `scale · r · dy` in inference. The last two outputs are empty, like TensorFlow's on CPU.
//! `T` half or bfloat16 computes in float.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{Status, Tensor};

use super::batch_norm::{check_channel_vec, check_inputs, load_f32, store_f32, BnAttrs, Layout};
use super::common::dims_str;
use crate::{OpContext, OpKernel};

struct FusedBatchNormGrad {
    attrs: BnAttrs,
}

pub(crate) fn fused_batch_norm_grad_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(FusedBatchNormGrad { attrs: BnAttrs::parse(node)? }))
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
        let (dys, xs) = (load_f32(&dy)?, load_f32(&x)?);
        let (dys, xs, sc) = (&dys[..], &xs[..], scale.as_slice::<f32>()?);
        let (m, v) = (mean.as_slice::<f32>()?, var.as_slice::<f32>()?);
        let eps = self.attrs.epsilon;
        let r: Vec<f32> = v.iter().map(|&v| 1.0 / (v + eps).sqrt()).collect();
        let [sum_dy, sum_dy_xc] = l.sums(dys, xs, m, |g, x, m| [g, g * (x - m)]);
        let offset_backprop: Vec<f32> = sum_dy.iter().map(|&s| s as f32).collect();
        let scale_backprop: Vec<f32> = sum_dy_xc.iter().zip(&r).map(|(&s, &r)| s as f32 * r).collect();
        let k1: Vec<f32> = sc.iter().zip(&r).map(|(&s, &r)| s * r).collect();
        let dx = if self.attrs.training {
            // dx = k1 * (dy - mean(dy)) + k2 * (x - m)
            let inv_n = if l.rest() == 0 { 0.0 } else { 1.0 / l.rest() as f64 };
            let k2: Vec<f32> = (0..c).map(|j| -(k1[j] * r[j] * r[j]) * (sum_dy_xc[j] * inv_n) as f32).collect();
            let mean_dy: Vec<f32> = sum_dy.iter().map(|&s| (s * inv_n) as f32).collect();
            l.map(x.dims(), dys, xs, [&k1[..], &mean_dy[..], &k2[..], m], |g, x, [a, md, b, m]| {
                a * (g - md) + b * (x - m)
            })?
        } else {
            l.map(x.dims(), dys, xs, [&k1[..]], |g, _, [a]| g * a)?
        };
        ctx.set_output(0, store_f32(self.attrs.dtype, x.dims(), dx)?)?;
        ctx.set_output(1, Tensor::new(vec![c], scale_backprop)?)?;
        ctx.set_output(2, Tensor::new(vec![c], offset_backprop)?)?;
        ctx.set_output(3, Tensor::new(vec![0], Vec::<f32>::new())?)?;
        ctx.set_output(4, Tensor::new(vec![0], Vec::<f32>::new())?)
    }
}
