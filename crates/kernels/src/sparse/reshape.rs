//! `SparseReshape`: the indices of a sparse tensor under a new dense shape (one dimension
//! may be -1), computed through the row-major linear index.

use ferroflow_core::{Shape, Status, Tensor};

use super::util::{indices_matrix, shape_vector};
use crate::array::util::check_alloc;
use crate::{KernelRegistry, OpContext, OpKernel};

struct SparseReshape;

/// The product of `dims`, None past i64.
fn size(dims: &[i64]) -> Option<i64> {
    dims.iter().try_fold(1i64, |a, &d| a.checked_mul(d))
}

impl OpKernel for SparseReshape {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let idx = indices_matrix(ctx, "Input indices", &ctx.input(0)?)?;
        let shape = shape_vector(ctx, "Input shape", &ctx.input(1)?)?;
        let target = shape_vector(ctx, "Target shape", &ctx.input(2)?)?;
        if idx.rank != shape.len() {
            return Err(ctx.error(format!(
                "Input tensor rank must match input shape length: {} vs. {}",
                idx.rank,
                shape.len()
            )));
        }
        if let Some(d) = shape.iter().find(|&&d| d < 0) {
            return Err(ctx.error(format!("Input shape has a negative dimension: {d}")));
        }
        let dense = size(&shape).ok_or_else(|| ctx.error("Input shape has more than 2^63 elements"))?;
        let mut unknown = None;
        let mut product = 1i64;
        for (d, &v) in target.iter().enumerate() {
            if v == -1 {
                if let Some(u) = unknown {
                    return Err(ctx.error(format!("only one output dimension may be -1, not both {u} and {d}")));
                }
                unknown = Some(d);
            } else if v < 0 {
                return Err(ctx.error(format!("size {d} must be non-negative, not {v}")));
            } else {
                product =
                    product.checked_mul(v).ok_or_else(|| ctx.error("Target shape has more than 2^63 elements"))?;
            }
        }
        let mut out_shape = target.clone();
        if let Some(u) = unknown {
            if product <= 0 || dense % product != 0 {
                return Err(ctx.error(format!(
                    "Input to reshape is a SparseTensor with {dense} dense values, but the requested shape requires \
                     a multiple of {product}. inputShape={shape:?} outputShape={target:?}"
                )));
            }
            out_shape[u] = dense / product;
        } else if product != dense {
            return Err(ctx.error(format!(
                "Input to reshape is a tensor with {dense} dense values, but the requested shape has {product}. \
                 inputShape={shape:?} outputShape={target:?}"
            )));
        }
        let r_out = out_shape.len();
        check_alloc(&[idx.n, r_out], ferroflow_core::DataType::Int64).map_err(|e| ctx.error_with(e))?;
        let mut out = ferroflow_core::alloc::with_capacity::<i64>(&[idx.n, r_out])?;
        let mut row = vec![0i64; r_out];
        for i in 0..idx.n {
            let mut lin = 0i64;
            for (k, &x) in idx.row(i).iter().enumerate() {
                if x < 0 || x >= shape[k] {
                    return Err(ctx.error(format!("Input indices[{i}, {k}] = {x} is out of bounds of shape {shape:?}")));
                }
                lin = lin * shape[k] + x;
            }
            for k in (0..r_out).rev() {
                let d = out_shape[k].max(1);
                row[k] = lin % d;
                lin /= d;
            }
            out.extend_from_slice(&row);
        }
        ctx.set_output(0, Tensor::new(Shape::new(vec![idx.n, r_out]), out)?)?;
        ctx.set_output(1, Tensor::new(Shape::new(vec![r_out]), out_shape)?)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("SparseReshape", |_| Ok(Box::new(SparseReshape)));
}
