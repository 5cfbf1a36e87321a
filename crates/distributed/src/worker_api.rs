//! What a master (or a task calling a function on a peer) asks of one task's worker,
//! without a transport: TensorFlow's WorkerInterface. [`Worker`] answers it in-process;
//! `rpc::RemoteWorker` over gRPC. RunGraph's request and reply carry [`Tensor`]s, so a
//! partition run by this process's own worker never encodes or decodes one; the proto
//! conversions live once, in `rpc/`.

use std::time::Instant;

use ferroflow_core::proto::{
    CleanupAllRequest, CleanupGraphRequest, CreateWorkerSessionRequest, DeleteWorkerSessionRequest, GetStatusResponse,
    RegisterGraphRequest, RegisterGraphResponse, RunGraphRequest, StepStats,
};
use ferroflow_core::{Status, Tensor};

use crate::worker::Worker;

/// A RunGraph request: the wire request's fields, with the fed tensors (`send`, by
/// rendezvous key) as tensors; `req.send` is left empty.
#[derive(Debug, Default)]
pub struct RunGraphCall {
    /// Session, graph handle, step id, `recv_key`, partial-run flags, executor options.
    pub req: RunGraphRequest,
    /// The tensors fed to the partition, by rendezvous key.
    pub send: Vec<(String, Tensor)>,
}

/// A RunGraph reply: the tensors asked for by `recv_key`, and the step's trace when the
/// call asked for one.
#[derive(Debug, Default)]
pub struct RunGraphReply {
    /// The produced tensors, by rendezvous key.
    pub recv: Vec<(String, Tensor)>,
    /// The device's step statistics (with `exec_opts.record_timeline`).
    pub step_stats: Option<StepStats>,
}

/// One task's worker as a master sees it. Every call has a deadline; errors are statuses
/// naming the task.
#[async_trait::async_trait]
pub trait WorkerApi: Send + Sync {
    /// Whether the worker releases a successful step's state by itself (no CleanupGraph
    /// needed). A remote worker says so in its replies; until then this is false.
    fn releases_steps(&self) -> bool;

    /// GetStatus: the task's devices.
    async fn get_status(&self, deadline: Instant) -> Result<GetStatusResponse, Status>;

    /// CreateWorkerSession.
    async fn create_worker_session(&self, req: CreateWorkerSessionRequest, deadline: Instant) -> Result<(), Status>;

    /// DeleteWorkerSession.
    async fn delete_worker_session(&self, req: DeleteWorkerSessionRequest, deadline: Instant) -> Result<(), Status>;

    /// RegisterGraph: the partition's handle.
    async fn register_graph(
        &self,
        req: RegisterGraphRequest,
        deadline: Instant,
    ) -> Result<RegisterGraphResponse, Status>;

    /// RunGraph: runs one step of a registered partition.
    async fn run_graph(&self, call: RunGraphCall, deadline: Instant) -> Result<RunGraphReply, Status>;

    /// CleanupGraph: drops a step's state.
    async fn cleanup_graph(&self, req: CleanupGraphRequest, deadline: Instant) -> Result<(), Status>;

    /// CleanupAll: clears resource containers.
    async fn cleanup_all(&self, req: CleanupAllRequest, deadline: Instant) -> Result<(), Status>;
}

/// This process's own worker, called directly.
#[async_trait::async_trait]
impl WorkerApi for Worker {
    fn releases_steps(&self) -> bool {
        true
    }

    async fn get_status(&self, _: Instant) -> Result<GetStatusResponse, Status> {
        Ok(Worker::get_status(self))
    }

    async fn create_worker_session(&self, req: CreateWorkerSessionRequest, _: Instant) -> Result<(), Status> {
        Worker::create_worker_session(self, &req)
    }

    async fn delete_worker_session(&self, req: DeleteWorkerSessionRequest, _: Instant) -> Result<(), Status> {
        Worker::delete_worker_session(self, &req);
        Ok(())
    }

    async fn register_graph(&self, req: RegisterGraphRequest, _: Instant) -> Result<RegisterGraphResponse, Status> {
        Worker::register_graph(self, req)
    }

    async fn run_graph(&self, call: RunGraphCall, deadline: Instant) -> Result<RunGraphReply, Status> {
        Worker::run_graph(self, call, Some(deadline)).await
    }

    async fn cleanup_graph(&self, req: CleanupGraphRequest, _: Instant) -> Result<(), Status> {
        Worker::cleanup_graph(self, &req);
        Ok(())
    }

    async fn cleanup_all(&self, req: CleanupAllRequest, _: Instant) -> Result<(), Status> {
        Worker::cleanup_all(self, &req);
        Ok(())
    }
}
