//! Partial runs on a worker (RunGraph with `is_partial`), as TensorFlow's worker serves
//! them: the first call of a step starts the partition's executor and leaves it running;
//! every call delivers its `send` tensors to the step's rendezvous (where the partition's
//! `_Recv` nodes wait for them) and returns its `recv_key` tensors as soon as they are
//! produced; the call marked `is_last_partial_run` also waits for the executor to finish.

use std::time::Instant;

use ferroflow_core::proto::RunGraphRequest;
use ferroflow_core::{Status, Tensor};
use ferroflow_kernels::Rendezvous;
use tokio::sync::watch;

use super::worker::Worker;
use crate::rpc_util::remaining;
use crate::worker_api::RunGraphReply;

impl Worker {
    /// One call of a partial run.
    pub(crate) async fn run_partial_graph(
        &self,
        req: RunGraphRequest,
        send: Vec<(String, Tensor)>,
        deadline: Option<Instant>,
    ) -> Result<RunGraphReply, Status> {
        let session = self.session(&req.session_handle, req.create_worker_session_called)?;
        let exec = session.graph(&req.graph_handle)?;
        let call_deadline = deadline.unwrap_or_else(|| Instant::now() + self.opts.default_step_timeout);
        // The step outlives this call: it waits for the client's next feeds. Its executor
        // is bounded by the worker's default step timeout from its first call.
        let life = self.opts.default_step_timeout.max(remaining(call_deadline));
        let entry = self.steps.get_or_create(req.step_id, life + self.opts.step_grace)?;
        if let Some(s) = entry.aborted() {
            return Err(s);
        }
        self.load_sends(&entry, send)?;
        let done = entry.partial_run(&req.graph_handle, || {
            let (tx, rx) = watch::channel(None);
            let step = self.step_ctx(&session, &entry, Instant::now() + life, None);
            let aborts = entry.clone();
            exec.run_async(
                step,
                Box::new(move |r: Result<(), Status>| {
                    if let Err(e) = &r {
                        aborts.abort(e.clone());
                    }
                    tx.send_replace(Some(r));
                }),
            );
            rx
        });
        // A call past its deadline names the step, this task and what the step still waits for.
        let step_id = req.step_id;
        let late = |what: String| {
            Status::deadline_exceeded(format!(
                "partial run of step {step_id} on {}: {what}{}",
                self.task,
                entry.still_waiting()
            ))
        };
        let mut recv = Vec::with_capacity(req.recv_key.len());
        for key in req.recv_key {
            let (tx, rx) = tokio::sync::oneshot::channel();
            entry.local.recv_async(&key, Box::new(move |r| drop(tx.send(r))));
            match tokio::time::timeout_at(tokio::time::Instant::from_std(call_deadline), rx).await {
                Ok(Ok(Ok((_, true)))) => {
                    return Err(Status::internal(format!(
                        "The tensor returned for {key} was not valid (it is dead: on the untaken branch of a \
                         conditional)"
                    )))
                }
                Ok(Ok(Ok((t, false)))) => recv.push((key, t)),
                Ok(Ok(Err(e))) => return Err(e),
                Ok(Err(_)) => return Err(Status::internal("rendezvous dropped a pending receive")),
                Err(_) => return Err(late(format!("'{key}' was not produced before the call's deadline"))),
            }
        }
        if req.is_last_partial_run {
            let mut done = done;
            let finished =
                tokio::time::timeout_at(tokio::time::Instant::from_std(call_deadline), done.wait_for(|v| v.is_some()))
                    .await;
            match finished {
                Ok(Ok(v)) => v.clone().unwrap_or_else(|| Err(Status::internal("the executor finished twice")))?,
                Ok(Err(_)) => return Err(Status::internal("the executor dropped its completion")),
                Err(_) => return Err(late("the partition did not finish after its last call".into())),
            }
            self.steps.release_when_drained(&entry);
        }
        Ok(RunGraphReply { recv, step_stats: None })
    }
}
