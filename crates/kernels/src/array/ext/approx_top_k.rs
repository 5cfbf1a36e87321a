//! `ApproxTopK` (`tf.math.approx_max_k`, `approx_min_k`): on a CPU TensorFlow's answer is
//! the exact top `k` along `reduction_dimension`, so this computes that: the `k` largest
//! (smallest with `is_max_k=false`) entries of every line along the dimension, best first,
//! ties by the lower index, with int32 indices. `recall_target`,
//! `reduction_input_size_override` and `aggregate_to_topk` only tune accelerators.

use std::cmp::Ordering;

use ferroflow_core::{half, DataType, NodeAttrs, Status, Tensor};

use super::util::{kernel_dtype, norm_axis};
use crate::array::util::{check_alloc, product};
use crate::dispatch::dispatch;
use crate::math::elem::Num;
use crate::{KernelRegistry, OpContext, OpKernel};

struct ApproxTopK {
    k: usize,
    axis: i64,
    largest: bool,
}

impl ApproxTopK {
    fn run<T: Num>(&self, ctx: &mut OpContext, x: &Tensor, axis: usize) -> Result<(), Status> {
        let dims = x.dims();
        let (outer, n, inner) = (product(&dims[..axis]), dims[axis], product(&dims[axis + 1..]));
        let k = self.k;
        let xs = x.as_slice::<T>()?;
        let mut od = dims.to_vec();
        od[axis] = k;
        let mut vals = ferroflow_core::alloc::zeroed::<T>(&od)?;
        let mut idx = ferroflow_core::alloc::zeroed::<i32>(&od)?;
        let mut line: Vec<u32> = Vec::with_capacity(n);
        let better = |a: T, b: T| -> Ordering {
            // NaN counts as the largest value (sorts first for max, last for min).
            let o = match (a.is_nan(), b.is_nan()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                _ => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
            };
            if self.largest {
                o.reverse()
            } else {
                o
            }
        };
        for o in 0..outer {
            for i in 0..inner {
                let at = |j: usize| xs[(o * n + j) * inner + i];
                line.clear();
                line.extend(0..n as u32);
                line.sort_by(|&a, &b| better(at(a as usize), at(b as usize)).then(a.cmp(&b)));
                for (r, &j) in line.iter().take(k).enumerate() {
                    let dst = (o * k + r) * inner + i;
                    vals[dst] = at(j as usize);
                    idx[dst] = j as i32;
                }
            }
        }
        ctx.set_output(0, Tensor::new(od.clone(), vals)?)?;
        ctx.set_output(1, Tensor::new(od, idx)?)
    }
}

impl OpKernel for ApproxTopK {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = ctx.input(0)?;
        let axis = norm_axis(self.axis, x.rank()).ok_or_else(|| {
            ctx.error(format!("reduction_dimension {} is out of range for an input of rank {}", self.axis, x.rank()))
        })?;
        let n = x.dims()[axis];
        if self.k > n {
            return Err(ctx.error(format!(
                "k ({}) must be at most the size of the reduction dimension ({n}) of input shape {}",
                self.k,
                x.shape()
            )));
        }
        let mut od = x.dims().to_vec();
        od[axis] = self.k;
        check_alloc(&od, DataType::Float).map_err(|e| ctx.error_with(e))?;
        dispatch!(x.dtype(), ctx, [f32, half::f16, half::bf16], |T| self.run::<T>(ctx, &x, axis))
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("ApproxTopK", |n| {
        use DataType::*;
        kernel_dtype(n, "T", &[Float, Half, BFloat16])?;
        let k = n.attr_int("k")?;
        Ok(Box::new(ApproxTopK {
            k: usize::try_from(k)
                .map_err(|_| Status::invalid_argument(format!("ApproxTopK: k must be >= 0, got {k}")))?,
            axis: n.attr_int("reduction_dimension")?,
            largest: n.attr_bool("is_max_k")?,
        }))
    });
}
