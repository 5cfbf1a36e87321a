//! `SyncReplicasOptimizer` (TensorFlow 1.x `tf.compat.v1.train.SyncReplicasOptimizer`):
//! synchronous data-parallel training over replicas that share variables.
//!
//! Each replica builds the same graph with [`SyncReplicasOptimizer::apply_gradients`]:
//! - one `ResourceConditionalAccumulator` per variable, colocated with the variable and
//!   shared by name (`<var>:0/grad_accum`), receives the replica's gradient tagged with its
//!   local step; gradients older than the accumulator's global step are dropped as stale
//!   (and counted: [`SyncReplicas::stale_gradients_dropped`]);
//! - the replica's `train_op` then waits for a token from the shared `sync_token_q` (on
//!   the global step's device) and sets its local step to the token: the global step the
//!   next gradient is computed for;
//! - the chief's `sync_op` (TensorFlow's chief queue runner, run in a loop by
//!   [`super::ChiefQueueRunner`], started by
//!   [`SyncReplicas::make_session_run_hook`]) takes the average of `replicas_to_aggregate` gradients
//!   from every accumulator, applies them with the wrapped optimizer, increments the global
//!   step and enqueues `max(total_num_replicas, replicas_to_aggregate)` tokens holding it.
//!
//! No hidden hang: the token wait has a timeout (`token_timeout`), the chief's runner
//! bounds each aggregation and closes the token queue when it stops, so replicas that are
//! still waiting end with OutOfRange ("closed") instead of hanging.

use std::time::Duration;

use ferroflow_core::{DataType, Status, Tensor};
use ferroflow_graph::ops;
use ferroflow_graph::{Operation, Output, Scope, Variable, VariableOptions};
use ferroflow_kernels::data_flow::ConditionalAccumulator;
use ferroflow_kernels::ResourceMgr;

use crate::optimizer::{check_grad_dtype, GradAndVar, Optimizer};

/// Collection of per-replica local variables (TensorFlow's `GraphKeys.LOCAL_VARIABLES`).
pub const LOCAL_VARIABLES: &str = "local_variables";

/// Shared name of the token queue (as in TensorFlow).
pub const SYNC_TOKEN_QUEUE: &str = "sync_token_q";

/// Name scope of a replica's token wait: [`SyncReplicasOptimizer::explain`] knows its
/// errors by the node they name.
const TOKEN_DEQUEUE: &str = "sync_token_dequeue";

/// Whether `e` failed in a replica's token wait (the node it names is under [`TOKEN_DEQUEUE`]).
fn in_token_wait(e: &Status) -> bool {
    e.node().is_some_and(|n| n.split('/').any(|part| part.starts_with(TOKEN_DEQUEUE)))
}

/// Wraps an optimizer so that every update applies the average of `replicas_to_aggregate`
/// replicas' gradients.
///
/// ```no_run
/// # use ferroflow_train::optimizer::GradientDescent;
/// # use ferroflow_train::sync_replicas::SyncReplicasOptimizer;
/// # fn f(s: &ferroflow_graph::Scope, gv: &[ferroflow_train::optimizer::GradAndVar],
/// #      step: &ferroflow_graph::Variable) -> Result<(), ferroflow_core::Status> {
/// let opt = SyncReplicasOptimizer::new(GradientDescent::new(0.1), 2, 2);
/// let sync = opt.apply_gradients(s, gv, step)?;
/// // chief: run `sync.chief_init_op`, `sync.get_init_tokens_op(s, -1)?`, then start a
/// // `ChiefQueueRunner`; every replica runs `sync.train_op` once per step.
/// # Ok(()) }
/// ```
pub struct SyncReplicasOptimizer<O: Optimizer> {
    opt: O,
    replicas_to_aggregate: usize,
    total_num_replicas: usize,
    token_timeout: Duration,
    /// With per-replica token queues: this replica's index.
    replica: Option<usize>,
}

/// The ops one replica's [`SyncReplicasOptimizer::apply_gradients`] built.
#[derive(Clone, Debug)]
pub struct SyncReplicas {
    /// Run by the replica every step: applies its gradients to the accumulators, waits for
    /// a token and sets the local step to it.
    pub train_op: Operation,
    /// Applies this replica's gradients to the accumulators only (no token wait).
    pub apply_op: Operation,
    /// The replica's local step (a local, non-trainable reference variable).
    pub local_step: Variable,
    /// `local_step = global_step`; run by every replica before training.
    pub local_step_init_op: Operation,
    /// Run by the chief before training: sets the local step and the accumulators' global
    /// steps to the global step.
    pub chief_init_op: Operation,
    /// The chief's step (TensorFlow's chief queue runner op): takes the averaged
    /// gradients, applies them, increments the global step, enqueues tokens.
    pub sync_op: Operation,
    /// `QueueCloseV2` of the token queue with `cancel_pending_enqueues`: replicas waiting
    /// for a token end with OutOfRange.
    pub close_token_queue_op: Operation,
    /// The token queue this replica waits on.
    pub token_queue: Output,
    /// Every token queue: the shared one, or one per replica
    /// ([`SyncReplicasOptimizer::with_replica_tokens`]).
    pub token_queues: Vec<Output>,
    /// The accumulators' handles and shared names, one per variable.
    pub accumulators: Vec<(Output, String)>,
    /// Gradients averaged per update.
    pub replicas_to_aggregate: usize,
    /// Number of replicas.
    pub total_num_replicas: usize,
    /// Tokens enqueued per update: `max(total_num_replicas, replicas_to_aggregate)`.
    pub tokens_per_step: usize,
    /// The token wait's timeout.
    pub token_timeout: Duration,
    pub(super) global_step: Variable,
}

impl<O: Optimizer> SyncReplicasOptimizer<O> {
    /// Wraps `opt`; each update averages `replicas_to_aggregate` gradients from
    /// `total_num_replicas` replicas. A replica waits at most 10 minutes for its token
    /// (see [`SyncReplicasOptimizer::with_token_timeout`]).
    pub fn new(opt: O, replicas_to_aggregate: usize, total_num_replicas: usize) -> Self {
        SyncReplicasOptimizer {
            opt,
            replicas_to_aggregate,
            total_num_replicas,
            token_timeout: Duration::from_secs(600),
            replica: None,
        }
    }

    /// One token queue per replica (`sync_token_q_<i>`) instead of TensorFlow's shared one:
    /// this replica (index `replica`) waits on its own queue, and every update gives each
    /// replica exactly one token. With a shared queue a fast replica can take a slow one's
    /// token and send two gradients to one update; with per-replica queues every update
    /// averages one gradient from each replica (strict lockstep). Needs
    /// `replicas_to_aggregate == total_num_replicas` (no backup replicas).
    pub fn with_replica_tokens(mut self, replica: usize) -> Self {
        self.replica = Some(replica);
        self
    }

    /// Sets how long a replica waits for its token before failing with DeadlineExceeded.
    pub fn with_token_timeout(mut self, t: Duration) -> Self {
        self.token_timeout = t;
        self
    }

    /// The wrapped optimizer.
    pub fn inner(&self) -> &O {
        &self.opt
    }

    /// Builds one replica's synchronous update of `grads_and_vars` (see the module docs).
    /// `global_step` is required: staleness is judged against it. Accumulators are placed
    /// with their variables, the token queue and the update with the global step; the
    /// local step follows the caller's scope (the replica's own device).
    pub fn apply_gradients(
        &self,
        s: &Scope,
        grads_and_vars: &[GradAndVar],
        global_step: &Variable,
    ) -> Result<SyncReplicas, Status> {
        if grads_and_vars.is_empty() {
            return Err(Status::invalid_argument("SyncReplicasOptimizer: no gradients provided for any variable"));
        }
        if self.replicas_to_aggregate == 0 || self.total_num_replicas == 0 {
            return Err(Status::invalid_argument(format!(
                "SyncReplicasOptimizer: replicas_to_aggregate ({}) and total_num_replicas ({}) must be positive",
                self.replicas_to_aggregate, self.total_num_replicas
            )));
        }
        if let Some(r) = self.replica {
            if self.replicas_to_aggregate != self.total_num_replicas || r >= self.total_num_replicas {
                return Err(Status::invalid_argument(format!(
                    "SyncReplicasOptimizer: per-replica tokens need replicas_to_aggregate ({}) == total_num_replicas ({}) \
                     and a replica index below it (got {r})",
                    self.replicas_to_aggregate, self.total_num_replicas
                )));
            }
        }
        let gs_dtype = global_step.dtype();
        if !matches!(gs_dtype, DataType::Int64 | DataType::Int32) {
            return Err(Status::invalid_argument(format!(
                "SyncReplicasOptimizer: the global step must be int64 or int32, got {gs_dtype}"
            )));
        }
        let to_i64 =
            |sc: &Scope, x: Output| if x.dtype == DataType::Int64 { x } else { ops::cast(sc, x, DataType::Int64) };
        let ss = s.sub("sync_replicas");
        // The local step lives with the replica (the caller's device), not on the ps: it is
        // colocated with a NoOp placed by the caller's scope, so a replica device setter
        // (which sends variables to the ps) leaves it on the worker, as in TensorFlow.
        let anchor = ops::group_named::<Operation>(&ss, "local_anchor", &[]);
        let ls = ss.colocate_with(&anchor);
        let zero = ops::constant(&ls, Tensor::zeros(gs_dtype, Vec::<usize>::new())?);
        let local_opts = VariableOptions {
            trainable: false,
            use_resource: false,
            collections: vec![LOCAL_VARIABLES.to_string()],
            save_slice: None,
        };
        let local_step = Variable::with_options(&ls, "sync_rep_local_step", zero, &local_opts);
        let local_step_init_op = local_step.assign(&ss, global_step.value());
        let local_i64 = to_i64(&ss, local_step.value());

        let gss = ss.colocate_with(&global_step.handle());
        let num_required = ops::constant(&gss, Tensor::scalar(self.replicas_to_aggregate as i32));
        let mut applies = Vec::new();
        let mut aggregated: Vec<GradAndVar> = Vec::new();
        let mut accumulators = Vec::new();
        let mut chief_init = vec![local_step_init_op.clone()];
        for (g, v) in grads_and_vars {
            check_grad_dtype("SyncReplicasOptimizer: ", g, v)?;
            let vs = ss.colocate_with(&v.handle());
            let shared = format!("{}:0/grad_accum", v.name());
            let shape = v.shape();
            let acc = ops::conditional_accumulator(
                &vs,
                g.dtype,
                shape.as_deref(),
                &shared,
                "MEAN",
                ops::AccumulatorKind::Resource,
            );
            applies.push(ops::accumulator_apply_gradient(&vs, acc.clone(), local_i64.clone(), g.clone()));
            let nr = ops::identity(&vs, num_required.clone());
            aggregated.push((ops::accumulator_take_gradient(&vs, acc.clone(), nr, g.dtype), v.clone()));
            let gs_now = to_i64(&vs, global_step.read_value(&vs));
            chief_init.push(ops::accumulator_set_global_step(&vs, acc.clone(), gs_now));
            accumulators.push((acc, shared));
        }
        let update_op = self.opt.apply_gradients(&gss, &aggregated, Some(global_step), "update")?;

        let queues: Vec<Output> = match self.replica {
            None => vec![ops::fifo_queue(&gss, &[gs_dtype], &[vec![]], -1, SYNC_TOKEN_QUEUE, true)],
            Some(_) => (0..self.total_num_replicas)
                .map(|i| {
                    let name = format!("{SYNC_TOKEN_QUEUE}_{i}");
                    ops::fifo_queue(&gss.sub(&name), &[gs_dtype], &[vec![]], -1, &name, true)
                })
                .collect(),
        };
        let queue = queues[self.replica.unwrap_or(0)].clone();
        let apply_refs: Vec<&Operation> = applies.iter().collect();
        let apply_op = ops::group_named(&ss, "apply_gradients", &apply_refs);
        let timeout_ms = i64::try_from(self.token_timeout.as_millis()).unwrap_or(i64::MAX).max(1);
        // The dequeue waits on the accumulator updates themselves (as in TensorFlow), not on
        // the group: the group is on the replica's device, so depending on it would send a
        // control edge from the ps to the worker and back on every step.
        let waits = gss.with_control_deps(&apply_refs).sub(TOKEN_DEQUEUE);
        let token = ops::queue_dequeue(&waits, queue.clone(), &[gs_dtype], timeout_ms)
            .into_iter()
            .next()
            .ok_or_else(|| Status::internal("QueueDequeueV2 built without outputs"))?;
        let train_op = local_step.assign(&ss, token);

        let tokens_per_step = self.total_num_replicas.max(self.replicas_to_aggregate);
        let after_update = gss.with_control_deps(&[&update_op]);
        let gs_after = global_step.read_value(&after_update);
        let sync_op = enqueue_tokens(&after_update, &queues, gs_after, tokens_per_step);
        let closes: Vec<Operation> = queues.iter().map(|q| ops::queue_close(&gss, q.clone(), true)).collect();
        let close_token_queue_op = ops::group_named(&gss, "close_token_queues", &closes.iter().collect::<Vec<_>>());
        let refs: Vec<&Operation> = chief_init.iter().collect();
        let chief_init_op = ops::group_named(&ss, "chief_init", &refs);
        s.status()?;
        Ok(SyncReplicas {
            train_op,
            apply_op,
            local_step,
            local_step_init_op,
            chief_init_op,
            sync_op,
            close_token_queue_op,
            token_queue: queue,
            token_queues: queues,
            accumulators,
            replicas_to_aggregate: self.replicas_to_aggregate,
            total_num_replicas: self.total_num_replicas,
            tokens_per_step,
            token_timeout: self.token_timeout,
            global_step: global_step.clone(),
        })
    }
}

impl SyncReplicas {
    /// Enqueues `num_tokens` tokens holding the global step so replicas can start
    /// (TensorFlow's `get_init_tokens_op`; `-1` = `replicas_to_aggregate`). Fewer than
    /// `replicas_to_aggregate - total_num_replicas` cannot finish the first step. With
    /// `0` (allowed when every replica is aggregated) replicas run in lockstep: every
    /// update averages gradients of distinct replicas against the same parameters.
    pub fn get_init_tokens_op(&self, s: &Scope, num_tokens: i64) -> Result<Operation, Status> {
        let needed = self.replicas_to_aggregate as i64 - self.total_num_replicas as i64;
        let n = if num_tokens == -1 { self.replicas_to_aggregate as i64 } else { num_tokens };
        if n < needed || n < 0 {
            return Err(Status::invalid_argument(format!(
                "SyncReplicas: too few tokens ({n}) to finish the first step: need at least {}",
                needed.max(0)
            )));
        }
        if self.token_queues.len() > 1 && n % self.token_queues.len() as i64 != 0 {
            return Err(Status::invalid_argument(format!(
                "SyncReplicas: {n} initial tokens cannot be shared evenly by {} per-replica token queues",
                self.token_queues.len()
            )));
        }
        let gs = s.colocate_with(&self.global_step.handle());
        let value = self.global_step.read_value(&gs);
        let op = enqueue_tokens(&gs, &self.token_queues, value, n as usize);
        s.status()?;
        Ok(op)
    }

    /// Stale gradients dropped so far by this replica set's accumulators in the resource
    /// manager of the task holding them (the session's, for a local session).
    pub fn stale_gradients_dropped(&self, resources: &ResourceMgr) -> u64 {
        self.accumulators
            .iter()
            .filter_map(|(_, name)| resources.lookup::<ConditionalAccumulator>("", name).ok())
            .map(|a| a.stale_dropped())
            .sum()
    }

    /// Adds the likely cause to an error from `train_op`: a token wait that timed out or
    /// a token queue that was closed.
    pub fn explain(&self, e: Status) -> Status {
        use ferroflow_core::Code;
        match e.code {
            Code::DeadlineExceeded if in_token_wait(&e) => e.context(format!(
                "SyncReplicas: no token within {} ms: fewer than replicas_to_aggregate = {} replicas are sending \
                 gradients (some finished early or stalled), or the chief's queue runner is not running",
                self.token_timeout.as_millis(),
                self.replicas_to_aggregate
            )),
            Code::OutOfRange if in_token_wait(&e) => {
                e.context("SyncReplicas: the chief closed the token queue (training has stopped)")
            }
            _ => e,
        }
    }
}

/// Enqueues `total` tokens holding `value`: all into the shared queue, or the same share
/// into each per-replica queue.
fn enqueue_tokens(s: &Scope, queues: &[Output], value: Output, total: usize) -> Operation {
    let each = total / queues.len().max(1);
    let dims = ops::constant(s, Tensor::vec(vec![each as i32]));
    let tokens = ops::fill(s, dims, value);
    let enqueues: Vec<Operation> =
        queues.iter().map(|q| ops::queue_enqueue_many(s, q.clone(), vec![tokens.clone()], -1)).collect();
    if enqueues.len() == 1 {
        return enqueues[0].clone();
    }
    ops::group_named(s, "enqueue_tokens", &enqueues.iter().collect::<Vec<_>>())
}
