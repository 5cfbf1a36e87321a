//! Helpers of the extended array kernels (splits, scans, top-k, einsum …).

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, Status};

use crate::array::util::type_attr_in;

/// A type attr that must be one of `allowed` (the types this CPU kernel implements);
/// otherwise NotFound, as TensorFlow answers for a missing kernel.
pub(crate) fn kernel_dtype(n: &NodeDef, attr: &str, allowed: &[DataType]) -> Result<DataType, Status> {
    type_attr_in(n, attr, allowed, |t| {
        Status::not_found(format!(
            "No registered '{}' OpKernel for 'CPU' devices compatible with node {{{{node {}}}}}: {attr}={t}",
            n.op, n.name
        ))
    })
}

/// `axis` in `[-rank, rank)` as a dimension index, else `None`.
pub(crate) fn norm_axis(axis: i64, rank: usize) -> Option<usize> {
    let r = rank as i64;
    (axis >= -r && axis < r).then(|| if axis < 0 { axis + r } else { axis } as usize)
}

/// Elements above which a kernel splits its work across the compute pool.
pub(crate) const PAR_MIN: usize = 1 << 15;

/// The elements of an int16, int32 or int64 tensor as i64.
pub(crate) fn indices_i64(t: &ferroflow_core::Tensor) -> Result<Vec<i64>, Status> {
    match t.dtype() {
        DataType::Int16 => Ok(t.as_slice::<i16>()?.iter().map(|&v| v as i64).collect()),
        DataType::UInt16 => Ok(t.as_slice::<u16>()?.iter().map(|&v| v as i64).collect()),
        _ => crate::array::util::index_vec(t),
    }
}
