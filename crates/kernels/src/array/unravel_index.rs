//! `UnravelIndex` (`tf.unravel_index`): flat indices into a row-major array of `dims` as
//! coordinates, one row per dimension (a vector for a scalar index).

use ferroflow_core::{DataType, Tensor};

use super::util::index_vec;
use crate::KernelRegistry;

op_kernel! {
    struct UnravelIndex;
    fn compute(&self, ctx) {
        let (idx_t, dims_t) = (ctx.input(0)?, ctx.input(1)?);
        if idx_t.rank() > 1 {
            return Err(ctx.error(format!("The indices can only be scalar or vector, got {}", idx_t.shape())));
        }
        if dims_t.rank() != 1 {
            return Err(ctx.error(format!("The indices can only be 1-D, got {}", dims_t.shape())));
        }
        let idx = index_vec(&idx_t)?;
        let dims = index_vec(&dims_t)?;
        if dims.iter().any(|&d| d <= 0) {
            return Err(ctx.error("Input dims must be > 0"));
        }
        let total = dims.iter().try_fold(1i64, |a, &d| a.checked_mul(d)).unwrap_or(i64::MAX);
        if idx.iter().any(|&i| i < 0 || i >= total) {
            return Err(ctx.error("index is out of bound as with dims"));
        }
        let (r, n) = (dims.len(), idx.len());
        let mut out = ferroflow_core::alloc::zeroed::<i64>(&[r, n])?;
        for (j, &i) in idx.iter().enumerate() {
            let mut rest = i;
            for k in (0..r).rev() {
                out[k * n + j] = rest % dims[k];
                rest /= dims[k];
            }
        }
        let shape: Vec<usize> = if idx_t.rank() == 0 { vec![r] } else { vec![r, n] };
        let t = if idx_t.dtype() == DataType::Int32 {
            Tensor::new(shape, out.into_iter().map(|v| v as i32).collect::<Vec<_>>())?
        } else {
            Tensor::new(shape, out)?
        };
        ctx.set_output(0, t)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("UnravelIndex", |_| Ok(Box::new(UnravelIndex)));
}
