//! Synchronous data-parallel training (TensorFlow 1.x's `SyncReplicasOptimizer`), in one
//! place:
//! - [`SyncReplicasOptimizer`] wraps an optimizer and builds each replica's ops (the
//!   gradient accumulators, the token queue, the chief's aggregation op);
//! - [`SyncReplicas::make_session_run_hook`] gives the replica's hook for a
//!   `MonitoredTrainingSession`, which initializes the replica and, on the chief, queues
//!   the initial tokens and runs the [`ChiefQueueRunner`];
//! - [`ChiefQueueRunner`] runs the aggregation in a loop, each update bounded, and closes
//!   the token queue when it stops so no replica waits for a token that never comes.
//!
//! - [`AllReduceReplicas`] aggregates by all-reduce instead: a replica of the variables on
//!   every worker, gradients averaged with TensorFlow's collective ops, no ps traffic.
//!
//! `ferroflow train --sync` is built from exactly these, with TensorFlow's semantics
//! (`--sync --all_reduce` from the all-reduce replicas).

mod all_reduce;
mod hook;
mod optimizer;
mod queue_runner;

pub use all_reduce::{AllReduceReplicas, BroadcastHook, ReplicaCheck, ALL_REDUCE_GROUP};
pub use hook::{OpenSession, QueueRunnerOptions, SyncHandle, SyncReplicasHook};
pub use optimizer::{SyncReplicas, SyncReplicasOptimizer, LOCAL_VARIABLES, SYNC_TOKEN_QUEUE};
pub use queue_runner::{ChiefQueueRunner, CloseFn, RunStep};
