//! Between-graph replicated training on a cluster (TensorFlow's distributed MNIST trainer):
//! every task is its own process; `ps` tasks serve variables until told to stop; each
//! worker builds the same graph with [`replica_device_setter`](crate::replica_device_setter),
//! runs steps through its own task's master, and counts a shared `global_step`. Worker 0 is
//! the chief: it initializes the variables, evaluates at the end and, once every worker is
//! done, stops the ps tasks so nothing is left running.

mod chief;
mod done;
mod ready;
mod worker;

use std::path::PathBuf;
use std::time::Duration;

use ferroflow_core::Status;
use ferroflow_distributed::{ClusterSpec, Server, Transport};

use crate::device_setter::PsStrategy;
use crate::local::TrainConfig;

pub(crate) use ready::wait_until;
pub use worker::run_worker;

/// One task of a distributed training job.
#[derive(Clone, Debug)]
pub struct DistConfig {
    /// The cluster (`ps` and `worker` jobs).
    pub cluster: ClusterSpec,
    /// `ps` or `worker`.
    pub job_name: String,
    /// This task's index in its job.
    pub task_index: i32,
    /// Model, optimizer, global steps, batch size, data.
    pub train: TrainConfig,
    /// How variables are spread over the ps tasks.
    pub ps_strategy: PsStrategy,
    /// How long a non-chief worker waits for the chief to initialize the model, and how
    /// long the chief waits for the other workers to finish before stopping the ps tasks.
    pub wait_timeout: Duration,
    /// Deadline of each training step.
    pub step_timeout: Duration,
    /// Checkpoints and summaries go here (chief only); `None`: neither.
    pub logdir: Option<PathBuf>,
    /// How often the chief saves a checkpoint (and once more at the end).
    pub save_every: Duration,
    /// The chief writes summaries every this many of its steps.
    pub summary_steps: usize,
    /// Synchronous training (`SyncReplicasOptimizer` aggregating every worker, with
    /// TensorFlow's shared token queue and initial tokens) instead of asynchronous updates.
    pub sync: bool,
    /// Synchronous training by all-reduce: a replica of the variables on every worker, the
    /// gradients averaged among the workers with TensorFlow's collective ops (no ps
    /// traffic); worker 0 broadcasts its variables to the others when a session opens.
    pub all_reduce: bool,
    /// How every task of the job listens and whom it lets in (bind, allow list, TLS).
    pub transport: Transport,
}

/// What a task reports while it runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Progress {
    /// The task's server is up at this target.
    Serving(String),
    /// Waiting for something (said in words).
    Waiting(String),
    /// The model is initialized and training starts.
    Ready,
    /// One local step done.
    Step {
        /// Steps this worker ran.
        local: usize,
        /// The shared global step after it.
        global: i64,
        /// This step's loss.
        loss: f32,
    },
    /// Test accuracy (chief).
    Evaluated(f64),
    /// Stopping the ps tasks (chief).
    StoppingPs,
    /// A step failed because a task went away; a new session is being set up.
    Recovering(String),
    /// The chief restored this checkpoint (the ps tasks had lost the model).
    Restored(String),
    /// The chief saved this checkpoint.
    Saved(String),
}

/// The outcome of a worker.
#[derive(Clone, Debug)]
pub struct WorkerReport {
    /// Steps this worker ran.
    pub local_steps: usize,
    /// The global step when it stopped.
    pub global_step: i64,
    /// Its last loss.
    pub final_loss: f32,
    /// Test accuracy (chief only).
    pub test_accuracy: Option<f64>,
    /// Seconds of the training loop.
    pub train_seconds: f64,
    /// Steps per second after the first [`crate::WARMUP_STEPS`] local steps (the first steps
    /// register the graphs on every task), when more steps than that ran.
    pub steady_steps_per_sec: Option<f64>,
    /// All-reduce training: the CRC-32C of this replica's variables at the end, checked
    /// equal on every replica.
    pub replica_checksum: Option<u32>,
}

/// Runs this process's task: a ps serves until shut down (returns `None`), a worker trains.
pub fn run_task(
    cfg: &DistConfig,
    on_progress: impl FnMut(Progress) + Send + 'static,
) -> Result<Option<WorkerReport>, Status> {
    match cfg.job_name.as_str() {
        "ps" => {
            run_ps(cfg, on_progress)?;
            Ok(None)
        }
        "worker" => run_worker(cfg, on_progress).map(Some),
        other => Err(Status::invalid_argument(format!(
            "--job_name '{other}' is not a training job: expected 'ps' or 'worker'"
        ))),
    }
}

/// Serves a ps task until it is told to stop (ferroflow's Shutdown RPC).
pub fn run_ps(cfg: &DistConfig, mut on_progress: impl FnMut(Progress)) -> Result<(), Status> {
    let server = Server::new(&cfg.cluster, "ps", cfg.task_index, cfg.transport.server_options())?;
    on_progress(Progress::Serving(server.target().to_string()));
    server.join()
}

/// The ps tasks' targets (`grpcs://` with TLS).
pub(crate) fn ps_targets(cfg: &DistConfig) -> Result<Vec<String>, Status> {
    Ok(cfg
        .cluster
        .tasks()
        .into_iter()
        .filter(|(j, _, _)| *j == "ps")
        .map(|(_, _, a)| cfg.transport.target(a))
        .collect())
}
