//! ReverseV2 (reverse the listed dimensions) and Roll (cyclic shifts along dimensions).

use ferroflow_core::{Status, Tensor, TensorType};

use super::util::norm_axis;
use crate::array::strided::{strided_gather, strides_of};
use crate::array::util::{index_vec, product, vector_input, FnKernel};
use crate::{KernelRegistry, OpContext};

fn reverse_v2(ctx: &mut OpContext) -> Result<(), Status> {
    let x = ctx.input(0)?;
    let axes = vector_input(ctx, 1, |t| format!("'dims' must be 1-dimension, not {}", t.rank()))?;
    let r = x.rank();
    let mut rev = vec![false; r];
    for (i, &a) in axes.iter().enumerate() {
        let d = norm_axis(a, r)
            .ok_or_else(|| ctx.error(format!("'axis'[{i}] = {a} is out of valid range [{}, {r})", -(r as i64))))?;
        if rev[d] {
            return Err(ctx.error(format!("axis {d} specified more than once.")));
        }
        rev[d] = true;
    }
    if !rev.iter().zip(x.dims()).any(|(&f, &d)| f && d > 1) || x.num_elements() == 0 {
        return ctx.set_output(0, x);
    }
    let mut strides = strides_of(x.dims());
    let mut offset = 0isize;
    for d in 0..r {
        if rev[d] {
            offset += (x.dims()[d] as isize - 1) * strides[d];
            strides[d] = -strides[d];
        }
    }
    let out = ferroflow_core::with_dtype!(x.dtype(), T => Tensor::new(x.shape().clone(), strided_gather(x.as_slice::<T>()?, offset, x.dims(), &strides)?))?;
    ctx.set_output(0, out)
}

/// `src` rolled by `shift` (in `[0, n)`) along the middle dimension of `[outer, n, inner]`.
fn roll_axis<T: TensorType>(
    src: &[T],
    dims: &[usize],
    [outer, n, inner]: [usize; 3],
    shift: usize,
) -> Result<Vec<T>, Status> {
    let mut out = ferroflow_core::alloc::with_capacity(dims)?;
    let row = n * inner;
    let cut = (n - shift) * inner;
    for o in 0..outer {
        let r = &src[o * row..(o + 1) * row];
        out.extend_from_slice(&r[cut..]);
        out.extend_from_slice(&r[..cut]);
    }
    Ok(out)
}

fn roll_typed<T: TensorType>(x: &Tensor, shifts: &[usize]) -> Result<Tensor, Status> {
    let dims = x.dims();
    let mut cur: Option<Vec<T>> = None;
    for (d, &s) in shifts.iter().enumerate() {
        if s != 0 {
            let src = cur.as_deref().map_or_else(|| x.as_slice::<T>(), Ok)?;
            cur = Some(roll_axis(src, dims, [product(&dims[..d]), dims[d], product(&dims[d + 1..])], s)?);
        }
    }
    match cur {
        Some(v) => Tensor::new(x.shape().clone(), v),
        None => Ok(x.clone()),
    }
}

fn roll(ctx: &mut OpContext) -> Result<(), Status> {
    let x = ctx.input(0)?;
    let shift_t = ctx.input(1)?;
    let axis_t = ctx.input(2)?;
    if x.rank() < 1 {
        return Err(ctx.error("input must be 1-D or higher"));
    }
    if shift_t.rank() > 1 {
        return Err(ctx.error(format!("shift must be a scalar or a 1-D vector. Found: {}", shift_t.shape())));
    }
    if axis_t.rank() > 1 {
        return Err(ctx.error(format!("axis must be a scalar or a 1-D vector. Found: {}", axis_t.shape())));
    }
    if shift_t.shape() != axis_t.shape() {
        return Err(ctx.error(format!(
            "shift and axis must have the same size. Found shift {} and axis {}",
            shift_t.shape(),
            axis_t.shape()
        )));
    }
    let shifts = index_vec(&shift_t).map_err(|e| ctx.error(e.message))?;
    let axes = index_vec(&axis_t).map_err(|e| ctx.error(e.message))?;
    let r = x.rank();
    let mut total = vec![0i64; r];
    for (&s, &a) in shifts.iter().zip(&axes) {
        let d = norm_axis(a, r).ok_or_else(|| ctx.error(format!("axis {a} is out of range")))?;
        let n = x.dims()[d] as i64;
        if n > 0 {
            total[d] = (total[d] + s.rem_euclid(n)) % n;
        }
    }
    if total.iter().all(|&s| s == 0) || x.num_elements() == 0 {
        return ctx.set_output(0, x);
    }
    let shifts: Vec<usize> = total.iter().map(|&s| s as usize).collect();
    let out = ferroflow_core::with_dtype!(x.dtype(), T => roll_typed::<T>(&x, &shifts))?;
    ctx.set_output(0, out)
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("ReverseV2", |_| Ok(FnKernel::expensive(reverse_v2)));
    r.add("Roll", |_| Ok(FnKernel::expensive(roll)));
}
