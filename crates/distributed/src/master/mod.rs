//! The master: TensorFlow's MasterService (sessions, step planning and execution across
//! the cluster's workers).

mod discovery;
mod fetch_at_source;
mod grpc;
#[allow(clippy::module_inception)]
mod master;
mod plan;
mod run_step;
pub(crate) mod run_step_http;
mod session;
mod worker_handle;

pub use grpc::MasterGrpc;
pub use master::{Master, MasterOptions};
