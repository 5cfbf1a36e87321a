//! The transport: the core's [`crate::MasterApi`] and [`crate::WorkerApi`] spoken as
//! TensorFlow's gRPC services. One adapter per tensor-carrying call (`run_step`,
//! `run_graph`, `recv_tensor`, `recv_tensors`) converts protos to the core's types and
//! back and applies the status-in-body rule on the raw HTTP/2 path; the tonic services
//! serve the other RPCs (one handler per RPC); `remote_master` and `remote_worker` are the
//! client sides.

pub(crate) mod convert;
mod eager_service;
mod master_service;
mod recv_client;
pub(crate) mod recv_tensor;
pub(crate) mod recv_tensors;
mod remote_master;
mod remote_worker;
pub(crate) mod run_graph;
pub(crate) mod run_step;
pub(crate) mod status_in_body;
mod worker_service;

pub(crate) use eager_service::EagerGrpc;
pub(crate) use master_service::MasterGrpc;
pub(crate) use remote_master::RemoteMaster;
pub(crate) use remote_worker::RemoteWorker;
pub(crate) use worker_service::WorkerGrpc;

/// The answer of a tonic handler whose RPC is served below tonic (`Dispatch` routes its
/// path to the raw adapter, so the handler is never reached).
pub(crate) fn served_raw(method: &str) -> tonic::Status {
    tonic::Status::internal(format!("{method} is served on ferroflow's raw HTTP/2 path; this handler is not routed"))
}
