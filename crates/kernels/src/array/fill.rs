//! Fill, ZerosLike and OnesLike.

use ferroflow_core::alloc::filled;
use ferroflow_core::half::{bf16, f16};
use ferroflow_core::{DataType, Status, Storage, Tensor, Variant, C128, C64};

use super::util::{index_vec, output_shape, FnKernel};
use crate::data_flow::optional::{optional_components, optional_variant};
use crate::{KernelRegistry, OpContext};

fn fill(ctx: &mut OpContext) -> Result<(), Status> {
    let dims = ctx.input(0)?;
    let value = ctx.input(1)?;
    if dims.rank() != 1 {
        return Err(ctx.error(format!("dims must be a vector, got shape {}", dims.shape())));
    }
    if value.rank() != 0 {
        return Err(ctx.error(format!("value must be a scalar, got shape {}", value.shape())));
    }
    let dims = index_vec(&dims).map_err(|e| ctx.error(e.message))?;
    let shape = output_shape(ctx, &dims, value.dtype())?;
    let out = ferroflow_core::with_dtype!(value.dtype(), T => {
        let v = first::<T>(value.as_slice::<T>()?);
        let data = filled(shape.dims(), v)?;
        Tensor::new(shape, data)
    })?;
    ctx.set_output(0, out)
}

fn first<T: Clone>(s: &[T]) -> T {
    s[0].clone()
}

fn zeros_like(ctx: &mut OpContext) -> Result<(), Status> {
    let x = ctx.input(0)?;
    if x.dtype() == DataType::Resource || x.dtype().is_quantized() {
        // TensorFlow registers no ZerosLike kernel for these.
        return Err(ctx.error(format!("ZerosLike is not supported for {} tensors", x.dtype())));
    }
    let out = zeros_like_tensor(&x).map_err(|e| ctx.error(e))?;
    ctx.set_output(0, out)
}

/// Zeros shaped like `x`. Variants hold their own zeros: a TensorList's are the same
/// elements, each zeros (unset ones stay unset); an optional's are an optional of its
/// components' zeros (an empty optional stays empty), as `tf.cond` gradients of
/// `tf.data`-built values need.
fn zeros_like_tensor(x: &Tensor) -> Result<Tensor, String> {
    if x.dtype() != DataType::Variant {
        return Tensor::zeros(x.dtype(), x.shape().clone()).map_err(|e| e.message);
    }
    let mut out = Vec::new();
    for v in x.as_slice::<Variant>().map_err(|e| e.message)? {
        out.push(match v {
            Variant::Empty => Variant::Empty,
            Variant::Tensor(t) => Variant::Tensor(std::sync::Arc::new(zeros_like_tensor(t)?)),
            Variant::TensorList(l) => {
                let mut z = (**l).clone();
                for t in z.tensors.iter_mut().flatten() {
                    *t = zeros_like_tensor(t)?;
                }
                Variant::TensorList(std::sync::Arc::new(z))
            }
            Variant::Opaque(o) => match optional_components(o) {
                Some(components) => {
                    let zeros = match components {
                        Some(ts) => Some(ts.iter().map(zeros_like_tensor).collect::<Result<Vec<_>, _>>()?),
                        None => None,
                    };
                    optional_variant(zeros)
                }
                None => return Err(format!("ZerosLike is not supported for a {} variant", o.type_name)),
            },
        });
    }
    Tensor::new(x.shape().clone(), out).map_err(|e| e.message)
}

fn ones_like(ctx: &mut OpContext) -> Result<(), Status> {
    let x = ctx.input(0)?;
    let n = x.dims();
    let st = match x.dtype() {
        DataType::Float => Storage::F32(filled(n, 1.0)?),
        DataType::Double => Storage::F64(filled(n, 1.0)?),
        DataType::Int32 => Storage::I32(filled(n, 1)?),
        DataType::Int64 => Storage::I64(filled(n, 1)?),
        DataType::UInt8 => Storage::U8(filled(n, 1)?),
        DataType::Bool => Storage::Bool(filled(n, true)?),
        DataType::Half => Storage::F16(filled(n, f16::ONE)?),
        DataType::BFloat16 => Storage::BF16(filled(n, bf16::ONE)?),
        DataType::Int8 => Storage::I8(filled(n, 1)?),
        DataType::Int16 => Storage::I16(filled(n, 1)?),
        DataType::UInt16 => Storage::U16(filled(n, 1)?),
        DataType::UInt32 => Storage::U32(filled(n, 1)?),
        DataType::UInt64 => Storage::U64(filled(n, 1)?),
        DataType::Complex64 => Storage::C64(filled(n, C64::new(1.0, 0.0))?),
        DataType::Complex128 => Storage::C128(filled(n, C128::new(1.0, 0.0))?),
        d => return Err(ctx.error(format!("OnesLike is not defined for {d} tensors"))),
    };
    ctx.set_output(0, Tensor::from_storage(x.shape().clone(), st)?)
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("Fill", |_| Ok(FnKernel::expensive(fill)));
    r.add("ZerosLike", |_| Ok(FnKernel::expensive(zeros_like)));
    r.add("OnesLike", |_| Ok(FnKernel::expensive(ones_like)));
}
