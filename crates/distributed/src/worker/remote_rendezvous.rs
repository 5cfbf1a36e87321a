//! The rendezvous of one step on a worker: sends go to the step's local table; a receive
//! whose key names a sending device on another task becomes a RecvTensor call to that task
//! (TensorFlow's RpcRemoteRendezvous). Aborting the step fails every pending receive and
//! ends the RecvTensor calls in flight.

use std::sync::Arc;
use std::time::Instant;

use ferroflow_core::proto::{RecvTensorRequest, RecvTensorResponse};
use ferroflow_core::{DeviceName, Status, Tensor};
use ferroflow_kernels::{ParsedKey, RecvCallback, Rendezvous};

use super::recv_tensor_http::PATH;
use super::session::WorkerSession;
use super::step_table::StepEntry;
use crate::channels::ChannelCache;
use crate::grpc_raw;
use crate::ids::new_request_id;

/// A step's rendezvous on one worker.
pub(crate) struct RemoteRendezvous {
    pub(crate) entry: Arc<StepEntry>,
    pub(crate) session: Arc<WorkerSession>,
    pub(crate) channels: Arc<ChannelCache>,
    pub(crate) runtime: tokio::runtime::Handle,
    /// Every RecvTensor call of the step ends by then.
    pub(crate) deadline: Instant,
}

impl RemoteRendezvous {
    fn recv_remote(&self, key: &str, parsed: ParsedKey, sender_task: String, done: RecvCallback) {
        let addr = match self.session.address_of(&sender_task) {
            Ok(a) => a,
            Err(e) => return done(Err(e.context(format!("cannot receive '{}'", parsed.tensor_name)))),
        };
        let _guard = self.runtime.enter();
        let channel = match self.channels.channel(&addr) {
            Ok(c) => c,
            Err(e) => return done(Err(e)),
        };
        let req = RecvTensorRequest {
            step_id: self.entry.step_id,
            rendezvous_key: key.to_string(),
            dma_ok: false,
            request_id: new_request_id(),
            ..Default::default()
        };
        let entry = self.entry.clone();
        let deadline = self.deadline;
        let what =
            format!("RecvTensor of '{}' from {sender_task} ({addr}) for step {}", parsed.tensor_name, entry.step_id);
        let id = entry.waiting_for(what.clone());
        self.runtime.spawn(async move {
            let call = async {
                let resp: RecvTensorResponse = grpc_raw::unary(channel, PATH, &req, deadline, &what).await?;
                let proto = resp.tensor.unwrap_or_default();
                let t = Tensor::from_proto(&proto).map_err(|e| e.context(&what))?;
                Ok::<_, Status>((t, resp.is_dead))
            };
            let r = tokio::select! {
                r = call => r,
                s = entry.wait_aborted() => Err(s),
                _ = tokio::time::sleep_until(tokio::time::Instant::from_std(deadline)) =>
                    Err(Status::deadline_exceeded(format!("{what} did not finish before the step's deadline"))),
            };
            entry.done_waiting(id);
            done(r);
        });
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
