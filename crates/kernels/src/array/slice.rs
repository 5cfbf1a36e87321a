//! Slice: `input[begin : begin + size]` per dim (`size` -1 = to the end).

use ferroflow_core::{Status, Tensor};

use super::strided::{strided_gather, strides_of};
use super::util::{index_vec, FnKernel};
use crate::{KernelRegistry, OpContext};

/// Validates Slice's begin/size against `dims`; returns (begin, size) with -1 resolved.
pub fn slice_bounds(dims: &[usize], begin: &[i64], size: &[i64]) -> Result<(Vec<usize>, Vec<usize>), String> {
    let mut b = Vec::with_capacity(dims.len());
    let mut s = Vec::with_capacity(dims.len());
    for (i, &d) in dims.iter().enumerate() {
        let d = d as i64;
        let bi = begin[i];
        if bi < 0 || bi > d {
            return Err(format!("Expected begin[{i}] in [0, {d}], but got {bi}"));
        }
        let si = if size[i] == -1 { d - bi } else { size[i] };
        if si < 0 || si > d - bi {
            return Err(format!("Expected size[{i}] in [0, {}], but got {si}", d - bi));
        }
        b.push(bi as usize);
        s.push(si as usize);
    }
    Ok((b, s))
}

fn slice(ctx: &mut OpContext) -> Result<(), Status> {
    let x = ctx.input(0)?;
    let (bt, st) = (ctx.input(1)?, ctx.input(2)?);
    if bt.rank() != 1 || st.rank() != 1 || bt.num_elements() != x.rank() || st.num_elements() != x.rank() {
        return Err(ctx.error(format!(
            "Expected begin and size arguments to be 1-D tensors of size {}, but got shapes {} and {} instead.",
            x.rank(),
            bt.shape(),
            st.shape()
        )));
    }
    let begin = index_vec(&bt).map_err(|e| ctx.error(e.message))?;
    let size = index_vec(&st).map_err(|e| ctx.error(e.message))?;
    let (b, s) = slice_bounds(x.dims(), &begin, &size).map_err(|m| ctx.error(m))?;
    if s == x.dims() {
        return ctx.set_output(0, x);
    }
    let strides = strides_of(x.dims());
    let offset: isize = b.iter().zip(&strides).map(|(&bi, &st)| bi as isize * st).sum();
    let out = ferroflow_core::with_dtype!(x.dtype(), T => Tensor::new(s.clone(), strided_gather(x.as_slice::<T>()?, offset, &s, &strides)?))?;
    ctx.set_output(0, out)
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("Slice", |_| Ok(FnKernel::expensive(slice)));
}
