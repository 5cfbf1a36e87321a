//! The master: TensorFlow's MasterService (sessions, step planning and execution across
//! the cluster's workers).

mod at_source;
mod callable;
mod discovery;
mod late_tasks;
#[allow(clippy::module_inception)]
mod master;
mod partial_run;
mod plan;
mod run_step;
mod session;
mod session_table;
pub(crate) mod worker_handle;

pub use master::{Master, MasterOptions};
pub use session_table::DEFAULT_MAX_SESSIONS;

/// An `Identity` node reading `inputs`, for the master's unit tests.
#[cfg(test)]
pub(crate) fn test_node(name: &str, inputs: &[&str]) -> ferroflow_core::proto::NodeDef {
    crate::test_graphs::node(name, "Identity", "", inputs)
}
