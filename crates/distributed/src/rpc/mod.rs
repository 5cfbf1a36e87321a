//! The transport: the core's [`crate::MasterApi`] and [`crate::WorkerApi`] spoken as
//! TensorFlow's gRPC services. One adapter per tensor-carrying call (`run_step`,
//! `run_graph`, `recv_tensor`, `recv_tensors`) converts protos to the core's types and
//! back and applies the status-in-body rule, for the raw HTTP/2 path and the tonic
//! service alike; `remote_master` and `remote_worker` are the client sides.

pub(crate) mod convert;
mod master_service;
pub(crate) mod recv_tensor;
pub(crate) mod recv_tensors;
mod remote_master;
mod remote_worker;
pub(crate) mod run_graph;
pub(crate) mod run_step;
pub(crate) mod status_in_body;
mod worker_service;

pub use master_service::MasterGrpc;
pub(crate) use remote_master::RemoteMaster;
pub(crate) use remote_worker::RemoteWorker;
pub use worker_service::WorkerGrpc;
