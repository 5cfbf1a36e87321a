//! The replicas' session hook (TensorFlow's `SyncReplicasOptimizer.make_session_run_hook`):
//! after every new session of a `MonitoredTrainingSession` (the first, and each recovery)
//! it initializes the replica's sync state and, on the chief, queues the initial tokens and
//! (re)starts the chief's queue runner for the updates still to come.
//!
//! TensorFlow runs the chief queue runner on threads of the training session itself; here
//! it runs on a session of its own on the same master ([`QueueRunnerOptions::open`]), so a
//! step of the training loop and an aggregation never share a session lock.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferroflow_core::Status;
use ferroflow_graph::Scope;
use ferroflow_runtime::{RunOptions, StepRunner};

use super::{ChiefQueueRunner, SyncReplicas};
use crate::monitored::SessionRunHook;

/// Opens the session the chief's queue runner runs on.
pub type OpenSession = Box<dyn Fn() -> Result<Arc<dyn StepRunner + Send + Sync>, Status> + Send>;

/// How the chief runs its queue runner (ignored on the other replicas).
pub struct QueueRunnerOptions {
    /// Opens the runner's session (a new one after each recovery).
    pub open: OpenSession,
    /// Bound on one aggregation: waiting for the replicas' gradients and applying them
    /// (time for a restarted worker to come back).
    pub aggregation_timeout: Duration,
    /// The training's last global step: the runner stops after it, once every replica has
    /// its last token, so nobody waits at exit. `None`: until stopped.
    pub last_step: Option<i64>,
}

/// The hook of one replica (see the module docs).
pub struct SyncReplicasHook {
    replicas: SyncReplicas,
    is_chief: bool,
    init_tokens: Option<String>,
    runner_opts: QueueRunnerOptions,
    handle: SyncHandle,
}

/// What the training loop keeps of the hook once the monitored session owns it: the
/// chief's running queue runner (to stop it and to ask it why a step failed).
#[derive(Clone)]
pub struct SyncHandle {
    replicas: SyncReplicas,
    runner: Arc<Mutex<Option<ChiefQueueRunner>>>,
}

impl SyncReplicas {
    /// The replica's session hook. On the chief it runs `chief_init_op`, queues
    /// `num_tokens` initial tokens (`-1`: `replicas_to_aggregate`, as TensorFlow; `0`:
    /// none, so every update averages gradients computed against the same parameters) and
    /// runs the queue runner; on the others it runs `local_step_init_op`.
    pub fn make_session_run_hook(
        &self,
        s: &Scope,
        is_chief: bool,
        num_tokens: i64,
        runner: QueueRunnerOptions,
    ) -> Result<SyncReplicasHook, Status> {
        let init_tokens = match is_chief && num_tokens != 0 {
            true => Some(self.get_init_tokens_op(s, num_tokens)?.name),
            false => None,
        };
        let handle = SyncHandle { replicas: self.clone(), runner: Arc::default() };
        Ok(SyncReplicasHook { replicas: self.clone(), is_chief, init_tokens, runner_opts: runner, handle })
    }
}

impl SyncReplicasHook {
    /// The handle the training loop keeps.
    pub fn handle(&self) -> SyncHandle {
        self.handle.clone()
    }

    fn start_runner(&self, global: i64) -> Result<ChiefQueueRunner, Status> {
        let sess = (self.runner_opts.open)()?;
        let updates = self.runner_opts.last_step.map(|l| (l - global).max(0) as u64);
        ChiefQueueRunner::start_on(sess, &self.replicas, self.runner_opts.aggregation_timeout, updates)
    }
}

impl SyncHandle {
    /// Stops the chief's queue runner (if this replica runs one) and returns its error, if
    /// it failed before being stopped.
    pub fn stop(&self) -> Result<(), Status> {
        match self.runner.lock().unwrap_or_else(|e| e.into_inner()).take() {
            Some(r) => r.stop().map_err(|e| e.context("the sync replicas aggregation loop failed")),
            None => Ok(()),
        }
    }

    /// A failed training step explained: the queue runner's own error when it stopped
    /// (that is why tokens stopped coming), else the step's error with the likely cause.
    pub fn explain(&self, e: Status) -> Status {
        let mut runner = self.runner.lock().unwrap_or_else(|e| e.into_inner());
        if runner.as_ref().is_some_and(|r| r.is_finished()) {
            if let Some(Err(re)) = runner.take().map(|r| r.stop()) {
                return re.context(format!("a training step failed ({})", e.message));
            }
        }
        self.replicas.explain(e)
    }
}

impl SessionRunHook for SyncReplicasHook {
    fn after_create_session(&mut self, session: &dyn StepRunner) -> Result<(), Status> {
        let r = &self.replicas;
        let init = if self.is_chief { &r.chief_init_op } else { &r.local_step_init_op };
        session.run_by_name(&[], &[], std::slice::from_ref(&init.name), &RunOptions::default())?;
        if !self.is_chief {
            return Ok(());
        }
        let mut runner = self.handle.runner.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(old) = runner.take() {
            // A recovery: the old loop failed with the old session (or is about to).
            let _ = old.stop();
        }
        if let Some(op) = &self.init_tokens {
            session.run_by_name(&[], &[], std::slice::from_ref(op), &RunOptions::default())?;
        }
        let gs = r.global_step.value().name();
        let global = session.run_by_name(&[], &[gs], &[], &RunOptions::default())?[0].scalar_value::<i64>()?;
        *runner = Some(self.start_runner(global)?);
        Ok(())
    }

    fn end(&mut self, _session: &dyn StepRunner) -> Result<(), Status> {
        self.handle.stop()
    }
}
