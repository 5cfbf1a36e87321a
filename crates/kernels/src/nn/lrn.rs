//! LRN (`tf.nn.local_response_normalization`) and its gradient LRNGrad, over the last
//! (depth) dimension of a 4-D input:
//! `out[d] = x[d] / (bias + alpha * sum_{|d'-d| <= r} x[d']^2)^beta`
//! (alpha is not divided by the window size). Float, half and bfloat16; half and bfloat16
//! compute in float.

use ferroflow_core::half::{bf16, f16};
use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};
use rayon::prelude::*;

use crate::array::util::{collect_vec, copy_vec};
use crate::{KernelRegistry, OpContext, OpKernel};

#[derive(Clone, Copy)]
struct Params {
    radius: usize,
    bias: f32,
    alpha: f32,
    beta: f32,
}

struct Lrn {
    p: Params,
    grad: bool,
}

fn make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let get = |name: &str, default: f32| -> Result<f32, Status> {
        if n.has_attr(name) {
            n.attr_float(name)
        } else {
            Ok(default)
        }
    };
    let radius = if n.has_attr("depth_radius") { n.attr_int("depth_radius")? } else { 5 };
    if !(0..=i32::MAX as i64).contains(&radius) {
        return Err(n.node_error(format!("depth_radius = {radius} must be a non-negative int32")));
    }
    let p =
        Params { radius: radius as usize, bias: get("bias", 1.0)?, alpha: get("alpha", 1.0)?, beta: get("beta", 0.5)? };
    Ok(Box::new(Lrn { p, grad: n.op == "LRNGrad" }))
}

/// `bias + alpha * (sum of squares over the window of d)` for every d of a row.
fn norms(row: &[f32], p: Params, out: &mut [f32]) {
    let depth = row.len();
    for (d, o) in out.iter_mut().enumerate() {
        let lo = d.saturating_sub(p.radius);
        let hi = (d + p.radius + 1).min(depth);
        let sq: f32 = row[lo..hi].iter().map(|v| v * v).sum();
        *o = p.bias + p.alpha * sq;
    }
}

fn lrn_rows(x: &[f32], depth: usize, p: Params) -> Result<Vec<f32>, Status> {
    let mut out = ferroflow_core::alloc::zeroed::<f32>(&[x.len()])?;
    out.par_chunks_mut(depth).zip(x.par_chunks(depth)).for_each(|(o, row)| {
        norms(row, p, o);
        for (v, &xv) in o.iter_mut().zip(row) {
            *v = xv * v.powf(-p.beta);
        }
    });
    Ok(out)
}

/// d(loss)/dx from d(loss)/d(out): `dx[k] = sum_j dy[j] * (delta_jk * N_j^-beta -
/// 2 alpha beta x[k] out[j] / N_j)` over the windows j that contain k.
fn lrn_grad_rows(dy: &[f32], x: &[f32], y: &[f32], depth: usize, p: Params) -> Result<Vec<f32>, Status> {
    let mut dx = ferroflow_core::alloc::zeroed::<f32>(&[x.len()])?;
    dx.par_chunks_mut(depth).enumerate().for_each(|(r, o)| {
        let (xr, yr, gr) = (&x[r * depth..][..depth], &y[r * depth..][..depth], &dy[r * depth..][..depth]);
        let mut n = vec![0f32; depth];
        norms(xr, p, &mut n);
        for j in 0..depth {
            let lo = j.saturating_sub(p.radius);
            let hi = (j + p.radius + 1).min(depth);
            let common = -2.0 * p.alpha * p.beta * yr[j] / n[j] * gr[j];
            for k in lo..hi {
                o[k] += common * xr[k];
            }
            o[j] += n[j].powf(-p.beta) * gr[j];
        }
    });
    Ok(dx)
}

fn to_f32(t: &Tensor) -> Result<Vec<f32>, Status> {
    Ok(match t.dtype() {
        DataType::Float => copy_vec(t)?,
        DataType::Half => collect_vec(t.dims(), t.as_slice::<f16>()?.iter().map(|v| v.to_f32()))?,
        DataType::BFloat16 => collect_vec(t.dims(), t.as_slice::<bf16>()?.iter().map(|v| v.to_f32()))?,
        d => return Err(Status::invalid_argument(format!("LRN is not defined for {d} tensors"))),
    })
}

fn from_f32(dtype: DataType, shape: &[usize], v: Vec<f32>) -> Result<Tensor, Status> {
    match dtype {
        DataType::Half => Tensor::new(shape.to_vec(), collect_vec(shape, v.into_iter().map(f16::from_f32))?),
        DataType::BFloat16 => Tensor::new(shape.to_vec(), collect_vec(shape, v.into_iter().map(bf16::from_f32))?),
        _ => Tensor::new(shape.to_vec(), v),
    }
}

impl OpKernel for Lrn {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = ctx.input(if self.grad { 1 } else { 0 })?;
        if x.rank() != 4 {
            return Err(ctx.error(format!("input must be 4-dimensional, got shape {}", x.shape())));
        }
        let depth = x.dims()[3];
        let xs = to_f32(&x).map_err(|e| ctx.error(e.message))?;
        let out = if self.grad {
            let dy = ctx.input(0)?;
            let y = ctx.input(2)?;
            if dy.shape() != x.shape() || y.shape() != x.shape() {
                return Err(ctx.error(format!(
                    "input_grads, input_image and output_image must have the same shape, got {}, {} and {}",
                    dy.shape(),
                    x.shape(),
                    y.shape()
                )));
            }
            let (dy, y) =
                (to_f32(&dy).map_err(|e| ctx.error(e.message))?, to_f32(&y).map_err(|e| ctx.error(e.message))?);
            lrn_grad_rows(&dy, &xs, &y, depth, self.p)?
        } else {
            lrn_rows(&xs, depth, self.p)?
        };
        ctx.set_output(0, from_f32(x.dtype(), x.dims(), out)?)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("LRN", make);
    r.add("LRNGrad", make);
}
