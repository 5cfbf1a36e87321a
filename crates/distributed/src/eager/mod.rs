//! TensorFlow's remote eager service (`tensorflow.eager.EagerService`) on every task, on
//! the same port as the master and worker services: what TensorFlow 2's
//! `tf.config.experimental_connect_to_cluster`, `ParameterServerStrategy` and
//! `ClusterCoordinator` drive a cluster's tasks with. A client creates a context on each
//! task (CreateContext, with the cluster as a `ServerDef`), then enqueues operations,
//! tensors and functions into it (Enqueue/StreamingEnqueue), runs the components of its
//! multi-device functions (RunComponentFunction), keeps it alive and closes it.
//!
//! Each context is a worker session of this task (the cluster of the client's `ServerDef`,
//! the task's shared resources); each operation runs as a step of the worker
//! (`execute.rs`), so eager ops use the same kernels, rendezvous, deadlines and cancellation
//! as graph partitions.

mod context;
mod execute;
mod packed;
mod queue;
mod span;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ferroflow_core::proto::eager::{
    CloseContextRequest, CreateContextRequest, CreateContextResponse, KeepAliveRequest, KeepAliveResponse,
    UpdateContextRequest, UpdateContextResponse,
};
use ferroflow_core::proto::{CreateWorkerSessionRequest, DeleteWorkerSessionRequest};
use ferroflow_core::Status;

use crate::worker::Worker;
use context::{Ctx, EagerContext};

/// The eager service of one task.
pub(crate) struct EagerService {
    pub(crate) worker: Arc<Worker>,
    /// Runs the functions whose inputs span tasks (`span.rs`).
    pub(crate) master: Arc<crate::master::Master>,
    /// Channels to the eager services of peer tasks.
    pub(crate) channels: crate::channels::ChannelCache,
    contexts: Mutex<HashMap<u64, Ctx>>,
}

fn session_handle(context_id: u64) -> String {
    format!("eager_{context_id:016x}")
}

impl EagerService {
    pub(crate) fn new(worker: Arc<Worker>, master: Arc<crate::master::Master>) -> EagerService {
        let channels = crate::channels::ChannelCache::new(Duration::from_secs(5));
        EagerService { worker, master, channels, contexts: Mutex::new(HashMap::new()) }
    }

    /// The context a request names, or TensorFlow's error for an unknown one (the task
    /// restarted, or the context expired).
    pub(crate) fn context(&self, id: u64) -> Result<Ctx, Status> {
        let ctx = self.contexts.lock().unwrap_or_else(|e| e.into_inner()).get(&id).cloned();
        let ctx = ctx.ok_or_else(|| {
            Status::aborted(format!(
                "Unable to find a context_id matching the specified one ({id}). Perhaps the worker was \
                 restarted, or the context was GC'd? (task {})",
                self.worker.task
            ))
            .possibly_restarted()
        })?;
        ctx.touch();
        Ok(ctx)
    }

    /// CreateContext: a worker session for the client's cluster and this task's devices.
    pub(crate) fn create_context(&self, req: CreateContextRequest) -> Result<CreateContextResponse, Status> {
        let id = req.context_id;
        if req.clear_existing_contexts {
            let old: Vec<u64> = self.contexts.lock().unwrap_or_else(|e| e.into_inner()).keys().copied().collect();
            for c in old {
                self.drop_context(c);
            }
        }
        let existing = self.contexts.lock().unwrap_or_else(|e| e.into_inner()).get(&id).map(|c| c.view());
        if let Some(view) = existing {
            // A client that reconnects (same id, same or newer view) replaces its context.
            if req.context_view_id < view {
                return Err(Status::invalid_argument(format!(
                    "EagerService:CreateContext failed. Context id: <{id}> already exists (at view {view}, the \
                     request is for view {}; task {}).",
                    req.context_view_id, self.worker.task
                )));
            }
            self.drop_context(id);
        }
        let sd = req.server_def.clone().unwrap_or_default();
        let sd_kept = sd.clone();
        let handle = session_handle(id);
        self.worker
            .create_worker_session(&CreateWorkerSessionRequest {
                session_handle: handle.clone(),
                server_def: Some(sd),
                isolate_session_state: false,
                ..Default::default()
            })
            .map_err(|e| e.context("EagerService.CreateContext"))?;
        let task = self.worker.session(&handle, true)?.task.clone();
        let keep_alive = Duration::from_secs(req.keep_alive_secs.max(0) as u64);
        let ctx = EagerContext::new(id, req.context_view_id, handle, task.clone(), keep_alive, sd_kept);
        ctx.set_devices(&req.cluster_device_attributes);
        let ctx = Arc::new(ctx);
        // Copies to and from the client run at the context's id as a step, for the
        // context's life.
        self.worker.steps.pin(id as i64);
        self.contexts.lock().unwrap_or_else(|e| e.into_inner()).insert(id, ctx);
        tracing::info!(task = %self.worker.task, context = %format!("{id:016x}"), as_task = %task, keep_alive_secs = req.keep_alive_secs, "eager context created");
        Ok(CreateContextResponse { device_attributes: self.device_attributes(&task) })
    }

    /// This task's devices under the name it has in a context's cluster.
    fn device_attributes(&self, task: &str) -> Vec<ferroflow_core::proto::DeviceAttributes> {
        let mut devs = self.worker.get_status().device_attributes;
        for d in &mut devs {
            if let Some(rest) = d.name.strip_prefix(self.worker.task.as_str()) {
                d.name = format!("{task}{rest}");
            }
        }
        devs
    }

    /// UpdateContext: a new view of the cluster for an existing context.
    pub(crate) fn update_context(&self, req: UpdateContextRequest) -> Result<UpdateContextResponse, Status> {
        let ctx = self.context(req.context_id)?;
        let mut view = ctx.view_id.lock().unwrap_or_else(|e| e.into_inner());
        if req.context_view_id != *view + 1 && req.context_view_id != *view {
            return Err(Status::invalid_argument(format!(
                "EagerService:UpdateContext failed. Context id: <{}> has view id {} and the update asks for {} \
                 (views must increase by one; task {})",
                req.context_id, *view, req.context_view_id, self.worker.task
            )));
        }
        *view = req.context_view_id;
        if let Some(sd) = req.server_def {
            *ctx.server_def.lock().unwrap_or_else(|e| e.into_inner()) = sd.clone();
            // The cluster may have grown or shrunk: the context's session takes the new one.
            let handle = ctx.session_handle.clone();
            self.worker.delete_worker_session(&DeleteWorkerSessionRequest { session_handle: handle.clone() });
            self.worker.create_worker_session(&CreateWorkerSessionRequest {
                session_handle: handle,
                server_def: Some(sd),
                isolate_session_state: false,
                ..Default::default()
            })?;
            ctx.graphs.lock().unwrap_or_else(|e| e.into_inner()).clear();
            self.close_spans(&ctx);
        }
        ctx.set_devices(&req.cluster_device_attributes);
        Ok(UpdateContextResponse { device_attributes: self.device_attributes(&ctx.task) })
    }

    /// KeepAlive: the context's view id; an unknown context is an error (the client learns
    /// the task restarted).
    pub(crate) fn keep_alive(&self, req: &KeepAliveRequest) -> Result<KeepAliveResponse, Status> {
        let ctx = self.context(req.context_id)?;
        Ok(KeepAliveResponse { context_view_id: ctx.view() })
    }

    /// CloseContext: drops the context's tensors, functions and session. Closing an unknown
    /// context, or one whose view moved on, is not an error (TensorFlow's rule).
    pub(crate) fn close_context(&self, req: &CloseContextRequest) {
        let ctx = self.contexts.lock().unwrap_or_else(|e| e.into_inner()).get(&req.context_id).cloned();
        if let Some(ctx) = ctx {
            if req.context_view_id != 0 && req.context_view_id < ctx.view() {
                return;
            }
            self.drop_context(req.context_id);
        }
    }

    fn drop_context(&self, id: u64) {
        let ctx = self.contexts.lock().unwrap_or_else(|e| e.into_inner()).remove(&id);
        if let Some(ctx) = ctx {
            self.close_spans(&ctx);
            self.worker.steps.unpin(id as i64, Status::cancelled(format!("eager context {id:016x} was closed")));
            self.worker
                .delete_worker_session(&DeleteWorkerSessionRequest { session_handle: ctx.session_handle.clone() });
            tracing::info!(task = %self.worker.task, context = %format!("{id:016x}"), tensors = ctx.num_handles(), "eager context closed");
        }
    }

    /// Drops the contexts whose client stopped speaking for longer than their keep-alive.
    pub(crate) fn sweep(&self) -> usize {
        let now = Instant::now();
        let expired: Vec<u64> = self
            .contexts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|(_, c)| c.expired(now))
            .map(|(id, _)| *id)
            .collect();
        for id in &expired {
            tracing::warn!(task = %self.worker.task, context = %format!("{id:016x}"), "eager context expired (no call within its keep-alive)");
            self.drop_context(*id);
        }
        expired.len()
    }

    /// The deadline of an operation: the caller's, else the worker's default step timeout.
    pub(crate) fn deadline(&self, caller: Option<Instant>) -> Instant {
        caller.unwrap_or_else(|| Instant::now() + self.worker.opts.default_step_timeout)
    }
}
