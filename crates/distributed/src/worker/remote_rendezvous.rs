//! The rendezvous of one step on a worker: sends go to the step's local table; a receive
//! whose key names a sending device on another task becomes a RecvTensor call to that task
//! (TensorFlow's RpcRemoteRendezvous). Receives from one peer that a partition issues
//! together (its root `_Recv`s at the start of a step) travel in one batched call when the
//! peer is a ferroflow task (see `rpc::recv_tensors`); a TensorFlow peer gets one
//! RecvTensor per tensor. Aborting the step fails every pending receive and ends the
//! calls in flight.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use ferroflow_core::proto::RecvTensorRequest;
use ferroflow_core::{Code, DeviceName, Status, Tensor};
use ferroflow_kernels::{FunctionCall, FunctionDone, ParsedKey, RecvCallback, Rendezvous, StepTrace};

use super::session::WorkerSession;
use super::step_table::StepEntry;
use crate::ids::new_request_id;
use crate::worker_api::{RecvBatch, WorkerApi, MAX_RECV_BATCH as MAX_KEYS};
use crate::worker_cache::WorkerCache;

/// A step's rendezvous on one worker.
pub(crate) struct RemoteRendezvous {
    pub(crate) entry: Arc<StepEntry>,
    pub(crate) session: Arc<WorkerSession>,
    pub(crate) peers: Arc<dyn WorkerCache>,
    pub(crate) runtime: tokio::runtime::Handle,
    /// Every RecvTensor call of the step ends by then.
    pub(crate) deadline: Instant,
    /// Remote receives waiting to be sent together.
    pub(crate) queued: Arc<RecvQueue>,
    /// The step's trace: receives from peers are recorded as `RecvTensor` entries.
    pub(crate) trace: Option<Arc<StepTrace>>,
    /// This task's collectives, and its devices' incarnation.
    pub(crate) collectives: Arc<crate::collective::Collectives>,
    pub(crate) incarnation: u64,
}

/// Remote receives queued per peer address until the executor flushes (or
/// [`FLUSH_AFTER`] passed): then each peer gets one call for all of its receives.
#[derive(Default)]
pub(crate) struct RecvQueue {
    by_peer: Mutex<HashMap<String, (Peer, Vec<Queued>)>>,
    flushed: tokio::sync::Notify,
}

/// Queued receives go by then even if no flush came (a caller that never flushes).
const FLUSH_AFTER: std::time::Duration = std::time::Duration::from_millis(2);

impl RecvQueue {
    /// Sends every queued receive: one call per peer.
    fn send_all(&self) {
        let all = std::mem::take(&mut *self.by_peer.lock().unwrap_or_else(|e| e.into_inner()));
        for (_, (peer, mut batch)) in all {
            if batch.len() == 1 {
                if let Some(q) = batch.pop() {
                    tokio::spawn(async move { peer.fetch_one(q).await });
                }
                continue;
            }
            while !batch.is_empty() {
                let part = batch.split_off(batch.len().saturating_sub(MAX_KEYS));
                let p = peer.clone();
                tokio::spawn(async move { p.fetch_batch(part).await });
            }
        }
    }
}

/// One remote receive waiting for its call.
pub(crate) struct Queued {
    key: String,
    /// "RecvTensor of 'x' from /job:ps/... (addr) for step N": errors and still_waiting.
    what: String,
    wait_id: u64,
    done: RecvCallback,
}

/// What a call for queued receives needs from the rendezvous.
#[derive(Clone)]
struct Peer {
    entry: Arc<StepEntry>,
    api: Arc<dyn WorkerApi>,
    deadline: Instant,
    addr: String,
    task: String,
}

impl Peer {
    fn request(&self, key: &str) -> RecvTensorRequest {
        RecvTensorRequest {
            step_id: self.entry.step_id,
            rendezvous_key: key.to_string(),
            dma_ok: false,
            request_id: new_request_id(),
            ..Default::default()
        }
    }

    /// Runs `call` until it ends, the step is aborted or the deadline passes.
    async fn bounded<T>(
        &self,
        what: &str,
        call: impl std::future::Future<Output = Result<T, Status>>,
    ) -> Result<T, Status> {
        tokio::select! {
            r = call => r,
            s = self.entry.wait_aborted() => Err(s),
            _ = tokio::time::sleep_until(tokio::time::Instant::from_std(self.deadline)) =>
                Err(Status::deadline_exceeded(format!("{what} did not finish before the step's deadline"))),
        }
    }

    /// One RecvTensor call for one receive.
    async fn fetch_one(&self, q: Queued) {
        let req = self.request(&q.key);
        let r = self.bounded(&q.what, self.api.recv_tensor(req, self.deadline)).await;
        let step = self.entry.step_id;
        let r = r
            .map_err(|e| e.with_task(&self.task).context(format!("receiving '{}' for step {step}", short_key(&q.key))));
        self.finish(q, r);
    }

    /// One batched call for several receives; falls back to one call each when the peer
    /// does not serve batches (a TensorFlow task).
    async fn fetch_batch(&self, batch: Vec<Queued>) {
        let reqs: Vec<RecvTensorRequest> = batch.iter().map(|q| self.request(&q.key)).collect();
        let what = format!(
            "RecvTensors of {} tensors from {} ({}) for step {}",
            reqs.len(),
            self.task,
            self.addr,
            self.entry.step_id
        );
        let mut pending: Vec<Option<Queued>> = batch.into_iter().map(Some).collect();
        let mut delivered = 0usize;
        let r = {
            let mut deliver = |i: usize, r: Result<(Tensor, bool), Status>| {
                if let Some(q) = pending.get_mut(i).and_then(Option::take) {
                    delivered += 1;
                    let step = self.entry.step_id;
                    let r = r.map_err(|e| {
                        e.with_task(&self.task).context(format!("receiving '{}' for step {step}", short_key(&q.key)))
                    });
                    self.finish(q, r);
                }
            };
            self.bounded(&what, self.api.recv_tensors(RecvBatch { reqs: &reqs, deliver: &mut deliver }, self.deadline))
                .await
        };
        let rest = pending.into_iter().flatten();
        match r {
            Ok(()) => rest.for_each(|q| {
                let e = Status::internal(format!("{}: the peer ended the batch without this tensor", q.what));
                self.finish(q, Err(e))
            }),
            Err(e) if e.code == Code::Unimplemented && delivered == 0 => {
                for q in rest {
                    let p = self.clone();
                    tokio::spawn(async move { p.fetch_one(q).await });
                }
            }
            Err(e) => {
                let e = e.with_task(&self.task);
                rest.for_each(|q| self.finish(q, Err(e.clone())))
            }
        }
    }

    fn finish(&self, q: Queued, r: Result<(Tensor, bool), Status>) {
        self.entry.done_waiting(q.wait_id);
        (q.done)(r);
    }
}

impl RemoteRendezvous {
    fn recv_remote(&self, key: &str, parsed: ParsedKey, sender_task: String, mut done: RecvCallback) {
        if let Some(trace) = self.trace.clone() {
            let start = Instant::now();
            let (edge, src, dst) = (parsed.tensor_name.clone(), parsed.send_device.clone(), parsed.recv_device.clone());
            let inner = done;
            done = Box::new(move |r: Result<(Tensor, bool), Status>| {
                if let Ok((t, _)) = &r {
                    trace.record_transfer(start, &edge, &src, &dst, ferroflow_kernels::step_trace::tensor_bytes(t));
                }
                inner(r)
            });
        }
        let addr = match self.session.address_of(&sender_task) {
            Ok(a) => a,
            Err(e) => return done(Err(e.context(format!("cannot receive '{}'", parsed.tensor_name)))),
        };
        let what = format!(
            "RecvTensor of '{}' from {sender_task} ({addr}) for step {}",
            parsed.tensor_name, self.entry.step_id
        );
        let api = match self.peers.peer(&sender_task, &addr) {
            Ok(a) => a,
            Err(e) => return done(Err(e.context(what))),
        };
        let wait_id = self.entry.waiting_for(what.clone());
        let q = Queued { key: key.to_string(), what, wait_id, done };
        let peer = Peer { entry: self.entry.clone(), api, deadline: self.deadline, addr, task: sender_task };
        if !peer.api.serves_batches() {
            self.runtime.spawn(async move { peer.fetch_one(q).await });
            return;
        }
        // The first receive queued starts a task that sends everything queued once the
        // executor flushes: the receives it issues in one pass share one call per peer.
        let first = {
            let mut g = self.queued.by_peer.lock().unwrap_or_else(|e| e.into_inner());
            let first = g.is_empty();
            g.entry(peer.addr.clone()).or_insert_with(|| (peer, Vec::new())).1.push(q);
            first
        };
        if first {
            let queue = self.queued.clone();
            self.runtime.spawn(async move {
                tokio::select! {
                    _ = queue.flushed.notified() => {}
                    _ = tokio::time::sleep(FLUSH_AFTER) => {}
                }
                queue.send_all();
            });
        }
    }
}

impl Rendezvous for RemoteRendezvous {
    fn send(&self, key: &str, value: Tensor, is_dead: bool) -> Result<(), Status> {
        self.entry.local.send(key, value, is_dead)
    }

    fn recv_async(&self, key: &str, done: RecvCallback) {
        let parsed = match ParsedKey::parse(key) {
            Ok(p) => p,
            Err(e) => return done(Err(e)),
        };
        let sender_task = match DeviceName::parse(&parsed.send_device) {
            Ok(d) => d.task_name(),
            Err(e) => return done(Err(e.context(format!("rendezvous key '{key}'")))),
        };
        if sender_task == self.session.task || same_task(&sender_task, &self.session.task) {
            self.entry.local.recv_async(key, done)
        } else {
            self.recv_remote(key, parsed, sender_task, done)
        }
    }

    fn abort(&self, status: Status) {
        self.entry.abort(status);
    }

    fn call_function(&self, call: FunctionCall, done: FunctionDone) {
        self.run_remote_function(call, done)
    }

    fn collective(&self, call: ferroflow_kernels::CollectiveCall, done: ferroflow_kernels::CollectiveDone) {
        self.run_collective(call, done)
    }

    fn flush(&self) {
        if !self.queued.by_peer.lock().unwrap_or_else(|e| e.into_inner()).is_empty() {
            self.queued.flushed.notify_one();
        }
    }
}

/// The tensor name of a rendezvous key (the key itself if it does not parse).
fn short_key(key: &str) -> String {
    ParsedKey::parse(key).map(|k| k.tensor_name).unwrap_or_else(|_| key.to_string())
}

/// Whether two task names denote the same task (a missing replica means replica 0).
fn same_task(a: &str, b: &str) -> bool {
    match (DeviceName::parse(a), DeviceName::parse(b)) {
        (Ok(a), Ok(b)) => a.job == b.job && a.task == b.task && a.replica.unwrap_or(0) == b.replica.unwrap_or(0),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn same_task_ignores_missing_replica() {
        assert!(super::same_task("/job:ps/task:0", "/job:ps/replica:0/task:0"));
        assert!(!super::same_task("/job:ps/task:1", "/job:ps/replica:0/task:0"));
        assert!(!super::same_task("/job:worker/task:0", "/job:ps/replica:0/task:0"));
    }
}
