//! Pad and PadV2 (constant padding).

use ferroflow_core::{Shape, Status, Tensor, TensorType};

use super::strided::{strided_scatter, strides_of};
use super::util::{check_alloc, index_vec, FnKernel};
use crate::{KernelRegistry, OpContext};

fn pad_typed<T: TensorType>(
    x: &Tensor,
    before: &[usize],
    out_dims: &[usize],
    c: Option<&Tensor>,
) -> Result<Tensor, Status> {
    let mut out = match c {
        Some(c) => ferroflow_core::alloc::filled(out_dims, c.as_slice::<T>()?[0].clone())?,
        None => ferroflow_core::alloc::zeroed::<T>(out_dims)?,
    };
    let st = strides_of(out_dims);
    let offset: isize = before.iter().zip(&st).map(|(&b, &s)| b as isize * s).sum();
    strided_scatter(&mut out, offset, x.dims(), &st, x.as_slice::<T>()?);
    Tensor::new(out_dims.to_vec(), out)
}

fn pad(ctx: &mut OpContext) -> Result<(), Status> {
    let x = ctx.input(0)?;
    let p = ctx.input(1)?;
    let c = if ctx.num_inputs() > 2 {
        let c = ctx.input(2)?;
        if c.rank() != 0 {
            return Err(ctx.error(format!("constant_values must be a scalar. Found: {}", c.shape())));
        }
        Some(c)
    } else {
        None
    };
    if p.rank() != 2 || p.dims()[1] != 2 {
        return Err(ctx.error(format!("paddings must be a matrix with 2 columns: {}", p.shape())));
    }
    if p.dims()[0] != x.rank() {
        return Err(ctx.error(format!(
            "The first dimension of paddings must be the rank of inputs{} {}",
            p.shape(),
            x.shape()
        )));
    }
    let pv = index_vec(&p).map_err(|e| ctx.error(e.message))?;
    let mut before = Vec::with_capacity(x.rank());
    let mut out_dims = Vec::with_capacity(x.rank());
    for (i, &d) in x.dims().iter().enumerate() {
        let (b, a) = (pv[2 * i], pv[2 * i + 1]);
        if b < 0 || a < 0 {
            return Err(ctx.error(format!("Paddings must be non-negative: {b} {a}")));
        }
        before.push(b as usize);
        let n = (d as i64).checked_add(b).and_then(|n| n.checked_add(a));
        out_dims.push(n.ok_or_else(|| ctx.error(format!("Paddings {b} {a} overflow dimension {i}")))?);
    }
    let shape = Shape::from_i64(&out_dims).map_err(|e| ctx.error(e.message))?;
    check_alloc(shape.dims(), x.dtype()).map_err(|e| e.context(format!("node '{}'", ctx.node().name)))?;
    if shape == *x.shape() {
        return ctx.set_output(0, x);
    }
    let out = ferroflow_core::with_dtype!(x.dtype(), T => pad_typed::<T>(&x, &before, shape.dims(), c.as_ref()))?;
    ctx.set_output(0, out)
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("Pad", |_| Ok(FnKernel::expensive(pad)));
    r.add("PadV2", |_| Ok(FnKernel::expensive(pad)));
}
