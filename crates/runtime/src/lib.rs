//! ferroflow's runtime: the dataflow [`Executor`], the in-process rendezvous, the
//! feed/fetch rewrite and pruning, and [`DirectSession`] (an in-process session).

pub mod chrome_trace;
mod contain;
mod control_flow_info;
mod control_only;
mod data;
mod direct_session;
mod executor;
mod executor_build;
mod frames;
mod function;
mod function_graph;
pub mod grad_check;
mod lower_calls;
mod lower_calls_ops;
mod lower_while_reads;
pub mod placer;
mod remap;
mod remap_norm;
mod remap_pool;
mod remote_call;
mod rendezvous;
mod session;
mod while_loop;

pub use control_flow_info::{graph_frames, FrameSummary, GraphFrames};
pub use control_only::{convert_control_only, dependency_optimization_enabled};
pub use direct_session::{DirectSession, RunOptions, LOCAL_DEVICE};
pub use executor::{Executor, StepDone};
pub use function_graph::{function_graph, FunctionGraph};
pub use lower_calls::lower_spanning_calls;
pub use remap::{fuse_ops, fuse_ops_in_place, remapping_enabled};
pub use rendezvous::LocalRendezvous;
pub use session::{step_names, NamedStep, StepArgs, StepRunner};

/// Whether this build can run `op` on the CPU: a registered kernel, a function-call op or a
/// dataset op (the last two are built by the runtime, not the kernel registry).
pub fn runs_op(op: &str) -> bool {
    ferroflow_kernels::has_kernel(op) || function::CALL_OPS.contains(&op) || data::DATA_OPS.contains(&op)
}
