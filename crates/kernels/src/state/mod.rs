//! State kernels: resource variables (`VarHandleOp`, `ReadVariableOp`, …), reference
//! variables (`VariableV2`, `Assign`, …), row-wise gathers and scatters, and the optimizer
//! apply ops that update them.

mod count_up_to;
pub mod handle;
#[doc(hidden)]
pub mod lock;
#[doc(hidden)]
pub mod par;
mod ref_vars;
mod resource_vars;
mod sparse;
pub mod training;
#[doc(hidden)]
pub mod update;

pub use handle::{make_var_handle, DEFAULT_CONTAINER, VAR_TYPE_NAME};
pub use resource_vars::ANONYMOUS_NAME;

use crate::KernelRegistry;

/// Registers this family's kernels.
pub(crate) fn register(r: &mut KernelRegistry) {
    ferroflow_core::register_modules! { r: resource_vars, ref_vars, count_up_to, sparse, training }
}
