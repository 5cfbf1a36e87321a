//! Tile and BroadcastTo: both are strided gathers with zero strides.

use ferroflow_core::{Shape, Status, Tensor};

use super::strided::{strided_gather, strides_of};
use super::util::{check_node_alloc, output_shape, vector_input, FnKernel};
use crate::{KernelRegistry, OpContext};

fn tile(ctx: &mut OpContext) -> Result<(), Status> {
    let x = ctx.input(0)?;
    let m = vector_input(ctx, 1, |m| format!("Expected multiples argument to be a vector, got shape {}", m.shape()))?;
    if m.len() != x.rank() {
        return Err(ctx.error(format!(
            "Expected multiples argument to be a vector of length {} but got length {}",
            x.rank(),
            m.len()
        )));
    }
    if let Some(i) = m.iter().position(|&v| v < 0) {
        return Err(ctx.error(format!("Expected multiples[{i}] >= 0, but got {}", m[i])));
    }
    let out_dims: Option<Vec<i64>> = x.dims().iter().zip(&m).map(|(&d, &k)| (d as i64).checked_mul(k)).collect();
    let out_dims = out_dims.ok_or_else(|| ctx.error(format!("tiling {} by {m:?} overflows", x.shape())))?;
    let out_shape = Shape::from_i64(&out_dims).map_err(|e| ctx.error(e.message))?;
    check_node_alloc(ctx, out_shape.dims(), x.dtype())?;
    if m.iter().all(|&k| k == 1) {
        return ctx.set_output(0, x);
    }
    let st = strides_of(x.dims());
    let mut vd = Vec::with_capacity(2 * m.len());
    let mut vs = Vec::with_capacity(2 * m.len());
    for i in 0..m.len() {
        vd.extend([m[i] as usize, x.dims()[i]]);
        vs.extend([0, st[i]]);
    }
    let out = ferroflow_core::with_dtype!(x.dtype(), T => Tensor::new(out_shape.clone(), strided_gather(x.as_slice::<T>()?, 0, &vd, &vs)?))?;
    ctx.set_output(0, out)
}

/// Broadcasts `x` to `dims` (NumPy rules); the error message matches TensorFlow's.
pub fn broadcast_tensor(x: &Tensor, dims: &[usize]) -> Result<Tensor, Status> {
    if x.rank() > dims.len() {
        return Err(Status::invalid_argument(format!(
            "Rank of input ({}) must be no greater than rank of output shape ({}).",
            x.rank(),
            dims.len()
        )));
    }
    let lead = dims.len() - x.rank();
    let st = strides_of(x.dims());
    let mut strides = vec![0isize; dims.len()];
    for (i, &d) in x.dims().iter().enumerate() {
        let o = dims[lead + i];
        if d == o {
            strides[lead + i] = st[i];
        } else if d != 1 {
            return Err(Status::invalid_argument(format!(
                "Incompatible shapes: {} vs. {}",
                x.shape(),
                Shape::new(dims.to_vec())
            )));
        }
    }
    if x.dims() == dims {
        return Ok(x.clone());
    }
    ferroflow_core::with_dtype!(x.dtype(), T => Tensor::new(dims.to_vec(), strided_gather(x.as_slice::<T>()?, 0, dims, &strides)?))
}

fn broadcast_to(ctx: &mut OpContext) -> Result<(), Status> {
    let x = ctx.input(0)?;
    let s = vector_input(ctx, 1, |s| format!("shape must be a vector, got shape {}", s.shape()))?;
    let shape = output_shape(ctx, &s, x.dtype())?;
    let out = broadcast_tensor(&x, shape.dims()).map_err(|e| ctx.error_with(e))?;
    ctx.set_output(0, out)
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("Tile", |_| Ok(FnKernel::expensive(tile)));
    r.add("BroadcastTo", |_| Ok(FnKernel::expensive(broadcast_to)));
}
