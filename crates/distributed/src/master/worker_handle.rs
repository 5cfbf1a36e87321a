//! How the master reaches one task's worker: a [`WorkerApi`], this server's own worker
//! (called directly: no serialization, no loopback copy) or a peer's from the worker
//! cache. Errors name the task and its address.

use std::sync::Arc;
use std::time::Instant;

use ferroflow_core::proto::*;
use ferroflow_core::Status;

use crate::worker::Worker;
use crate::worker_api::{RunGraphCall, RunGraphReply, WorkerApi};

/// A worker with the task it belongs to.
#[derive(Clone)]
pub(crate) struct TaskWorker {
    /// `/job:J/replica:0/task:T`.
    pub(crate) task: String,
    /// `host:port`.
    pub(crate) addr: String,
    pub(crate) api: Arc<dyn WorkerApi>,
    /// Whether `api` is a peer task's (its errors already name the task).
    remote: bool,
}

impl TaskWorker {
    /// This server's own worker, as task `task` at `addr`.
    pub(crate) fn local(task: String, addr: String, worker: Arc<Worker>) -> TaskWorker {
        TaskWorker { task, addr, api: worker, remote: false }
    }

    /// The worker of peer task `task` at `addr`, as the worker cache gave it.
    pub(crate) fn peer(task: String, addr: String, api: Arc<dyn WorkerApi>) -> TaskWorker {
        TaskWorker { task, addr, api, remote: true }
    }

    /// Whether the task is a peer (not this server's own worker).
    pub(crate) fn is_remote(&self) -> bool {
        self.remote
    }

    /// Whether a successful step needs no CleanupGraph on this task.
    pub(crate) fn releases_steps(&self) -> bool {
        self.api.releases_steps()
    }

    /// Whether this task is known to be a ferroflow worker (this server's own, or a remote
    /// one whose GetStatus or RunGraph reply said so).
    pub(crate) fn is_ferroflow(&self) -> bool {
        self.releases_steps()
    }

    /// "`what` on task T (addr)".
    pub(crate) fn context(&self, what: &str) -> String {
        format!("{what} on task {} ({})", self.task, self.addr)
    }

    /// The error with the task named: as a payload always, in the message for the local
    /// worker (a peer's names it already).
    fn named<T>(&self, what: &str, r: Result<T, Status>) -> Result<T, Status> {
        let r = r.map_err(|e| e.with_task(&self.task));
        if self.remote {
            r
        } else {
            r.map_err(|e| e.context(self.context(what)))
        }
    }

    pub(crate) async fn get_status(&self, deadline: Instant) -> Result<GetStatusResponse, Status> {
        self.named("GetStatus", self.api.get_status(deadline).await)
    }

    pub(crate) async fn create_worker_session(
        &self,
        req: CreateWorkerSessionRequest,
        deadline: Instant,
    ) -> Result<(), Status> {
        self.named("CreateWorkerSession", self.api.create_worker_session(req, deadline).await)
    }

    pub(crate) async fn delete_worker_session(&self, handle: &str, deadline: Instant) -> Result<(), Status> {
        let req = DeleteWorkerSessionRequest { session_handle: handle.to_string() };
        self.named("DeleteWorkerSession", self.api.delete_worker_session(req, deadline).await)
    }

    pub(crate) async fn register_graph(&self, req: RegisterGraphRequest, deadline: Instant) -> Result<String, Status> {
        self.named("RegisterGraph", self.api.register_graph(req, deadline).await).map(|r| r.graph_handle)
    }

    /// RunGraph; an error stored in a remote reply's body is returned as an error.
    pub(crate) async fn run_graph(&self, call: RunGraphCall, deadline: Instant) -> Result<RunGraphReply, Status> {
        self.named("RunGraph", self.api.run_graph(call, deadline).await)
    }

    pub(crate) async fn cleanup_graph(&self, step_id: i64, deadline: Instant) -> Result<(), Status> {
        self.named("CleanupGraph", self.api.cleanup_graph(CleanupGraphRequest { step_id }, deadline).await)
    }

    pub(crate) async fn cleanup_all(&self, containers: Vec<String>, deadline: Instant) -> Result<(), Status> {
        self.named("CleanupAll", self.api.cleanup_all(CleanupAllRequest { container: containers }, deadline).await)
    }
}
