//! A peer task's worker over gRPC: [`WorkerApi`] as calls on a channel, each with its
//! deadline and errors naming the task and its address. RunGraph goes below tonic's codec
//! (fed tensors go out and returned ones come in as their own buffers); the other methods
//! through the generated client.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use ferroflow_core::proto::*;
use ferroflow_core::{Code, Status, Tensor};
use tonic::transport::Channel;

use super::recv_client::{recv_tensor, recv_tensors};
use crate::channels::ChannelCache;
use crate::worker_api::RecvBatch;

use super::status_in_body::StatusInBody;
use crate::raw_grpc;
use crate::rpc_util::{from_grpc_call, request_with_deadline, until, RELEASES_STEPS};
use crate::tensor_wire::encode_run_graph_request;
use crate::worker_api::{CollectiveReply, CollectiveRpc, RunGraphCall, RunGraphReply, WorkerApi};

use super::run_graph::PATH as RUN_GRAPH;

/// A remote task's worker.
pub(crate) struct RemoteWorker {
    task: String,
    addr: String,
    channel: Channel,
    /// The cache the channel came from: it remembers peers without batched receives.
    channels: Arc<ChannelCache>,
    /// Learned from the first reply that carries the [`RELEASES_STEPS`] header.
    releases_steps: AtomicBool,
}

/// A call through the generated client with the deadline, errors naming the task.
macro_rules! call {
    ($self:ident, $method:ident, $req:expr, $deadline:expr, $what:expr) => {{
        let mut c = crate::channels::worker_client($self.channel.clone());
        let ctx = $self.context($what);
        let deadline = $deadline;
        let fut = async move {
            c.$method(request_with_deadline($req, deadline)).await.map_err(|e| from_grpc_call(&e, &ctx, deadline))
        };
        until(deadline, || $self.context($what), fut).await
    }};
}

impl RemoteWorker {
    /// The worker of task `task` at `addr`, over a channel of `channels`.
    pub(crate) fn new(task: String, addr: String, channels: Arc<ChannelCache>) -> Result<RemoteWorker, Status> {
        let channel = channels.channel(&addr)?;
        Ok(RemoteWorker { task, addr, channel, channels, releases_steps: AtomicBool::new(false) })
    }

    /// "`what` on task T (addr)".
    fn context(&self, what: &str) -> String {
        format!("{what} on task {} ({})", self.task, self.addr)
    }

    fn note_releases(&self, said: bool) {
        if said {
            self.releases_steps.store(true, Ordering::Relaxed);
        }
    }
}

#[async_trait::async_trait]
impl WorkerApi for RemoteWorker {
    fn releases_steps(&self) -> bool {
        self.releases_steps.load(Ordering::Relaxed)
    }

    async fn get_status(&self, deadline: Instant) -> Result<GetStatusResponse, Status> {
        let r = call!(self, get_status, GetStatusRequest {}, deadline, "GetStatus")?;
        self.note_releases(r.metadata().contains_key(RELEASES_STEPS));
        Ok(r.into_inner())
    }

    async fn create_worker_session(&self, req: CreateWorkerSessionRequest, deadline: Instant) -> Result<(), Status> {
        call!(self, create_worker_session, req, deadline, "CreateWorkerSession").map(|_| ())
    }

    async fn delete_worker_session(&self, req: DeleteWorkerSessionRequest, deadline: Instant) -> Result<(), Status> {
        call!(self, delete_worker_session, req, deadline, "DeleteWorkerSession").map(|_| ())
    }

    async fn register_graph(
        &self,
        req: RegisterGraphRequest,
        deadline: Instant,
    ) -> Result<RegisterGraphResponse, Status> {
        call!(self, register_graph, req, deadline, "RegisterGraph").map(|r| r.into_inner())
    }

    async fn run_graph(&self, call: RunGraphCall, deadline: Instant) -> Result<RunGraphReply, Status> {
        let ctx = self.context("RunGraph");
        let frames = encode_run_graph_request(call.into_proto())?;
        let bytes = crate::metrics::peer(&self.addr);
        let c = raw_grpc::Call { channel: self.channel.clone(), path: RUN_GRAPH, deadline, what: &ctx, peer: &bytes };
        let fut = raw_grpc::unary::<RunGraphResponse>(c, frames);
        let (r, headers) = until(deadline, || self.context("RunGraph"), fut).await?;
        self.note_releases(headers.contains_key(RELEASES_STEPS));
        let r = r.into_result().map_err(|e| e.context(&ctx))?;
        RunGraphReply::from_proto(r, &ctx)
    }

    async fn cleanup_graph(&self, req: CleanupGraphRequest, deadline: Instant) -> Result<(), Status> {
        call!(self, cleanup_graph, req, deadline, "CleanupGraph").map(|_| ())
    }

    async fn cleanup_all(&self, req: CleanupAllRequest, deadline: Instant) -> Result<(), Status> {
        call!(self, cleanup_all, req, deadline, "CleanupAll").map(|_| ())
    }

    async fn deregister_graph(&self, req: DeregisterGraphRequest, deadline: Instant) -> Result<(), Status> {
        call!(self, deregister_graph, req, deadline, "DeregisterGraph").map(|_| ())
    }

    async fn recv_tensor(&self, req: RecvTensorRequest, deadline: Instant) -> Result<(Tensor, bool), Status> {
        let what = self.context("RecvTensor");
        let peer = crate::metrics::peer(&self.addr);
        recv_tensor(self.channel.clone(), &req, deadline, &what, &peer).await
    }

    fn serves_batches(&self) -> bool {
        self.channels.batches_to(&self.addr)
    }

    async fn recv_tensors(&self, batch: RecvBatch<'_>, deadline: Instant) -> Result<(), Status> {
        let RecvBatch { reqs, deliver } = batch;
        let what = self.context(&format!("RecvTensors of {} tensors", reqs.len()));
        let peer = crate::metrics::peer(&self.addr);
        let mut delivered = false;
        let mut counted = |i: usize, r: Result<(Tensor, bool), Status>| {
            delivered = true;
            deliver(i, r)
        };
        let r = recv_tensors(self.channel.clone(), reqs, deadline, &what, &peer, &mut counted).await;
        if let Err(e) = &r {
            if e.code == Code::Unimplemented && !delivered {
                tracing::debug!(peer = %self.addr, "peer does not serve batched RecvTensors; one call per tensor");
                self.channels.no_batches_to(&self.addr);
            }
        }
        r
    }

    async fn collective(&self, req: CollectiveRpc, deadline: Instant) -> Result<CollectiveReply, Status> {
        Ok(match req {
            CollectiveRpc::CompleteGroup(r) => {
                CollectiveReply::CompleteGroup(call!(self, complete_group, r, deadline, "CompleteGroup")?.into_inner())
            }
            CollectiveRpc::CompleteInstance(r) => CollectiveReply::CompleteInstance(
                call!(self, complete_instance, r, deadline, "CompleteInstance")?.into_inner(),
            ),
            CollectiveRpc::GetStepSequence(r) => CollectiveReply::GetStepSequence(
                call!(self, get_step_sequence, r, deadline, "GetStepSequence")?.into_inner(),
            ),
            CollectiveRpc::RecvBuf(r) => {
                let want = r.num_bytes;
                let resp = call!(self, recv_buf, r, deadline, "RecvBuf")?.into_inner();
                CollectiveReply::RecvBuf(super::convert::recv_buf_bytes(resp, want)?)
            }
        })
    }
}
