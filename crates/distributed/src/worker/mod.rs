//! The worker: TensorFlow's WorkerService (GetStatus, worker sessions, RegisterGraph,
//! RunGraph, RecvTensor, cleanup), its per-step rendezvous tables and the remote
//! rendezvous that pulls tensors from peer tasks.

mod collective_call;
mod partial_run;
mod register;
mod remote_call;
mod remote_rendezvous;
mod run_graph;
mod session;
mod step_table;
#[allow(clippy::module_inception)]
mod worker;

pub use worker::{Worker, WorkerOptions};
