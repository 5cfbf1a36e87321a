//! `ferroflow train`: MNIST training, in this process or as one task of a cluster
//! (between-graph replication, TensorFlow's distributed trainer flags or `TF_CONFIG`).

use std::path::PathBuf;
use std::time::Duration;

use ferroflow_train::dist::{run_task, DistConfig, Progress};
use ferroflow_train::local::{train_local, OptimizerKind, TrainConfig};
use ferroflow_train::models::ModelKind;
use ferroflow_train::runner::TraceRequest;
use ferroflow_train::WARMUP_STEPS;
use ferroflow_train::{ExponentialDecay, PsStrategy};
use indicatif::{ProgressBar, ProgressStyle};

use crate::cluster_args::ClusterArgs;
use crate::metrics_export::{self, MetricsArgs};
use crate::transport_args::TransportArgs;

/// Arguments of `ferroflow train`.
#[derive(clap::Args, Clone, Debug)]
#[command(rename_all = "snake_case")]
pub struct TrainArgs {
    /// Model: mlp or cnn.
    #[arg(long, default_value = "cnn")]
    pub model: ModelKind,
    /// Optimizer: sgd, momentum, adagrad, adam, rmsprop, adadelta, ftrl, proximal_sgd,
    /// proximal_adagrad or adagrad_da (default: adam).
    #[arg(long, default_value = "adam")]
    pub optimizer: OptimizerKind,
    /// Learning rate (default: 1e-3).
    #[arg(long, default_value_t = 1e-3)]
    pub learning_rate: f64,
    /// Decay the learning rate exponentially: multiply it by `--lr_decay_rate` every this
    /// many global steps (TensorFlow's `exponential_decay`; default: no decay).
    #[arg(long)]
    pub lr_decay_steps: Option<f64>,
    /// The factor per `--lr_decay_steps` steps.
    #[arg(long, default_value_t = 0.5)]
    pub lr_decay_rate: f64,
    /// Decay in whole intervals of `--lr_decay_steps` (staircase) instead of smoothly.
    #[arg(long)]
    pub lr_staircase: bool,
    /// Training steps (global steps when distributed).
    #[arg(long, default_value_t = 3000)]
    pub steps: usize,
    /// Batch size (per worker when distributed).
    #[arg(long, default_value_t = 100)]
    pub batch: usize,
    /// Dropout keep probability while training (CNN).
    #[arg(long, default_value_t = 0.5)]
    pub keep_prob: f32,
    /// Seed for initialization and shuffling.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Directory with the MNIST .gz files.
    #[arg(long, default_value = "data/mnist")]
    pub data_dir: PathBuf,
    /// Print one line per 100 steps instead of a progress bar.
    #[arg(long)]
    pub no_progress: bool,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Bind, allow list and TLS of this task (cluster modes).
    #[command(flatten)]
    pub transport: TransportArgs,
    /// How variables are spread over ps tasks: round_robin (TensorFlow's default) or greedy
    /// (by byte size).
    #[arg(long, default_value = "round_robin")]
    pub ps_strategy: String,
    /// Seconds a worker waits for the chief / the ps tasks / the other workers.
    #[arg(long, default_value_t = 120.0)]
    pub wait_secs: f64,
    /// Deadline of one training step, in seconds.
    #[arg(long, default_value_t = 60.0)]
    pub step_timeout_secs: f64,
    /// Checkpoints, summaries and the graph go here (written by the chief, worker 0).
    #[arg(long)]
    pub logdir: Option<PathBuf>,
    /// Seconds between the chief's checkpoints.
    #[arg(long, default_value_t = 60.0)]
    pub save_secs: f64,
    /// The chief writes summaries every this many of its steps.
    #[arg(long, default_value_t = 100)]
    pub summary_steps: usize,
    /// Synchronous training: every global step applies the average of one gradient from
    /// each worker, all computed against the same parameters (SyncReplicasOptimizer with
    /// replicas_to_aggregate = total_num_replicas = the number of workers).
    #[arg(long)]
    pub sync: bool,
    /// Synchronous training by all-reduce instead of through the ps (implies --sync):
    /// every worker holds a replica of the variables and the gradients are averaged among
    /// the workers with TensorFlow's collective ops (a ring all-reduce, no ps traffic);
    /// worker 0 broadcasts its variables (initialized or restored) to the others at start.
    /// The cluster needs no ps job.
    #[arg(long)]
    pub all_reduce: bool,
    /// Run MatMul/Conv2D + BiasAdd (+ Relu) as separate kernels instead of one fused
    /// kernel (TensorFlow's `RewriterConfig.remapping = OFF`).
    #[arg(long)]
    pub no_fusion: bool,
    /// Trace this training step (1-based, counted by this process): every device's step
    /// stats, written as a Chrome trace (chrome://tracing, Perfetto) to `--trace_file`.
    #[arg(long)]
    pub trace_step: Option<usize>,
    /// Where `--trace_step` writes its trace.
    #[arg(long, default_value = "ferroflow-trace.json")]
    pub trace_file: PathBuf,
    #[command(flatten)]
    pub metrics: MetricsArgs,
    /// Machine-readable progress on stdout (used by `ferroflow demo`).
    #[arg(long, hide = true)]
    pub machine_progress: bool,
}

impl TrainArgs {
    fn config(&self) -> TrainConfig {
        TrainConfig {
            model: self.model,
            optimizer: self.optimizer,
            learning_rate: self.learning_rate,
            lr_decay: self.lr_decay_steps.map(|decay_steps| ExponentialDecay {
                decay_steps,
                decay_rate: self.lr_decay_rate,
                staircase: self.lr_staircase,
            }),
            steps: self.steps,
            batch: self.batch,
            keep_prob: self.keep_prob,
            seed: self.seed,
            data_dir: self.data_dir.clone(),
            fusion: !self.no_fusion,
            trace: self.trace_step.map(|step| TraceRequest { step, path: self.trace_file.clone() }),
        }
    }
}

fn bar(len: u64, hidden: bool) -> Result<ProgressBar, String> {
    let bar = if hidden { ProgressBar::hidden() } else { ProgressBar::new(len) };
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} steps  {per_sec}  {msg}")
            .map_err(|e| e.to_string())?,
    );
    Ok(bar)
}

fn secs(v: f64, flag: &str) -> Result<Duration, String> {
    if v.is_finite() && v > 0.0 {
        Ok(Duration::from_secs_f64(v))
    } else {
        Err(format!("--{flag} must be a positive number of seconds, got {v}"))
    }
}

/// Runs `ferroflow train`.
pub fn run(a: TrainArgs) -> Result<(), String> {
    let resolved = a.cluster.resolve()?;
    let task_addr = match &resolved {
        Some((cluster, job, task)) => Some(cluster.task_address(job, *task).map_err(|e| e.to_string())?.to_string()),
        None => None,
    };
    let allow = a.transport.allow_from.as_deref().map(ferroflow_distributed::AllowList::parse).transpose();
    let allow = allow.map_err(|e| e.message)?;
    metrics_export::start(
        &a.metrics,
        &metrics_export::bind_host(task_addr.as_deref().map(metrics_export::host_of), a.transport.bind.as_deref()),
        allow.as_ref(),
    )?;
    match resolved {
        None => train_local_cmd(&a),
        Some((cluster, job_name, task_index)) => {
            let ps_strategy = match a.ps_strategy.as_str() {
                "round_robin" => PsStrategy::RoundRobin,
                "greedy" => PsStrategy::GreedyBySize,
                s => return Err(format!("--ps_strategy '{s}': expected round_robin or greedy")),
            };
            let cfg = DistConfig {
                cluster,
                job_name,
                task_index,
                train: a.config(),
                ps_strategy,
                wait_timeout: secs(a.wait_secs, "wait_secs")?,
                step_timeout: secs(a.step_timeout_secs, "step_timeout_secs")?,
                logdir: a.logdir.clone(),
                save_every: secs(a.save_secs, "save_secs")?,
                summary_steps: a.summary_steps,
                sync: a.sync && !a.all_reduce,
                all_reduce: a.all_reduce,
                transport: a.transport.transport(None)?,
            };
            train_task(&a, &cfg)
        }
    }
}

/// "; N after the first 20" for a loop's steady rate, when it has one.
fn steady(rate: Option<f64>) -> String {
    rate.map_or(String::new(), |s| format!("; {s:.1} after the first {WARMUP_STEPS}"))
}

fn train_local_cmd(a: &TrainArgs) -> Result<(), String> {
    let cfg = a.config();
    let bar = bar(cfg.steps as u64, a.no_progress || a.machine_progress)?;
    let quiet = a.no_progress;
    let report = train_local(&cfg, |step, loss| {
        bar.set_position(step as u64);
        if step % 20 == 0 {
            bar.set_message(format!("loss {loss:.4}"));
        }
        if quiet && step % 100 == 0 {
            println!("step {step}: loss {loss:.4}");
        }
    })
    .map_err(|e| e.to_string())?;
    bar.finish_and_clear();
    println!(
        "trained {:?} for {} steps in {:.1}s ({:.1} steps/s{}), final loss {:.4}",
        cfg.model,
        report.steps,
        report.train_seconds,
        report.steps as f64 / report.train_seconds,
        steady(report.steady_steps_per_sec),
        report.final_loss
    );
    println!("test accuracy: {:.2}%", report.test_accuracy * 100.0);
    Ok(())
}

fn train_task(a: &TrainArgs, cfg: &DistConfig) -> Result<(), String> {
    let me = format!("/job:{}/task:{}", cfg.job_name, cfg.task_index);
    let bar = bar(cfg.train.steps as u64, a.no_progress || a.machine_progress || cfg.job_name != "worker")?;
    let machine = a.machine_progress;
    let quiet = a.no_progress;
    let (bar2, me2) = (bar.clone(), me.clone());
    let report = run_task(cfg, move |p| {
        let (bar, me) = (&bar2, &me2);
        // A hidden bar prints nothing, so lines go straight to stdout then.
        let say = |m: String| if bar.is_hidden() { println!("{m}") } else { bar.println(m) };
        match p {
            Progress::Step { local, global, loss } => {
                if machine {
                    println!("progress {local} {global} {loss}");
                } else {
                    bar.set_position(global.max(0) as u64);
                    if local % 20 == 0 {
                        bar.set_message(format!("loss {loss:.4} (local step {local})"));
                    }
                    if quiet && local % 100 == 0 {
                        println!("{me}: local step {local}, global step {global}: loss {loss:.4}");
                    }
                }
            }
            Progress::Serving(t) => println!("{me} serving at {t}"),
            Progress::Waiting(w) => say(format!("{me} waiting for {w}")),
            Progress::Ready => say(format!("{me} model ready, training")),
            Progress::Evaluated(acc) => {
                if machine {
                    println!("accuracy {acc}");
                }
            }
            Progress::StoppingPs => say(format!("{me} stopping the ps tasks")),
            Progress::Recovering(why) => say(format!("{me} recovering: {why}")),
            Progress::Restored(p) => say(format!("{me} restored {p}")),
            Progress::Saved(p) => say(format!("{me} saved {p}")),
        }
    })
    .map_err(|e| format!("{me}: {e}"))?;
    bar.finish_and_clear();
    if let Some(r) = report {
        let steady = steady(r.steady_steps_per_sec);
        println!(
            "{me}: {} local steps in {:.1}s ({:.1} steps/s{steady}), global step {}, final loss {:.4}",
            r.local_steps,
            r.train_seconds,
            r.local_steps as f64 / r.train_seconds.max(1e-9),
            r.global_step,
            r.final_loss
        );
        if let Some(crc) = r.replica_checksum {
            println!("{me}: every replica holds the same variables (CRC-32C {crc:#010x})");
        }
        if let Some(acc) = r.test_accuracy {
            println!("test accuracy: {:.2}%", acc * 100.0);
        }
    } else {
        println!("{me} stopped");
    }
    Ok(())
}
