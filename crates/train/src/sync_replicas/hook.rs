//! `ferroflow train --sync`: synchronous between-graph training with
//! [`SyncReplicasOptimizer`] across processes.
//!
//! Every worker aggregates (`replicas_to_aggregate = total_num_replicas = workers`), no
//! initial tokens are queued and each worker has its own token queue, so the replicas run
//! in strict lockstep: each update averages exactly one gradient from every worker, all
//! computed against the same parameters (with TensorFlow's single shared token queue a
//! fast worker could take a slow one's token). Each worker's
//! step pushes its gradients into the accumulators on the ps tasks and waits for a token;
//! the chief runs the aggregation loop (TensorFlow's chief queue runner) on a thread, over
//! a session of its own on the same master, restarted with every new session of the
//! training loop ([`SyncHook`]), and stops it after the last global step, so every worker
//! gets its final token and nobody waits at exit. A worker's token wait is bounded by the step
//! deadline; an aggregation by `--wait_secs` (time for a killed worker to come back).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferroflow_core::Status;
use ferroflow_distributed::GrpcSession;
use ferroflow_graph::{Operation, Output, Scope, Variable};
use ferroflow_runtime::{RunOptions, StepRunner};

use crate::monitored::SessionRunHook;
use crate::optimizer::{ChiefQueueRunner, GradAndVar, Optimizer, SyncReplicas, SyncReplicasOptimizer};

/// What a worker runs each step in sync mode.
pub(crate) struct SyncNodes {
    pub replicas: SyncReplicas,
    /// The replica's new local step after its token arrived (the global step the
    /// aggregated update produced), fetched with the train op.
    pub token: Output,
}

/// Builds the synchronous update of `loss` for `workers` replicas.
pub(crate) fn build(
    s: &Scope,
    opt: Box<dyn Optimizer>,
    loss: &Output,
    global_step: &Variable,
    workers: usize,
    replica: usize,
    token_timeout: Duration,
) -> Result<SyncNodes, Status> {
    let sro = SyncReplicasOptimizer::new(opt, workers, workers)
        .with_token_timeout(token_timeout)
        .with_replica_tokens(replica);
    let gv: Vec<GradAndVar> =
        sro.inner().compute_gradients(s, loss, None)?.into_iter().filter_map(|(g, v)| g.map(|g| (g, v))).collect();
    let replicas = sro.apply_gradients(s, &gv, global_step)?;
    let token = replicas.train_op.output(0);
    Ok(SyncNodes { replicas, token })
}

/// Names for a session's run_step.
fn names(ops: &[&Operation]) -> Vec<String> {
    ops.iter().map(|o| o.name.clone()).collect()
}

/// The replicas' session hook: after every new session (the first, and each recovery),
/// initializes this replica's sync state (the chief's `chief_init_op`, the others'
/// `local_step_init_op`) and, on the chief, (re)starts the aggregation loop on a session
/// of its own for the updates still to come. The loop is shared with the training loop,
/// which stops it at the end and asks it why a step failed.
pub(crate) struct SyncHook {
    init: Vec<String>,
    is_chief: bool,
    sync_op: Vec<String>,
    close: Vec<String>,
    global_step: String,
    last_step: i64,
    aggregation_timeout: Duration,
    /// Opens the aggregation loop's session.
    open: Box<dyn Fn() -> Result<Arc<GrpcSession>, Status> + Send>,
    pub(crate) runner: Arc<Mutex<Option<ChiefQueueRunner>>>,
}

impl SyncHook {
    /// The hook of replica `is_chief`, stopping the aggregation after `last_step`.
    pub(crate) fn new(
        n: &SyncNodes,
        is_chief: bool,
        global_step: &Output,
        last_step: i64,
        aggregation_timeout: Duration,
        open: Box<dyn Fn() -> Result<Arc<GrpcSession>, Status> + Send>,
    ) -> SyncHook {
        let init = if is_chief { &n.replicas.chief_init_op } else { &n.replicas.local_step_init_op };
        SyncHook {
            init: names(&[init]),
            is_chief,
            sync_op: names(&[&n.replicas.sync_op]),
            close: names(&[&n.replicas.close_token_queue_op]),
            global_step: global_step.name(),
            last_step,
            aggregation_timeout,
            open,
            runner: Arc::default(),
        }
    }

    fn start_runner(&self, global: i64) -> Result<ChiefQueueRunner, Status> {
        let sess = (self.open)()?;
        let s2 = sess.clone();
        let (op, close) = (self.sync_op.clone(), self.close.clone());
        let updates = (self.last_step - global).max(0) as u64;
        ChiefQueueRunner::start_bounded(
            Box::new(move |tok, timeout| {
                let opts = RunOptions { timeout: Some(timeout), cancel: Some(tok.clone()), ..Default::default() };
                sess.run_by_name(&[], &[], &op, &opts).map(|_| ())
            }),
            Box::new(move || {
                let opts = RunOptions { timeout: Some(Duration::from_secs(30)), cancel: None, ..Default::default() };
                s2.run_by_name(&[], &[], &close, &opts).map(|_| ())
            }),
            self.aggregation_timeout,
            Some(updates),
        )
    }
}

impl SessionRunHook for SyncHook {
    fn after_create_session(&mut self, session: &dyn StepRunner) -> Result<(), Status> {
        session.run_by_name(&[], &[], &self.init, &RunOptions::default())?;
        if !self.is_chief {
            return Ok(());
        }
        let mut runner = self.runner.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(r) = runner.take() {
            // A recovery: the old loop failed with the old session (or is about to).
            let _ = r.stop();
        }
        let global = session.run_by_name(&[], std::slice::from_ref(&self.global_step), &[], &RunOptions::default())?;
        *runner = Some(self.start_runner(global[0].scalar_value::<i64>()?)?);
        Ok(())
    }
}
