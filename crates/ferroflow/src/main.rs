//! The `ferroflow` command: `train` (MNIST in one process), `checkpoint` (inspect, verify,
//! write V2 checkpoints), `summary`, and the distributed commands (`server`, `demo`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use ferroflow_train::local::{train_local, OptimizerKind, TrainConfig};
use ferroflow_train::models::ModelKind;
use indicatif::{ProgressBar, ProgressStyle};

mod checkpoint_cmd;
mod json;
mod server_cmd;
mod summary_cmd;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(name = "ferroflow", version, about = "Distributed TensorFlow, in Rust")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Train an MNIST model (in this process unless cluster flags are given).
    Train(TrainArgs),
    /// Start one task of a cluster (master + worker on one port) and serve until shut down.
    Server(server_cmd::ServerArgs),
    /// Run the local distributed MNIST demo (not yet available).
    Demo,
    /// Inspect, verify and write V2 checkpoints (TensorFlow's format).
    #[command(subcommand)]
    Checkpoint(checkpoint_cmd::CheckpointCmd),
    /// Write TensorBoard event files.
    #[command(subcommand)]
    Summary(summary_cmd::SummaryCmd),
}

#[derive(clap::Args)]
#[command(rename_all = "snake_case")]
struct TrainArgs {
    /// Model: mlp or cnn.
    #[arg(long, default_value = "cnn")]
    model: ModelKind,
    /// Optimizer: sgd, momentum, adagrad, adam or rmsprop (default: adam).
    #[arg(long, default_value = "adam")]
    optimizer: OptimizerKind,
    /// Learning rate (default: 1e-3).
    #[arg(long, default_value_t = 1e-3)]
    learning_rate: f64,
    /// Training steps (default: 3000 for the CNN, 3000 for the MLP).
    #[arg(long, default_value_t = 3000)]
    steps: usize,
    /// Batch size.
    #[arg(long, default_value_t = 100)]
    batch: usize,
    /// Dropout keep probability while training (CNN).
    #[arg(long, default_value_t = 0.5)]
    keep_prob: f32,
    /// Seed for initialization and shuffling.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Directory with the MNIST .gz files.
    #[arg(long, default_value = "data/mnist")]
    data_dir: PathBuf,
    /// Print one line per 100 steps instead of a progress bar.
    #[arg(long)]
    no_progress: bool,
}

fn train(a: TrainArgs) -> Result<(), String> {
    let cfg = TrainConfig {
        model: a.model,
        optimizer: a.optimizer,
        learning_rate: a.learning_rate,
        steps: a.steps,
        batch: a.batch,
        keep_prob: a.keep_prob,
        seed: a.seed,
        data_dir: a.data_dir,
    };
    let bar = if a.no_progress { ProgressBar::hidden() } else { ProgressBar::new(cfg.steps as u64) };
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} steps  {per_sec}  {msg}")
            .map_err(|e| e.to_string())?,
    );
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
        "trained {:?} for {} steps in {:.1}s ({:.1} steps/s), final loss {:.4}",
        cfg.model,
        report.steps,
        report.train_seconds,
        report.steps as f64 / report.train_seconds,
        report.final_loss
    );
    println!("test accuracy: {:.2}%", report.test_accuracy * 100.0);
    Ok(())
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let r = match cli.command {
        Command::Train(a) => train(a),
        Command::Server(a) => server_cmd::run(a),
        Command::Checkpoint(c) => checkpoint_cmd::run(c),
        Command::Summary(c) => summary_cmd::run(c),
        Command::Demo => Err("`ferroflow demo` is not implemented yet (distributed training, issue #4); \
                              use `ferroflow train` for single-process training"
            .into()),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
