//! `L2Loss`: `sum(t²) / 2` as a scalar (float, double, half, bfloat16; the narrow types
//! accumulate in float32), and `ApproximateEqual`: `|x - y| < tolerance` for float or double
//! operands of one shape.

use ferroflow_core::half::{bf16, f16};
use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor, TensorType};

use super::bcast::{chunk_len, PAR_THRESHOLD};
use super::common::{kernel_type, typed};
use super::elem::Num;
use crate::{KernelRegistry, OpContext, OpKernel};

use DataType::{BFloat16, Double, Float, Half};

struct L2Loss {
    ty: DataType,
}

/// Σ v² / 2 of values widened by `w`, in chunks summed in parallel when large.
fn half_sum_sq<T: Copy + Sync, A: Num + std::iter::Sum>(v: &[T], w: impl Fn(T) -> A + Sync) -> A {
    let part = |c: &[T]| c.iter().map(|&x| w(x).mul(w(x))).sum::<A>();
    let s = if v.len() <= PAR_THRESHOLD {
        part(v)
    } else {
        use rayon::prelude::*;
        v.par_chunks(chunk_len(v.len())).map(part).collect::<Vec<A>>().into_iter().sum()
    };
    s.div(A::ONE.add(A::ONE))
}

impl OpKernel for L2Loss {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let t = ctx.input(0)?;
        let out = match self.ty {
            Half => Tensor::scalar(f16::from_f32(half_sum_sq(typed::<f16>(ctx, &t)?, f16::to_f32))),
            BFloat16 => Tensor::scalar(bf16::from_f32(half_sum_sq(typed::<bf16>(ctx, &t)?, bf16::to_f32))),
            Double => Tensor::scalar(half_sum_sq(typed::<f64>(ctx, &t)?, |x| x)),
            _ => Tensor::scalar(half_sum_sq(typed::<f32>(ctx, &t)?, |x| x)),
        };
        ctx.set_output(0, out)
    }
}

struct ApproximateEqual {
    ty: DataType,
    tolerance: f32,
}

fn approx<T: TensorType + Num>(ctx: &mut OpContext, tol: T) -> Result<(), Status> {
    let (x, y) = (ctx.input(0)?, ctx.input(1)?);
    if x.shape() != y.shape() {
        return Err(ctx.error(format!(
            "x and y must be of the same shape. x shape: {}. y shape: {}",
            x.shape(),
            y.shape()
        )));
    }
    let (a, b) = (typed::<T>(ctx, &x)?, typed::<T>(ctx, &y)?);
    let out: Vec<bool> = a
        .iter()
        .zip(b)
        .map(|(&p, &q)| {
            let d = if p < q { q.sub(p) } else { p.sub(q) };
            d < tol
        })
        .collect();
    ctx.set_output(0, Tensor::new(x.shape().clone(), out)?)
}

impl OpKernel for ApproximateEqual {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let t = self.tolerance as f64;
        match self.ty {
            Float => approx::<f32>(ctx, t as f32),
            _ => approx::<f64>(ctx, t),
        }
    }
}

fn make_l2(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(L2Loss { ty: kernel_type(n, "T", &[Float, Double, Half, BFloat16])? }))
}

fn make_approx(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    // TensorFlow registers the CPU kernel for float and double only.
    let ty = kernel_type(n, "T", &[Float, Double])?;
    let tolerance = if n.has_attr("tolerance") { n.attr_float("tolerance")? } else { 1e-5 };
    Ok(Box::new(ApproximateEqual { ty, tolerance }))
}

/// Registers the kernels.
pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("L2Loss", make_l2);
    r.add("ApproximateEqual", make_approx);
}
