//! Helpers shared by the math kernels: typed input access, kernel type checks, dtype
//! dispatch.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, Status, Tensor, TensorType};

use crate::array::util::{node_context, type_attr_in};
use crate::OpContext;

/// The kernel of one op `op` of an element-wise family (`Arith`, `Fun`, `Grad`) for the
/// element type `ty`; each family implements `make` and `OpKernel` for its own enum.
pub(crate) struct ElemKernel<E> {
    pub(crate) op: E,
    pub(crate) ty: DataType,
}

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
    type_attr_in(n, attr, allowed, |t| {
        node_context(
            &n.name,
            Status::not_found(format!(
                "no CPU kernel for op {} with {attr}={t} (supported: {})",
                n.op,
                allowed.iter().map(|d| d.name()).collect::<Vec<_>>().join(", ")
            )),
        )
    })
}
