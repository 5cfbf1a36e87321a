//! CPU kernels of ferroflow, by family, plus the kernel interface ([`OpKernel`],
//! [`OpContext`]), the per-task [`ResourceMgr`] and the [`Rendezvous`] interface.
//!
//! A kernel is created once per node from its `NodeDef` (attrs parsed then, with defaults
//! already filled by the graph layer) and computed once per step.

#[macro_use]
mod kernel_macro;

/// Declares modules that are public for the crate's tests and benches but not part of its
/// documented API: `#[doc(hidden)] pub mod` each (with any attributes written before a name).
macro_rules! hidden_mods {
    ($($(#[$a:meta])* $m:ident),* $(,)?) => { $( $(#[$a])* #[doc(hidden)] pub mod $m; )* };
}

pub mod array;
mod audio;
mod cancel;
pub mod collective;
mod complex;
mod context;
mod ctc;
pub mod data_flow;
mod decode;
mod decode_compressed;
mod dispatch;
mod fake_quant;
pub mod image;
pub mod io;
pub mod isa;
mod kernel;
mod linalg;
pub mod math;
pub mod nn;
pub mod ragged;
pub mod random;
pub mod real;
mod registry;
mod rendezvous;
mod resource;
mod signal;
pub mod sparse;
pub mod state;
pub mod step_trace;
pub mod string;
pub mod summary;
pub mod testutil;
pub mod timer;

pub use cancel::CancelToken;
pub use collective::{CollectiveCall, CollectiveDone, CollectiveKind, MergeOp};
pub use context::{OpContext, StepCtx, Value};
pub use kernel::{AsyncOpKernel, DoneCallback, OpKernel};
pub use registry::{create_kernel, has_kernel, registry, KernelFactory, KernelRegistry};
pub use rendezvous::{
    key_in_frame, unreachable_task_call, FunctionCall, FunctionDone, ParsedKey, RecvCallback, Rendezvous,
};
pub use resource::{ResourceMgr, Var};
pub use step_trace::StepTrace;

pub use ferroflow_core::{DataType, NodeAttrs, Result, Shape, Status, Tensor};
