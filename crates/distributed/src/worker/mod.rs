//! The worker: TensorFlow's WorkerService (GetStatus, worker sessions, RegisterGraph,
//! RunGraph, RecvTensor, cleanup), its per-step rendezvous tables and the remote
//! rendezvous that pulls tensors from peer tasks.

mod grpc;
mod partial_run;
mod recv_batch;
pub(crate) mod recv_tensor_http;
pub(crate) mod recv_tensors_http;
mod register;
mod remote_call;
mod remote_rendezvous;
mod run_graph;
pub(crate) mod run_graph_http;
mod session;
mod step_table;
#[allow(clippy::module_inception)]
mod worker;

pub use grpc::WorkerGrpc;
pub use worker::{Worker, WorkerOptions};
