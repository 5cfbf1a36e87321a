//! Helpers shared by the math kernels: typed input access, kernel type checks, dtype
//! dispatch.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor, TensorType};

use crate::OpContext;

/// float32, float64, int32, int64, uint8.
pub(crate) const NUMERIC: &[DataType] =
    &[DataType::Float, DataType::Double, DataType::Int32, DataType::Int64, DataType::UInt8];
/// float32, float64, int32, int64.
pub(crate) const SIGNED: &[DataType] = &[DataType::Float, DataType::Double, DataType::Int32, DataType::Int64];
/// float32, float64.
pub(crate) const FLOATS: &[DataType] = &[DataType::Float, DataType::Double];

/// TensorFlow's real number types on CPU: floats of every width, integers of every width.
pub(crate) const REAL: &[DataType] = &[
    DataType::Float,
    DataType::Double,
    DataType::Int32,
    DataType::Int64,
    DataType::UInt8,
    DataType::Half,
    DataType::BFloat16,
    DataType::Int8,
    DataType::Int16,
    DataType::UInt16,
    DataType::UInt32,
    DataType::UInt64,
];
/// [`REAL`] and complex64, complex128 (TensorFlow's number types).
pub(crate) const NUMBER: &[DataType] = &[
    DataType::Float,
    DataType::Double,
    DataType::Int32,
    DataType::Int64,
    DataType::UInt8,
    DataType::Half,
    DataType::BFloat16,
    DataType::Int8,
    DataType::Int16,
    DataType::UInt16,
    DataType::UInt32,
    DataType::UInt64,
    DataType::Complex64,
    DataType::Complex128,
];
/// The floating and complex types.
pub(crate) const FLOAT_COMPLEX: &[DataType] =
    &[DataType::Float, DataType::Double, DataType::Half, DataType::BFloat16, DataType::Complex64, DataType::Complex128];
/// The signed real types (floats and signed integers).
pub(crate) const SIGNED_REAL: &[DataType] = &[
    DataType::Float,
    DataType::Double,
    DataType::Int32,
    DataType::Int64,
    DataType::Half,
    DataType::BFloat16,
    DataType::Int8,
    DataType::Int16,
];

/// Whether a dtype is half, bfloat16, float32 or float64.
pub(crate) fn is_real_float(d: DataType) -> bool {
    matches!(d, DataType::Float | DataType::Double | DataType::Half | DataType::BFloat16)
}

/// The elements of `t` as `T`, or InvalidArgument naming the node.
pub(crate) fn typed<'a, T: TensorType>(ctx: &OpContext, t: &'a Tensor) -> Result<&'a [T], Status> {
    t.as_slice::<T>().map_err(|e| ctx.error(e.message))
}

/// A type attr that must be one of `allowed` (the types this CPU kernel implements);
/// otherwise NotFound, as TensorFlow answers for a missing kernel.
pub(crate) fn kernel_type(n: &NodeDef, attr: &str, allowed: &[DataType]) -> Result<DataType, Status> {
    let t = n.attr_type(attr)?;
    if allowed.contains(&t) {
        Ok(t)
    } else {
        Err(Status::not_found(format!(
            "node '{}': no CPU kernel for op {} with {attr}={t} (supported: {})",
            n.name,
            n.op,
            allowed.iter().map(|d| d.name()).collect::<Vec<_>>().join(", ")
        )))
    }
}
