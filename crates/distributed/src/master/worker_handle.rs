//! How the master reaches one task's worker: directly when it is this server's own worker
//! (no serialization, no loopback copy), else over gRPC with a deadline on every call.
//! Errors name the task and its address.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use ferroflow_core::proto::*;
use ferroflow_core::Status;
use tonic::transport::Channel;

use crate::raw_grpc;
use crate::rpc_util::{from_grpc, request_with_deadline, until, RELEASES_STEPS};
use crate::status_in_body::StatusInBody;
use crate::tensor_wire::encode_run_graph_request;

/// The RunGraph call's gRPC path.
const RUN_GRAPH: &str = "/tensorflow.WorkerService/RunGraph";
use crate::worker::Worker;

/// A task's worker, local or remote.
#[derive(Clone)]
pub(crate) enum WorkerHandle {
    Local(Arc<Worker>),
    /// The channel to a remote worker (RunGraph is called below tonic's codec, the other
    /// methods through the generated client).
    Remote(Channel),
}

/// A worker handle with the task it belongs to.
#[derive(Clone)]
pub(crate) struct TaskWorker {
    /// `/job:J/replica:0/task:T`.
    pub(crate) task: String,
    /// `host:port`.
    pub(crate) addr: String,
    pub(crate) handle: WorkerHandle,
    /// The worker releases a step's state itself once the step succeeded there (ferroflow
    /// workers do; their GetStatus and RunGraph replies say so in a [`RELEASES_STEPS`]
    /// header), so no
    /// CleanupGraph is needed after a successful step. Learned from the first reply.
    releases_steps: Arc<AtomicBool>,
}

/// A call on a remote worker with the deadline, errors naming the task; `@response`
/// keeps the whole gRPC response (its metadata), else the message.
macro_rules! remote_call {
    (@response $self:ident, $client:ident, $method:ident, $req:expr, $deadline:expr, $what:expr) => {{
        let mut c = crate::channels::worker_client($client.clone());
        let ctx = $self.context($what);
        let fut = async move { c.$method(request_with_deadline($req, $deadline)).await.map_err(|e| from_grpc(&e, &ctx)) };
        until($deadline, || $self.context($what), fut).await
    }};
    ($self:ident, $client:ident, $method:ident, $req:expr, $deadline:expr, $what:expr) => {
        remote_call!(@response $self, $client, $method, $req, $deadline, $what).map(|r| r.into_inner())
    };
}

impl TaskWorker {
    pub(crate) fn new(task: String, addr: String, handle: WorkerHandle) -> TaskWorker {
        let local = matches!(handle, WorkerHandle::Local(_));
        TaskWorker { task, addr, handle, releases_steps: Arc::new(AtomicBool::new(local)) }
    }

    /// Whether the task is another process (not this server's own worker).
    pub(crate) fn is_remote(&self) -> bool {
        matches!(self.handle, WorkerHandle::Remote(_))
    }

    /// Whether a successful step needs no CleanupGraph on this task.
    pub(crate) fn releases_steps(&self) -> bool {
        self.releases_steps.load(Ordering::Relaxed)
    }

    /// Whether this task is known to be a ferroflow worker (this server's own, or a remote
    /// one whose GetStatus or RunGraph reply said so).
    pub(crate) fn is_ferroflow(&self) -> bool {
        self.releases_steps()
    }

    fn note_reply_headers(&self, headers: &tonic::metadata::MetadataMap) {
        if headers.contains_key(RELEASES_STEPS) {
            self.releases_steps.store(true, Ordering::Relaxed);
        }
    }

    /// "`what` on task T (addr)".
    pub(crate) fn context(&self, what: &str) -> String {
        format!("{what} on task {} ({})", self.task, self.addr)
    }

    fn local_err(&self, what: &str, e: Status) -> Status {
        e.context(self.context(what))
    }

    pub(crate) async fn get_status(&self, deadline: Instant) -> Result<GetStatusResponse, Status> {
        match &self.handle {
            WorkerHandle::Local(w) => Ok(w.get_status()),
            WorkerHandle::Remote(c) => {
                let r = remote_call!(@response self, c, get_status, GetStatusRequest {}, deadline, "GetStatus")?;
                self.note_reply_headers(r.metadata());
                Ok(r.into_inner())
            }
        }
    }

    pub(crate) async fn create_worker_session(
        &self,
        req: CreateWorkerSessionRequest,
        deadline: Instant,
    ) -> Result<(), Status> {
        match &self.handle {
            WorkerHandle::Local(w) => {
                w.create_worker_session(&req).map_err(|e| self.local_err("CreateWorkerSession", e))
            }
            WorkerHandle::Remote(c) => {
                remote_call!(self, c, create_worker_session, req, deadline, "CreateWorkerSession").map(|_| ())
            }
        }
    }

    pub(crate) async fn delete_worker_session(&self, handle: &str, deadline: Instant) -> Result<(), Status> {
        let req = DeleteWorkerSessionRequest { session_handle: handle.to_string() };
        match &self.handle {
            WorkerHandle::Local(w) => {
                w.delete_worker_session(&req);
                Ok(())
            }
            WorkerHandle::Remote(c) => {
                remote_call!(self, c, delete_worker_session, req, deadline, "DeleteWorkerSession").map(|_| ())
            }
        }
    }

    pub(crate) async fn register_graph(&self, req: RegisterGraphRequest, deadline: Instant) -> Result<String, Status> {
        match &self.handle {
            WorkerHandle::Local(w) => {
                w.register_graph(req).map(|r| r.graph_handle).map_err(|e| self.local_err("RegisterGraph", e))
            }
            WorkerHandle::Remote(c) => {
                remote_call!(self, c, register_graph, req, deadline, "RegisterGraph").map(|r| r.graph_handle)
            }
        }
    }

    /// RunGraph; an error stored in the reply body is returned as an error.
    pub(crate) async fn run_graph(&self, req: RunGraphRequest, deadline: Instant) -> Result<RunGraphResponse, Status> {
        let resp = match &self.handle {
            WorkerHandle::Local(w) => {
                w.run_graph(req, Some(deadline)).await.map_err(|e| self.local_err("RunGraph", e))?
            }
            WorkerHandle::Remote(ch) => {
                // Below tonic's codec: fed tensors go out and returned ones come in as
                // their own buffers (no encode copy, no growing decode buffer).
                let ctx = self.context("RunGraph");
                let frames = encode_run_graph_request(req)?;
                let bytes = crate::metrics::peer(&self.addr);
                let call =
                    raw_grpc::unary_frames::<RunGraphResponse>(ch.clone(), RUN_GRAPH, frames, deadline, &ctx, &bytes);
                let (r, headers) = until(deadline, || self.context("RunGraph"), call).await?;
                if headers.contains_key(RELEASES_STEPS) {
                    self.releases_steps.store(true, Ordering::Relaxed);
                }
                r
            }
        };
        resp.into_result().map_err(|e| e.context(self.context("RunGraph")))
    }

    pub(crate) async fn cleanup_graph(&self, step_id: i64, deadline: Instant) -> Result<(), Status> {
        let req = CleanupGraphRequest { step_id };
        match &self.handle {
            WorkerHandle::Local(w) => {
                w.cleanup_graph(&req);
                Ok(())
            }
            WorkerHandle::Remote(c) => remote_call!(self, c, cleanup_graph, req, deadline, "CleanupGraph").map(|_| ()),
        }
    }

    pub(crate) async fn cleanup_all(&self, containers: Vec<String>, deadline: Instant) -> Result<(), Status> {
        let req = CleanupAllRequest { container: containers };
        match &self.handle {
            WorkerHandle::Local(w) => {
                w.cleanup_all(&req);
                Ok(())
            }
            WorkerHandle::Remote(c) => remote_call!(self, c, cleanup_all, req, deadline, "CleanupAll").map(|_| ()),
        }
    }
}
