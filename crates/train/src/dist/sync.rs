//! `ferroflow train --sync`: synchronous between-graph training with
//! [`SyncReplicasOptimizer`] across processes.
//!
//! Every worker aggregates (`replicas_to_aggregate = total_num_replicas = workers`), no
//! initial tokens are queued and each worker has its own token queue, so the replicas run
//! in strict lockstep: each update averages exactly one gradient from every worker, all
//! computed against the same parameters (with TensorFlow's single shared token queue a
//! fast worker could take a slow one's token). Each worker's
//! step pushes its gradients into the accumulators on the ps tasks and waits for a token;
//! the chief runs the aggregation loop (TensorFlow's chief queue runner) on a thread over
//! the same session and stops it after the last global step, so every worker gets its
//! final token and nobody waits at exit. A worker's token wait is bounded by the step
//! deadline; an aggregation by `--wait_secs` (time for a killed worker to come back).

use std::sync::Arc;
use std::time::Duration;

use ferroflow_core::Status;
use ferroflow_distributed::GrpcSession;
use ferroflow_graph::{Operation, Output, Scope, Variable};
use ferroflow_runtime::RunOptions;

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

/// Every worker, once the model is ready: its local step starts at the global step.
/// The chief also sets the accumulators' global steps (dropping gradients older than the
/// restored or current global step).
pub(crate) fn init_replica(sess: &GrpcSession, n: &SyncNodes, is_chief: bool) -> Result<(), Status> {
    let op = if is_chief { &n.replicas.chief_init_op } else { &n.replicas.local_step_init_op };
    sess.run_by_name(&[], &[], &names(&[op]), &RunOptions::default()).map(|_| ())
}

/// Starts the chief's aggregation loop for the updates still to do (`last_step - global`).
pub(crate) fn start_chief_runner(
    sess: Arc<GrpcSession>,
    n: &SyncNodes,
    global: i64,
    last_step: i64,
    aggregation_timeout: Duration,
) -> Result<ChiefQueueRunner, Status> {
    let op = names(&[&n.replicas.sync_op]);
    let close = names(&[&n.replicas.close_token_queue_op]);
    let s2 = sess.clone();
    let updates = (last_step - global).max(0) as u64;
    ChiefQueueRunner::start_bounded(
        Box::new(move |tok, timeout| {
            let opts = RunOptions { timeout: Some(timeout), cancel: Some(tok.clone()), ..Default::default() };
            sess.run_by_name(&[], &[], &op, &opts).map(|_| ())
        }),
        Box::new(move || {
            let opts = RunOptions { timeout: Some(Duration::from_secs(30)), cancel: None, ..Default::default() };
            s2.run_by_name(&[], &[], &close, &opts).map(|_| ())
        }),
        aggregation_timeout,
        Some(updates),
    )
}
