//! ConcatV2 and ConcatOffset.

use ferroflow_core::{Status, Tensor, TensorType};

use super::util::{checked_index_scalar, index_tensor, index_vec, product, FnKernel};
use crate::{KernelRegistry, OpContext};

/// Concatenates same-rank tensors of one dtype along a valid `axis`; `shapes` were checked.
pub fn concat_typed<T: TensorType>(inputs: &[Tensor], axis: usize, out_dims: &[usize]) -> Result<Vec<T>, Status> {
    let outer = product(&out_dims[..axis]);
    let slices: Vec<(&[T], usize)> =
        inputs.iter().map(|t| Ok((t.as_slice::<T>()?, product(&t.dims()[axis..])))).collect::<Result<_, Status>>()?;
    let mut out = ferroflow_core::alloc::with_capacity(out_dims)?;
    for o in 0..outer {
        for &(s, inner) in &slices {
            out.extend_from_slice(&s[o * inner..(o + 1) * inner]);
        }
    }
    Ok(out)
}

/// The concatenation dimension `t`, an integer scalar.
fn concat_dim(ctx: &OpContext, t: &Tensor) -> Result<i64, Status> {
    checked_index_scalar(ctx, t, |t| {
        format!("Concat dim tensor should be a scalar integer, but got shape {}", t.shape())
    })
}

fn concat_v2(ctx: &mut OpContext) -> Result<(), Status> {
    let n = ctx.num_inputs() - 1;
    let axis_t = ctx.input(n)?;
    let axis = concat_dim(ctx, &axis_t)?;
    let inputs: Vec<Tensor> = (0..n).map(|i| ctx.input(i)).collect::<Result<_, _>>()?;
    let first = &inputs[0];
    let r = first.rank() as i64;
    if axis < -r || axis >= r {
        return Err(ctx.error(format!(
            "ConcatOp : Expected concatenating dimensions in the range [{}, {r}), but got {axis}",
            -r
        )));
    }
    let axis = if axis < 0 { axis + r } else { axis } as usize;
    let mut out_dims = first.dims().to_vec();
    for (i, t) in inputs.iter().enumerate().skip(1) {
        if t.rank() != first.rank() {
            return Err(ctx.error(format!(
                "ConcatOp : Ranks of all input tensors should match: shape[0] = {} vs. shape[{i}] = {}",
                first.shape(),
                t.shape()
            )));
        }
        if t.dtype() != first.dtype() {
            return Err(ctx.error(format!("input {i} is {} but input 0 is {}", t.dtype(), first.dtype())));
        }
        for (j, (&d, &d0)) in t.dims().iter().zip(first.dims()).enumerate() {
            if j == axis {
                out_dims[j] += d;
            } else if d != d0 {
                return Err(ctx.error(format!(
                    "ConcatOp : Dimension {j} in both shapes must be equal: shape[0] = {} vs. shape[{i}] = {}",
                    first.shape(),
                    t.shape()
                )));
            }
        }
    }
    let out = ferroflow_core::with_dtype!(first.dtype(), T => Tensor::new(out_dims.clone(), concat_typed::<T>(&inputs, axis, &out_dims)?))?;
    ctx.set_output(0, out)
}

fn np_vec(v: &[i64]) -> String {
    let s: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    format!("[{}]", s.join(" "))
}

fn concat_offset(ctx: &mut OpContext) -> Result<(), Status> {
    let cdim_t = ctx.input(0)?;
    let cdim = concat_dim(ctx, &cdim_t)?;
    let n = ctx.num_inputs() - 1;
    let shapes: Vec<Tensor> = (1..=n).map(|i| ctx.input(i)).collect::<Result<_, _>>()?;
    if shapes[0].rank() != 1 {
        return Err(ctx.error(format!("input 0 should be a vector, got shape {}", shapes[0].shape())));
    }
    let inp0 = index_vec(&shapes[0]).map_err(|e| ctx.error(e.message))?;
    let dims = inp0.len() as i64;
    let axis = if cdim < 0 { cdim + dims } else { cdim };
    if axis < 0 || axis >= dims {
        return Err(ctx.error(format!("Concat dim is out of range: {cdim} vs. {dims}")));
    }
    let axis = axis as usize;
    let mut offset = 0i64;
    for (i, s) in shapes.iter().enumerate() {
        if s.rank() != 1 || s.num_elements() != inp0.len() {
            return Err(ctx.error(format!("input {i} should contain {dims} elements, but got {}", s.num_elements())));
        }
        let v = index_vec(s).map_err(|e| ctx.error(e.message))?;
        for j in 0..inp0.len() {
            if j != axis && v[j] != inp0[j] {
                return Err(ctx.error(format!(
                    "All dimensions except {axis} must match. Input {i} has shape {} and doesn't match input 0 with shape {}.",
                    np_vec(&v),
                    np_vec(&inp0)
                )));
            }
        }
        let mut out = vec![0i64; inp0.len()];
        out[axis] = offset;
        offset = offset.checked_add(v[axis]).ok_or_else(|| ctx.error("concat offsets overflow"))?;
        ctx.set_output(i, index_tensor(s.dtype(), vec![inp0.len()], out).map_err(|e| ctx.error(e.message))?)?;
    }
    Ok(())
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("ConcatV2", |_| Ok(FnKernel::expensive(concat_v2)));
    r.add("ConcatOffset", |_| Ok(FnKernel::cheap(concat_offset)));
}
