//! `SoftmaxCrossEntropyWithLogits` (dense labels, 2-D after broadcasting) and
//! `SparseSoftmaxCrossEntropyWithLogits` (class-index labels).

use crate::dispatch::dispatch;
use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};
use rayon::prelude::*;

use super::common::float_kernel;
use super::common::float_type;
use super::common::{check_dtype, PAR_MIN};
use super::softmax::row_max;
use crate::array::util::copy_vec;
use crate::real::Real;
use crate::{OpContext, OpKernel};

/// In place on a row of logits: the row becomes `exp(x - max)`; returns (shift = max,
/// sum of the exponentials).
#[inline]
fn exp_shifted<T: Real>(row: &mut [T]) -> (T, T) {
    let m = row_max(row);
    let mut sum = T::ZERO;
    for v in row.iter_mut() {
        *v = (*v - m).exp();
        sum += *v;
    }
    (m, sum)
}

/// Runs `f(row, backprop_row, loss)` over rows, in parallel for large inputs.
fn for_rows<T: Real>(bp: &mut [T], loss: &mut [T], c: usize, f: impl Fn(usize, &mut [T], &mut T) + Sync) {
    if c == 0 {
        loss.iter_mut().enumerate().for_each(|(i, l)| f(i, &mut [], l));
    } else if bp.len() >= PAR_MIN && rayon::current_num_threads() > 1 {
        bp.par_chunks_mut(c).zip(loss.par_iter_mut()).enumerate().for_each(|(i, (r, l))| f(i, r, l));
    } else {
        bp.chunks_mut(c).zip(loss.iter_mut()).enumerate().for_each(|(i, (r, l))| f(i, r, l));
    }
}

struct Xent {
    dtype: DataType,
}

pub(crate) fn xent_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(Xent { dtype: float_type(node)? }))
}

/// Element strides (row, col) of a rank ≤ 2 operand broadcast to [b, c].
fn bstrides(d: &[usize]) -> (usize, usize) {
    let (r, c) = match d.len() {
        0 => (1, 1),
        1 => (1, d[0]),
        _ => (d[0], d[1]),
    };
    (if r == 1 { 0 } else { c }, if c == 1 { 0 } else { 1 })
}

impl Xent {
    fn shape(&self, ctx: &OpContext, l: &[usize], y: &[usize]) -> Result<Vec<usize>, Status> {
        let not_matrix =
            || ctx.error("logits and labels must be either 2-dimensional, or broadcasted to be 2-dimensional");
        if l == y {
            return if l.len() == 2 { Ok(l.to_vec()) } else { Err(not_matrix()) };
        }
        let Some(out) = crate::math::bcast::broadcast_shape(l, y) else {
            return Err(ctx.error(format!(
                "logits and labels must be broadcastable: logits_size={} labels_size={}",
                super::common::dims_str(l),
                super::common::dims_str(y)
            )));
        };
        if out.len() != 2 {
            return Err(not_matrix());
        }
        Ok(out)
    }

    fn run<T: Real>(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let (logits, labels) = (ctx.input(0)?, ctx.input(1)?);
        let shape = self.shape(ctx, logits.dims(), labels.dims())?;
        let (b, c) = (shape[0], shape[1]);
        let (lx, ly) = (logits.as_slice::<T>()?, labels.as_slice::<T>()?);
        let ((lrs, lcs), (yrs, ycs)) = (bstrides(logits.dims()), bstrides(labels.dims()));
        let mut bp = ferroflow_core::alloc::zeroed::<T>(&[b, c])?;
        let mut loss = ferroflow_core::alloc::zeroed::<T>(&[b])?;
        for_rows(&mut bp, &mut loss, c, |i, row, loss| {
            for (j, v) in row.iter_mut().enumerate() {
                *v = lx[i * lrs + j * lcs];
            }
            let (m, sum) = exp_shifted(row);
            let log_sum = sum.ln();
            let mut l = T::ZERO;
            for (j, v) in row.iter_mut().enumerate() {
                let y = ly[i * yrs + j * ycs];
                let shifted = lx[i * lrs + j * lcs] - m;
                l += y * (log_sum - shifted);
                *v = *v / sum - y;
            }
            *loss = l;
        });
        ctx.set_output(0, Tensor::new(vec![b], loss)?)?;
        ctx.set_output(1, Tensor::new(shape, bp)?)
    }
}

float_kernel!(Xent, [(0, "features"), (1, "labels")]);

struct SparseXent {
    dtype: DataType,
    tlabels: DataType,
}

pub(crate) fn sparse_xent_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let tlabels = node.attr_type("Tlabels")?;
    if !matches!(tlabels, DataType::Int32 | DataType::Int64) {
        return Err(node.node_error(format!("Tlabels must be int32 or int64, got {tlabels}")));
    }
    Ok(Box::new(SparseXent { dtype: float_type(node)?, tlabels }))
}

impl SparseXent {
    fn run<T: Real>(&self, ctx: &mut OpContext, labels: &[i64]) -> Result<(), Status> {
        let logits = ctx.input(0)?;
        let (b, c) = (logits.dims()[0], logits.dims()[1]);
        if let Some(&bad) = labels.iter().find(|&&l| l < 0 || l >= c as i64) {
            let all: Vec<String> = labels.iter().map(|l| l.to_string()).collect();
            return Err(ctx.error(format!(
                "Received a label value of {bad} which is outside the valid range of [0, {c}).  Label values: {}",
                all.join(" ")
            )));
        }
        let lx = logits.as_slice::<T>()?;
        let mut bp = copy_vec::<T>(&logits)?;
        let mut loss = ferroflow_core::alloc::zeroed::<T>(&[b])?;
        for_rows(&mut bp, &mut loss, c, |i, row, loss| {
            let label = labels[i] as usize;
            let (m, sum) = exp_shifted(row);
            row.iter_mut().for_each(|v| *v = *v / sum);
            row[label] -= T::ONE;
            *loss = sum.ln() - (lx[i * c + label] - m);
        });
        ctx.set_output(0, Tensor::new(vec![b], loss)?)?;
        ctx.set_output(1, Tensor::new(vec![b, c], bp)?)
    }
}

impl OpKernel for SparseXent {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let (logits, labels) = (ctx.input(0)?, ctx.input(1)?);
        check_dtype(ctx.node(), "features", logits.dtype(), self.dtype)?;
        if labels.dtype() != self.tlabels {
            return Err(ctx.error(format!("labels are {} but attr Tlabels is {}", labels.dtype(), self.tlabels)));
        }
        if logits.rank() != 2 {
            return Err(ctx.error(format!("logits must be 2-D, but got shape {}", logits.shape())));
        }
        if labels.rank() != 1 {
            return Err(ctx.error(format!("labels must be 1-D, but got shape {}", labels.shape())));
        }
        if logits.dims()[0] != labels.dims()[0] {
            return Err(ctx.error(format!(
                "logits and labels must have the same first dimension, got logits shape {} and labels shape {}",
                logits.shape(),
                labels.shape()
            )));
        }
        if logits.dims()[1] == 0 && logits.dims()[0] > 0 {
            return Err(ctx.error(format!("Must have at least one class, but got logits shape {}", logits.shape())));
        }
        let labels: Vec<i64> = match self.tlabels {
            DataType::Int32 => labels.as_slice::<i32>()?.iter().map(|&l| l as i64).collect(),
            _ => labels.as_slice::<i64>()?.to_vec(),
        };
        dispatch!(self.dtype, ctx, [f32, f64], |T| self.run::<T>(ctx, &labels))
    }
}
