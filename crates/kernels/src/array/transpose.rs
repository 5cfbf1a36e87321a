//! Transpose (tiled copy for the last two dims) and InvertPermutation.

use ferroflow_core::{DataType, Status, Tensor};

use super::strided::{strided_gather, strides_of};
use super::util::{collect_vec, index_vec, vector_input, FnKernel};
use crate::{KernelRegistry, OpContext};

/// Validates a permutation of `rank` dims with TensorFlow's messages.
pub fn check_perm(perm: &[i64], rank: usize) -> Result<Vec<usize>, String> {
    if perm.len() != rank {
        return Err(format!(
            "transpose expects a vector of size {rank}. But input(1) is a vector of size {}",
            perm.len()
        ));
    }
    let mut seen = vec![false; rank];
    for &d in perm {
        if d < 0 || d >= rank as i64 {
            return Err(format!("{d} is out of range [0 .. {rank})"));
        }
        seen[d as usize] = true;
    }
    if let Some(i) = seen.iter().position(|s| !s) {
        let p: Vec<String> = perm.iter().map(|d| d.to_string()).collect();
        return Err(format!("{i} is missing from {{{}}}.", p.join(",")));
    }
    Ok(perm.iter().map(|&d| d as usize).collect())
}

/// Transposes `x` by a valid permutation.
pub fn transpose_tensor(x: &Tensor, perm: &[usize]) -> Result<Tensor, Status> {
    let dims: Vec<usize> = perm.iter().map(|&p| x.dims()[p]).collect();
    if perm.iter().enumerate().all(|(i, &p)| i == p) {
        return x.reshape(dims);
    }
    let in_strides = strides_of(x.dims());
    let strides: Vec<isize> = perm.iter().map(|&p| in_strides[p]).collect();
    ferroflow_core::with_dtype!(x.dtype(), T => Tensor::new(dims.clone(), strided_gather(x.as_slice::<T>()?, 0, &dims, &strides)?))
}

fn transpose(ctx: &mut OpContext) -> Result<(), Status> {
    let x = ctx.input(0)?;
    let perm = vector_input(ctx, 1, |perm| format!("perm must be a vector, not {}", perm.shape()))?;
    let perm = check_perm(&perm, x.rank()).map_err(|m| ctx.error(m))?;
    ctx.set_output(0, transpose_tensor(&x, &perm)?)
}

/// `ConjugateTranspose`: the transpose with complex elements conjugated (a plain transpose
/// for real types, as in TensorFlow).
fn conjugate_transpose(ctx: &mut OpContext) -> Result<(), Status> {
    let x = ctx.input(0)?;
    let perm = vector_input(ctx, 1, |perm| format!("perm must be a vector, not {}", perm.shape()))?;
    let perm = check_perm(&perm, x.rank()).map_err(|m| ctx.error(m))?;
    let t = transpose_tensor(&x, &perm)?;
    let t = match t.dtype() {
        DataType::Complex64 => Tensor::new(
            t.dims().to_vec(),
            t.as_slice::<ferroflow_core::C64>()?.iter().map(|c| c.conj()).collect::<Vec<_>>(),
        )?,
        DataType::Complex128 => Tensor::new(
            t.dims().to_vec(),
            t.as_slice::<ferroflow_core::C128>()?.iter().map(|c| c.conj()).collect::<Vec<_>>(),
        )?,
        _ => t,
    };
    ctx.set_output(0, t)
}

fn invert_permutation(ctx: &mut OpContext) -> Result<(), Status> {
    let x = ctx.input(0)?;
    if x.rank() != 1 {
        return Err(ctx.error("invert_permutation expects a 1D vector."));
    }
    let v = index_vec(&x).map_err(|e| ctx.error(e.message))?;
    let n = v.len();
    let mut out = ferroflow_core::alloc::filled(&[n], -1i64)?;
    for (i, &d) in v.iter().enumerate() {
        if d < 0 || d >= n as i64 {
            return Err(ctx.error(format!("{d} is not between 0 and {n}")));
        }
        if out[d as usize] != -1 {
            return Err(ctx.error(format!("{d} is duplicated in the input.")));
        }
        out[d as usize] = i as i64;
    }
    let t = match x.dtype() {
        DataType::Int32 => Tensor::vec(collect_vec(&[n], out.into_iter().map(|x| x as i32))?),
        _ => Tensor::vec(out),
    };
    ctx.set_output(0, t)
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("Transpose", |_| Ok(FnKernel::expensive(transpose)));
    r.add("ConjugateTranspose", |_| Ok(FnKernel::expensive(conjugate_transpose)));
    r.add("InvertPermutation", |_| Ok(FnKernel::cheap(invert_permutation)));
}
