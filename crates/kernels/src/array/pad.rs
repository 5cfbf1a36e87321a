//! Pad and PadV2 (constant padding).

use ferroflow_core::{Shape, Status, Tensor, TensorType};

use super::strided::{strided_scatter, strides_of};
use super::util::{check_node_alloc, index_vec, FnKernel, PAR_THRESHOLD};
use crate::{KernelRegistry, OpContext};
use rayon::prelude::*;

fn pad_typed<T: TensorType>(
    x: &Tensor,
    before: &[usize],
    out_dims: &[usize],
    c: Option<&Tensor>,
) -> Result<Tensor, Status> {
    let value = match c {
        Some(c) => c.as_slice::<T>()?[0].clone(),
        None => T::default(),
    };
    let n: usize = out_dims.iter().product();
    let pod = !std::mem::needs_drop::<T>();
    let batch_only = out_dims.len() > 1 && out_dims[0] > 1 && out_dims[0] == x.dims()[0] && x.num_elements() > 0;
    if pod && n >= PAR_THRESHOLD && batch_only {
        return pad_batch_parallel(x, before, out_dims, value);
    }
    let mut out = match c {
        Some(c) => ferroflow_core::alloc::filled(out_dims, c.as_slice::<T>()?[0].clone())?,
        None => ferroflow_core::alloc::zeroed::<T>(out_dims)?,
    };
    let st = strides_of(out_dims);
    let offset: isize = before.iter().zip(&st).map(|(&b, &s)| b as isize * s).sum();
    strided_scatter(&mut out, offset, x.dims(), &st, x.as_slice::<T>()?);
    Tensor::new(out_dims.to_vec(), out)
}

/// A large pad that leaves the batch dimension alone (ZeroPadding2D): each image is filled
/// and copied on its own, the images in parallel, into room written once per element of the
/// border and twice inside (MobileNetV2's 16×80×80×96 → 16×81×81×96: 3.4 ms single-threaded,
/// TensorFlow 2.6).
fn pad_batch_parallel<T: TensorType>(
    x: &Tensor,
    before: &[usize],
    out_dims: &[usize],
    value: T,
) -> Result<Tensor, Status> {
    let n: usize = out_dims.iter().product();
    let (image, src_image) = (n / out_dims[0], x.num_elements() / out_dims[0].max(1));
    let st = strides_of(&out_dims[1..]);
    let offset: isize = before[1..].iter().zip(&st).map(|(&b, &s)| b as isize * s).sum();
    let src = x.as_slice::<T>()?;
    let mut out = ferroflow_core::alloc::with_capacity::<T>(out_dims)?;
    out.spare_capacity_mut()[..n].par_chunks_mut(image).zip(src.par_chunks(src_image.max(1))).for_each(|(room, xs)| {
        for o in room.iter_mut() {
            o.write(value.clone());
        }
        // SAFETY: every element of `room` was initialized just above.
        let dst = unsafe { std::slice::from_raw_parts_mut(room.as_mut_ptr().cast::<T>(), room.len()) };
        strided_scatter(dst, offset, &x.dims()[1..], &st, xs);
    });
    // SAFETY: the images cover the first `n` elements of the room, each initialized above.
    unsafe { out.set_len(n) };
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
    check_node_alloc(ctx, shape.dims(), x.dtype())?;
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
