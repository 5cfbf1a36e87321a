//! RunGraph (run one step of a registered partition) and RecvTensor (hand a tensor this
//! task sent in a step to the peer that asks for it).

use std::sync::Arc;
use std::time::Instant;

use ferroflow_core::proto::{RecvTensorRequest, RecvTensorResponse, StepStats};
use ferroflow_core::{Status, Tensor};
use ferroflow_kernels::{ParsedKey, Rendezvous, StepCtx, StepTrace};

use super::remote_rendezvous::RemoteRendezvous;
use super::step_table::StepEntry;
use super::worker::Worker;
use crate::fail_points::{hit, RECV_TENSOR, RUN_GRAPH_DONE, RUN_GRAPH_START};
use crate::rpc_util::remaining;
use crate::worker_api::{RunGraphCall, RunGraphReply};

/// Aborts the step if the RunGraph future is dropped before it finished (the caller
/// cancelled or went away), so the step's executors and RecvTensor calls end.
struct AbortStepOnDrop(Option<Arc<StepEntry>>);

impl Drop for AbortStepOnDrop {
    fn drop(&mut self) {
        if let Some(e) = self.0.take() {
            e.abort(Status::cancelled(format!("RunGraph of step {} was cancelled by its caller", e.step_id)));
        }
    }
}

impl Worker {
    /// RunGraph: loads `send` into the step's rendezvous, runs the partition until its
    /// deadline (the caller's, else the worker's default) and returns `recv_key`'s tensors.
    pub async fn run_graph(&self, call: RunGraphCall, deadline: Option<Instant>) -> Result<RunGraphReply, Status> {
        let RunGraphCall { req, send } = call;
        if req.is_partial || req.is_last_partial_run {
            return self.run_partial_graph(req, send, deadline).await;
        }
        hit(self.fail.as_deref(), RUN_GRAPH_START, &self.task, deadline).await?;
        let session = self.session(&req.session_handle, req.create_worker_session_called)?;
        let exec = session.graph(&req.graph_handle)?;
        let deadline = deadline.unwrap_or_else(|| Instant::now() + self.opts.default_step_timeout);
        let entry = self.steps.get_or_create(req.step_id, remaining(deadline) + self.opts.step_grace)?;
        if let Some(s) = entry.aborted() {
            return Err(s);
        }
        self.load_sends(&entry, send)?;
        let traced = req.exec_opts.as_ref().is_some_and(|o| o.record_timeline || o.record_costs);
        let trace = traced.then(|| Arc::new(StepTrace::new()));
        let step = self.step_ctx(&session, &entry, deadline, trace.clone());
        let (tx, rx) = tokio::sync::oneshot::channel();
        let mut guard = AbortStepOnDrop(Some(entry.clone()));
        // Real work never runs on the async threads: on one, the executor runs only cheap
        // nodes (a variable read, a `_Send`) and hands every other node to the compute
        // pool, so a step of cheap nodes answers without a thread hop. On the client's own
        // thread (which waits for this step anyway) it may also run one expensive node.
        let done: ferroflow_runtime::StepDone = Box::new(move |r| drop(tx.send(r)));
        if crate::local_master::on_client_thread() {
            exec.run_async(step, done);
        } else {
            exec.run_async_cheap_here(step, done);
        }
        let result = match tokio::time::timeout_at(tokio::time::Instant::from_std(deadline), rx).await {
            Ok(Ok(r)) => r,
            Ok(Err(_)) => Err(Status::internal("the executor dropped its completion")),
            Err(_) => {
                let s = Status::deadline_exceeded(format!(
                    "step {} on {} did not finish before its deadline{}",
                    req.step_id,
                    self.task,
                    entry.still_waiting()
                ));
                entry.abort(s.clone());
                Err(s)
            }
        };
        guard.0 = None;
        if let Err(e) = result {
            entry.abort(e.clone());
            return Err(e);
        }
        let mut recv = Vec::with_capacity(req.recv_key.len());
        for key in req.recv_key {
            let (t, dead) = entry.local.try_take(&key).ok_or_else(|| {
                Status::invalid_argument(format!(
                    "RunGraph on {}: recv_key '{key}' was not produced by graph {}",
                    self.task, req.graph_handle
                ))
            })?;
            if dead {
                // TensorFlow's words for a fetch on the untaken branch of a conditional.
                return Err(Status::internal(format!(
                    "The tensor returned for {key} was not valid (it is dead: on the untaken branch of a \
                     conditional)"
                )));
            }
            recv.push((key, t));
        }
        // The step succeeded here: its table goes once peers took what it sent, so a
        // ferroflow master need not send CleanupGraph (TensorFlow's still may: a no-op).
        self.steps.release_when_drained(&entry);
        hit(self.fail.as_deref(), RUN_GRAPH_DONE, &self.task, Some(deadline)).await?;
        let step_stats = trace.map(|t| StepStats { dev_stats: vec![t.device_stats(&session.device)] });
        Ok(RunGraphReply { recv, step_stats })
    }

    /// Puts a RunGraph's `send` tensors into the step's rendezvous (the partition's `_Recv`
    /// nodes of client feeds take them from there).
    pub(crate) fn load_sends(&self, entry: &StepEntry, send: Vec<(String, Tensor)>) -> Result<(), Status> {
        for (name, t) in send {
            entry.local.send(&name, t, false)?;
        }
        Ok(())
    }

    /// The kernels' view of one step of a partition on this task.
    pub(crate) fn step_ctx(
        &self,
        session: &Arc<super::session::WorkerSession>,
        entry: &Arc<StepEntry>,
        deadline: Instant,
        trace: Option<Arc<StepTrace>>,
    ) -> Arc<StepCtx> {
        let rendezvous = Arc::new(RemoteRendezvous {
            entry: entry.clone(),
            session: session.clone(),
            peers: self.peers.clone(),
            runtime: self.runtime.clone(),
            deadline,
            queued: Default::default(),
            trace: trace.clone(),
            collectives: self.collectives.clone(),
            incarnation: self.incarnation,
        });
        Arc::new(StepCtx {
            step_id: entry.step_id,
            rendezvous,
            resources: session.resources.clone(),
            step_container: Default::default(),
            cancel: entry.cancel.clone(),
            device: session.device.clone(),
            deadline: Some(deadline),
            session: session.handle.as_str().into(),
            trace,
        })
    }

    /// RecvTensor: waits (bounded by the caller's deadline and the worker's limit) for this
    /// task's `_Send` of (step_id, key), then replies with the tensor's raw bytes.
    pub async fn recv_tensor(
        &self,
        req: &RecvTensorRequest,
        deadline: Option<Instant>,
    ) -> Result<RecvTensorResponse, Status> {
        let (t, is_dead) = self.recv_value(req, deadline).await?;
        Ok(RecvTensorResponse {
            tensor: Some(t.to_proto()),
            is_dead,
            send_start_micros: micros_now(),
            ..Default::default()
        })
    }

    /// RecvTensor's tensor and is_dead flag, with no proto (a caller in this process).
    pub(crate) async fn recv_value(
        &self,
        req: &RecvTensorRequest,
        deadline: Option<Instant>,
    ) -> Result<(Tensor, bool), Status> {
        hit(self.fail.as_deref(), RECV_TENSOR, &self.task, deadline).await?;
        let (tx, rx) = tokio::sync::oneshot::channel();
        let start = Instant::now();
        let wait_until = self.recv_waiting(req, deadline, Box::new(move |r| drop(tx.send(r))))?;
        match tokio::time::timeout_at(tokio::time::Instant::from_std(wait_until), rx).await {
            Ok(Ok(Ok(v))) => {
                self.steps.release_if_drained(req.step_id);
                Ok(v)
            }
            Ok(Ok(Err(e))) => Err(e),
            Ok(Err(_)) => Err(Status::internal("rendezvous dropped a pending receive")),
            Err(_) => Err(Status::deadline_exceeded(format!(
                "RecvTensor on {}: tensor '{}' of step {} was not produced within {} ms (key '{}')",
                self.task,
                ParsedKey::parse(&req.rendezvous_key).map(|k| k.tensor_name).unwrap_or_default(),
                req.step_id,
                start.elapsed().as_millis().max(1),
                req.rendezvous_key
            ))),
        }
    }

    /// Hands `done` the tensor of (step_id, key) once this task's `_Send` produced it;
    /// returns when the wait ends at the latest (the caller's deadline, capped by the
    /// worker's limit). A key of another incarnation of this task is ABORTED at once.
    pub(crate) fn recv_waiting(
        &self,
        req: &RecvTensorRequest,
        deadline: Option<Instant>,
        done: ferroflow_kernels::RecvCallback,
    ) -> Result<Instant, Status> {
        let key = ParsedKey::parse(&req.rendezvous_key)?;
        if key.incarnation != self.incarnation {
            return Err(Status::aborted(format!(
                "RecvTensor expects a different device incarnation: {} vs. {}. Your worker job (\"{}\") was \
                 probably restarted. Check your worker job for the reason why it was restarted.",
                key.incarnation, self.incarnation, self.task
            ))
            .possibly_restarted());
        }
        let limit = Instant::now() + self.opts.max_recv_wait;
        let wait_until = deadline.map_or(limit, |d| d.min(limit));
        let entry = self.steps.get_or_create(req.step_id, remaining(wait_until) + self.opts.step_grace)?;
        entry.local.recv_async(&req.rendezvous_key, done);
        Ok(wait_until)
    }
}

fn micros_now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_micros() as i64).unwrap_or(0)
}
