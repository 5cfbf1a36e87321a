//! MatrixBandPart (keep a band of each innermost matrix), Diag and DiagPart.

use ferroflow_core::{Status, Tensor, TensorType};

use crate::array::util::{check_alloc, checked_index_scalar, dims_str, product, FnKernel};
use crate::{KernelRegistry, OpContext};

fn band_typed<T: TensorType>(x: &Tensor, lower: i64, upper: i64) -> Result<Tensor, Status> {
    let d = x.dims();
    let (m, n) = (d[d.len() - 2], d[d.len() - 1]);
    let mut out = ferroflow_core::alloc::with_capacity::<T>(d)?;
    out.extend_from_slice(x.as_slice::<T>()?);
    if m * n == 0 {
        return Tensor::new(x.shape().clone(), out);
    }
    for mat in out.chunks_mut(m * n) {
        for (i, row) in mat.chunks_mut(n).enumerate() {
            // Kept columns: i - lower <= j <= i + upper.
            let lo = if lower < 0 { 0 } else { (i as i64 - lower).max(0) as usize }.min(n);
            let hi = if upper < 0 { n } else { ((i as i64 + upper + 1).max(0) as usize).min(n) };
            let hi = hi.max(lo);
            row[..lo].fill(T::default());
            row[hi..].fill(T::default());
        }
    }
    Tensor::new(x.shape().clone(), out)
}

fn matrix_band_part(ctx: &mut OpContext) -> Result<(), Status> {
    let x = ctx.input(0)?;
    if x.rank() < 2 {
        return Err(ctx.error(format!("input must be at least 2-dim, received shape: {}", x.shape())));
    }
    let (m, n) = (x.dims()[x.rank() - 2] as i64, x.dims()[x.rank() - 1] as i64);
    let mut b = [0i64; 2];
    for (k, (what, rows)) in [("num_lower", m), ("num_upper", n)].into_iter().enumerate() {
        let t = ctx.input(1 + k)?;
        let v = checked_index_scalar(ctx, &t, |t| format!("{what} must be scalar, got shape {}", t.shape()))?;
        if v > rows {
            let dim = if k == 0 { "rows (M)" } else { "columns (N)" };
            return Err(ctx.error(format!("{what} must be negative or less or equal to number of {dim} got: {v}")));
        }
        b[k] = v;
    }
    let out = ferroflow_core::with_dtype!(x.dtype(), T => band_typed::<T>(&x, b[0], b[1]))?;
    ctx.set_output(0, out)
}

fn diag_typed<T: TensorType>(x: &Tensor, dims: Vec<usize>) -> Result<Tensor, Status> {
    let src = x.as_slice::<T>()?;
    let n = src.len();
    let mut out = ferroflow_core::alloc::zeroed::<T>(&dims)?;
    for (i, v) in src.iter().enumerate() {
        out[i * n + i] = v.clone();
    }
    Tensor::new(dims, out)
}

fn diag(ctx: &mut OpContext) -> Result<(), Status> {
    let x = ctx.input(0)?;
    if x.rank() < 1 {
        return Err(ctx.error(format!("Input must be at least rank 1, got {}", x.rank())));
    }
    let dims: Vec<usize> = x.dims().iter().chain(x.dims()).copied().collect();
    check_alloc(&dims, x.dtype()).map_err(|e| ctx.error_with(e))?;
    let out = ferroflow_core::with_dtype!(x.dtype(), T => diag_typed::<T>(&x, dims))?;
    ctx.set_output(0, out)
}

fn diag_part_typed<T: TensorType>(x: &Tensor, dims: Vec<usize>) -> Result<Tensor, Status> {
    let src = x.as_slice::<T>()?;
    let n = product(&dims);
    let mut out = ferroflow_core::alloc::with_capacity::<T>(&dims)?;
    out.extend((0..n).map(|i| src[i * n + i].clone()));
    Tensor::new(dims, out)
}

fn diag_part(ctx: &mut OpContext) -> Result<(), Status> {
    let x = ctx.input(0)?;
    let r = x.rank();
    if r == 0 || r % 2 != 0 {
        return Err(ctx.error(format!("The rank of the tensor should be even and positive, got shape {}", x.shape())));
    }
    let h = r / 2;
    for i in 0..h {
        if x.dims()[i] != x.dims()[i + h] {
            return Err(ctx.error(format!(
                "Invalid shape {}: dimensions {i} and {} do not match.",
                dims_str(x.dims()),
                i + h
            )));
        }
    }
    let out = ferroflow_core::with_dtype!(x.dtype(), T => diag_part_typed::<T>(&x, x.dims()[..h].to_vec()))?;
    ctx.set_output(0, out)
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("MatrixBandPart", |_| Ok(FnKernel::expensive(matrix_band_part)));
    r.add("Diag", |_| Ok(FnKernel::expensive(diag)));
    r.add("DiagPart", |_| Ok(FnKernel::expensive(diag_part)));
}
