//! What a master, a step's rendezvous or a task calling a function on a peer asks of one
//! task's worker, without a transport: TensorFlow's WorkerInterface. [`Worker`] answers it
//! in-process; `rpc::RemoteWorker` over gRPC. Peers are found through a
//! [`crate::WorkerCache`]. RunGraph and RecvTensor carry [`Tensor`]s, so a partition run
//! by a worker of this process never encodes or decodes one; the proto conversions live
//! once, in `rpc/`.

use std::time::Instant;

use ferroflow_core::proto::{
    CleanupAllRequest, CleanupGraphRequest, CreateWorkerSessionRequest, DeleteWorkerSessionRequest,
    DeregisterGraphRequest, GetStatusResponse, RecvTensorRequest, RegisterGraphRequest, RegisterGraphResponse,
    RunGraphRequest, StepStats,
};
use ferroflow_core::proto::{
    CompleteGroupRequest, CompleteGroupResponse, CompleteInstanceRequest, CompleteInstanceResponse,
    GetStepSequenceRequest, GetStepSequenceResponse, RecvBufRequest,
};
use ferroflow_core::{Status, Tensor};

use crate::worker::Worker;

/// A RunGraph request: the wire request's fields, with the fed tensors (`send`, by
/// rendezvous key) as tensors; `req.send` is left empty.
#[derive(Clone, Debug, Default)]
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

/// At most this many tensors per batched RecvTensors call (a partition's receives from
/// one peer in one step).
pub const MAX_RECV_BATCH: usize = 4096;

/// Where a batched RecvTensors call hands each tensor (and its is_dead flag) as it
/// arrives, with the index of its request.
pub type Deliver<'a> = &'a mut (dyn FnMut(usize, Result<(Tensor, bool), Status>) + Send);

/// A batched RecvTensors call: its requests, and where their tensors go.
pub struct RecvBatch<'a> {
    pub reqs: &'a [RecvTensorRequest],
    pub deliver: Deliver<'a>,
}

/// A collective's RPC to a peer task (the group leader, or the member that provided a chunk).
#[derive(Clone, Debug)]
pub enum CollectiveRpc {
    /// CompleteGroup (to the leader): waits until the group is complete.
    CompleteGroup(CompleteGroupRequest),
    /// CompleteInstance (to the leader): a broadcast's source rank.
    CompleteInstance(CompleteInstanceRequest),
    /// RecvBuf (to the provider): a chunk's bytes, once provided.
    RecvBuf(RecvBufRequest),
    /// GetStepSequence (to the leader): the step ids of collective graphs.
    GetStepSequence(GetStepSequenceRequest),
}

/// The reply to a [`CollectiveRpc`]; RecvBuf's carries the chunk's raw bytes.
#[derive(Clone, Debug)]
pub enum CollectiveReply {
    /// CompleteGroup's.
    CompleteGroup(CompleteGroupResponse),
    /// CompleteInstance's.
    CompleteInstance(CompleteInstanceResponse),
    /// RecvBuf's bytes.
    RecvBuf(Vec<u8>),
    /// GetStepSequence's.
    GetStepSequence(GetStepSequenceResponse),
}

impl CollectiveRpc {
    /// TensorFlow's method name.
    pub fn name(&self) -> &'static str {
        match self {
            CollectiveRpc::CompleteGroup(_) => "CompleteGroup",
            CollectiveRpc::CompleteInstance(_) => "CompleteInstance",
            CollectiveRpc::RecvBuf(_) => "RecvBuf",
            CollectiveRpc::GetStepSequence(_) => "GetStepSequence",
        }
    }
}

/// The RPCs a [`WorkerApi`] serves, as fault filters and metrics name them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WorkerRpc {
    /// GetStatus.
    GetStatus,
    /// CreateWorkerSession.
    CreateWorkerSession,
    /// DeleteWorkerSession.
    DeleteWorkerSession,
    /// RegisterGraph.
    RegisterGraph,
    /// DeregisterGraph.
    DeregisterGraph,
    /// RunGraph.
    RunGraph,
    /// CleanupGraph.
    CleanupGraph,
    /// CleanupAll.
    CleanupAll,
    /// RecvTensor, single or batched.
    RecvTensor,
    /// The collectives' RPCs: CompleteGroup, CompleteInstance, RecvBuf, GetStepSequence.
    Collective,
}

impl WorkerRpc {
    /// TensorFlow's method name.
    pub fn name(self) -> &'static str {
        match self {
            WorkerRpc::GetStatus => "GetStatus",
            WorkerRpc::CreateWorkerSession => "CreateWorkerSession",
            WorkerRpc::DeleteWorkerSession => "DeleteWorkerSession",
            WorkerRpc::RegisterGraph => "RegisterGraph",
            WorkerRpc::DeregisterGraph => "DeregisterGraph",
            WorkerRpc::RunGraph => "RunGraph",
            WorkerRpc::CleanupGraph => "CleanupGraph",
            WorkerRpc::CleanupAll => "CleanupAll",
            WorkerRpc::RecvTensor => "RecvTensor",
            WorkerRpc::Collective => "Collective",
        }
    }
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

    /// DeregisterGraph: forgets a registered partition.
    async fn deregister_graph(&self, req: DeregisterGraphRequest, deadline: Instant) -> Result<(), Status>;

    /// RecvTensor: the tensor a step's `_Send` on this task produced under the request's
    /// key, and its is_dead flag; waits (bounded) until it is produced.
    async fn recv_tensor(&self, req: RecvTensorRequest, deadline: Instant) -> Result<(Tensor, bool), Status>;

    /// Whether [`WorkerApi::recv_tensors`] may be tried (until the peer said it does not
    /// serve it: a TensorFlow task).
    fn serves_batches(&self) -> bool {
        false
    }

    /// ferroflow's batched RecvTensor: every request's tensor handed to `deliver` as soon
    /// as it is ready, in completion order. The status once all were delivered or the
    /// first failed (the undelivered ones are left to the caller). A peer without batches
    /// answers UNIMPLEMENTED before delivering anything.
    async fn recv_tensors(&self, batch: RecvBatch<'_>, deadline: Instant) -> Result<(), Status> {
        let _ = (batch, deadline);
        Err(Status::unimplemented("this worker does not serve batched RecvTensors"))
    }

    /// A collective's RPC.
    async fn collective(&self, req: CollectiveRpc, deadline: Instant) -> Result<CollectiveReply, Status>;
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

    async fn deregister_graph(&self, req: DeregisterGraphRequest, _: Instant) -> Result<(), Status> {
        Worker::deregister_graph(self, &req)
    }

    async fn recv_tensor(&self, req: RecvTensorRequest, deadline: Instant) -> Result<(Tensor, bool), Status> {
        self.recv_tensor_served.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Worker::recv_value(self, &req, Some(deadline)).await
    }

    fn serves_batches(&self) -> bool {
        true
    }

    async fn recv_tensors(&self, batch: RecvBatch<'_>, deadline: Instant) -> Result<(), Status> {
        use std::sync::atomic::Ordering::Relaxed;
        let RecvBatch { reqs, deliver } = batch;
        crate::fail_points::hit(self.fail.as_deref(), crate::fail_points::RECV_TENSOR, &self.task, Some(deadline))
            .await?;
        self.batches_served[0].fetch_add(1, Relaxed);
        self.batches_served[1].fetch_add(reqs.len() as u64, Relaxed);
        // Each receive waits on its own: a tensor that is ready is never held back by one
        // that is not (the same rule as the gRPC stream's).
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut wait_until = deadline;
        for (i, r) in reqs.iter().enumerate() {
            let tx = tx.clone();
            wait_until = self.recv_waiting(r, Some(deadline), Box::new(move |v| drop(tx.send((i, v)))))?;
        }
        drop(tx);
        let mut left: Vec<bool> = vec![true; reqs.len()];
        for _ in 0..reqs.len() {
            let next = tokio::time::timeout_at(tokio::time::Instant::from_std(wait_until), rx.recv()).await;
            let (i, r) = match next {
                Ok(Some(x)) => x,
                Ok(None) => return Err(Status::internal("rendezvous dropped a pending receive")),
                Err(_) => {
                    let key = left.iter().position(|&l| l).map_or("", |i| reqs[i].rendezvous_key.as_str());
                    return Err(Status::deadline_exceeded(format!(
                        "RecvTensors on {}: tensor '{key}' was not produced in time",
                        self.task
                    )));
                }
            };
            left[i] = false;
            let failed = r.as_ref().err().cloned();
            if r.is_ok() {
                self.steps.release_if_drained(reqs[i].step_id);
            }
            deliver(i, r);
            if let Some(e) = failed {
                return Err(e);
            }
        }
        Ok(())
    }

    async fn collective(&self, req: CollectiveRpc, deadline: Instant) -> Result<CollectiveReply, Status> {
        self.collectives.serve(req, self.incarnation, deadline).await
    }
}
