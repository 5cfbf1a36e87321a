//! GatherNd, ScatterNd and TensorScatterUpdate/Add/Sub/Max/Min: slices addressed by index tuples
//! (the last dimension of `indices`) into a tensor's leading dimensions.

use ferroflow_core::{Shape, Status, Tensor, TensorType};

use super::util::indices_i64;
use crate::array::util::{check_alloc, dims_str, owned_vec, product, FnKernel};
use crate::math::elem::Num;
use crate::{KernelRegistry, OpContext};

/// Index tuples resolved to flat slice offsets into a tensor of `dims`.
pub(super) struct Slices {
    /// Flat element offset of each tuple's slice.
    pub(super) offsets: Vec<usize>,
    /// Elements per slice.
    pub(super) slice: usize,
    /// `indices.shape[:-1]`.
    batch: Vec<usize>,
}

/// Resolves `indices` (shape `[..., depth]`) against `dims`, rejecting out-of-range tuples.
pub(super) fn resolve(ctx: &OpContext, indices: &Tensor, dims: &[usize], what: &str) -> Result<Slices, Status> {
    if indices.rank() < 1 {
        return Err(ctx.error(format!("indices must be at least a vector, got shape {}", indices.shape())));
    }
    let depth = indices.dims()[indices.rank() - 1];
    if depth > dims.len() {
        return Err(ctx.error(format!(
            "index innermost dimension length must be <= {what} rank; saw: {depth} vs. {}",
            dims.len()
        )));
    }
    let idx = indices_i64(indices).map_err(|e| ctx.error(e.message))?;
    let batch = indices.dims()[..indices.rank() - 1].to_vec();
    let n = product(&batch);
    let slice = product(&dims[depth..]);
    let mut strides = vec![slice; depth];
    for d in (0..depth.saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * dims[d + 1];
    }
    let mut offsets = Vec::with_capacity(n);
    for i in 0..n {
        let t = &idx[i * depth..(i + 1) * depth];
        let mut off = 0usize;
        for (d, &v) in t.iter().enumerate() {
            if v < 0 || v as usize >= dims[d] {
                let tuple: Vec<String> = t.iter().map(|v| v.to_string()).collect();
                return Err(ctx.error(format!(
                    "indices[{i}] = [{}] does not index into {what} shape {}",
                    tuple.join(", "),
                    dims_str(dims)
                )));
            }
            off += v as usize * strides[d];
        }
        offsets.push(off);
    }
    Ok(Slices { offsets, slice, batch })
}

fn gather_typed<T: TensorType>(p: &Tensor, s: &Slices, out_dims: Vec<usize>) -> Result<Tensor, Status> {
    let src = p.as_slice::<T>()?;
    let mut out = ferroflow_core::alloc::with_capacity(&out_dims)?;
    for &o in &s.offsets {
        out.extend_from_slice(&src[o..o + s.slice]);
    }
    Tensor::new(out_dims, out)
}

fn gather_nd(ctx: &mut OpContext) -> Result<(), Status> {
    let params = ctx.input(0)?;
    let indices = ctx.input(1)?;
    let s = resolve(ctx, &indices, params.dims(), "param")?;
    let depth = indices.dims()[indices.rank() - 1];
    let mut out_dims = s.batch.clone();
    out_dims.extend_from_slice(&params.dims()[depth..]);
    check_alloc(&out_dims, params.dtype()).map_err(|e| ctx.error_with(e))?;
    let out = ferroflow_core::with_dtype!(params.dtype(), T => gather_typed::<T>(&params, &s, out_dims))?;
    ctx.set_output(0, out)
}

#[derive(Clone, Copy, PartialEq)]
pub(super) enum Mode {
    Update,
    Add,
    Sub,
    Max,
    Min,
}

/// Checks `updates.shape == indices.shape[:-1] + dims[depth:]`.
pub(super) fn check_updates(ctx: &OpContext, indices: &Tensor, updates: &Tensor, dims: &[usize]) -> Result<(), Status> {
    let depth = indices.dims().last().copied().unwrap_or(0);
    let mut want = indices.dims()[..indices.rank().saturating_sub(1)].to_vec();
    want.extend_from_slice(dims.get(depth..).unwrap_or(&[]));
    if updates.dims() != want.as_slice() {
        return Err(ctx.error(format!(
            "updates must have shape {} (indices.shape[:-1] + shape[indices.shape[-1]:]) but has shape {}",
            dims_str(&want),
            updates.shape()
        )));
    }
    Ok(())
}

pub(super) fn scatter_into<T: Num>(dst: &mut [T], s: &Slices, upd: &[T], mode: Mode) {
    for (i, &o) in s.offsets.iter().enumerate() {
        let (d, u) = (&mut dst[o..o + s.slice], &upd[i * s.slice..(i + 1) * s.slice]);
        match mode {
            Mode::Update => d.copy_from_slice(u),
            Mode::Add => d.iter_mut().zip(u).for_each(|(a, &b)| *a = a.add(b)),
            Mode::Sub => d.iter_mut().zip(u).for_each(|(a, &b)| *a = a.sub(b)),
            Mode::Max => d.iter_mut().zip(u).for_each(|(a, &b)| *a = a.tf_max(b)),
            Mode::Min => d.iter_mut().zip(u).for_each(|(a, &b)| *a = a.tf_min(b)),
        }
    }
}

fn update_any<T: TensorType>(base: Tensor, s: &Slices, updates: &Tensor) -> Result<Tensor, Status> {
    let shape = base.shape().clone();
    let mut dst = owned_vec::<T>(base)?;
    let upd = updates.as_slice::<T>()?;
    for (i, &o) in s.offsets.iter().enumerate() {
        dst[o..o + s.slice].clone_from_slice(&upd[i * s.slice..(i + 1) * s.slice]);
    }
    Tensor::new(shape, dst)
}

fn scatter_num<T: Num>(base: Tensor, s: &Slices, updates: &Tensor, mode: Mode) -> Result<Tensor, Status> {
    let shape = base.shape().clone();
    let mut dst = owned_vec::<T>(base)?;
    scatter_into(&mut dst, s, updates.as_slice::<T>()?, mode);
    Tensor::new(shape, dst)
}

fn apply(ctx: &mut OpContext, base: Tensor, indices: &Tensor, updates: &Tensor, mode: Mode) -> Result<(), Status> {
    if updates.dtype() != base.dtype() {
        return Err(ctx.error(format!("updates are {} but the tensor is {}", updates.dtype(), base.dtype())));
    }
    let s = resolve(ctx, indices, base.dims(), "tensor")?;
    check_updates(ctx, indices, updates, base.dims())?;
    let out = if mode == Mode::Update {
        ferroflow_core::with_dtype!(base.dtype(), T => update_any::<T>(base, &s, updates))?
    } else {
        crate::dispatch::dispatch!(base.dtype(), ctx, [f32, f64, i32, i64, u8, i8, i16, u16, u32, u64], |T| {
            scatter_num::<T>(base, &s, updates, mode)
        })?
    };
    ctx.set_output(0, out)
}

fn scatter_nd(ctx: &mut OpContext) -> Result<(), Status> {
    let indices = ctx.input(0)?;
    let updates = ctx.input(1)?;
    let shape_t = ctx.input(2)?;
    if shape_t.rank() != 1 {
        return Err(ctx.error(format!("Shape must be a vector, got shape {}", shape_t.shape())));
    }
    let sv = indices_i64(&shape_t).map_err(|e| ctx.error(e.message))?;
    let shape = Shape::from_i64(&sv).map_err(|e| ctx.error(e.message))?;
    if shape.dims().is_empty() {
        return Err(ctx.error("Output must be at least 1-D"));
    }
    check_alloc(shape.dims(), updates.dtype()).map_err(|e| ctx.error_with(e))?;
    let base = Tensor::zeros(updates.dtype(), shape)?;
    apply(ctx, base, &indices, &updates, Mode::Add)
}

fn tensor_scatter(ctx: &mut OpContext, mode: Mode) -> Result<(), Status> {
    let base = ctx.input(0)?;
    let indices = ctx.input(1)?;
    let updates = ctx.input(2)?;
    if base.rank() < 1 && indices.dims().last().is_some_and(|&d| d > 0) {
        return Err(ctx.error("Output must be at least 1-D"));
    }
    apply(ctx, base, &indices, &updates, mode)
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("GatherNd", |_| Ok(FnKernel::expensive(gather_nd)));
    r.add("ScatterNd", |_| Ok(FnKernel::expensive(scatter_nd)));
    r.add("TensorScatterUpdate", |_| Ok(FnKernel::expensive(|c| tensor_scatter(c, Mode::Update))));
    r.add("TensorScatterAdd", |_| Ok(FnKernel::expensive(|c| tensor_scatter(c, Mode::Add))));
    r.add("TensorScatterSub", |_| Ok(FnKernel::expensive(|c| tensor_scatter(c, Mode::Sub))));
    r.add("TensorScatterMax", |_| Ok(FnKernel::expensive(|c| tensor_scatter(c, Mode::Max))));
    r.add("TensorScatterMin", |_| Ok(FnKernel::expensive(|c| tensor_scatter(c, Mode::Min))));
}
