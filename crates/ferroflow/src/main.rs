//! The `ferroflow` command: `train` (MNIST, in one process or as a task of a cluster),
//! `server` (one task of a cluster), `demo` (the local distributed MNIST demo),
//! `checkpoint` (inspect, verify, write V2 checkpoints) and `summary` (event files).

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod allocator;
mod checkpoint_cmd;
mod cluster_args;
mod demo_cmd;
mod json;
mod metrics_export;
mod ops_cmd;
mod server_cmd;
mod summary_cmd;
mod train_cmd;
mod transport_args;

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
    Train(train_cmd::TrainArgs),
    /// Start one task of a cluster (master + worker on one port) and serve until shut down.
    Server(server_cmd::ServerArgs),
    /// The local distributed MNIST demo: 1 ps + 2 workers as separate processes.
    Demo(demo_cmd::DemoArgs),
    /// Inspect, verify and write V2 checkpoints (TensorFlow's format).
    #[command(subcommand)]
    Checkpoint(checkpoint_cmd::CheckpointCmd),
    /// Write TensorBoard event files.
    #[command(subcommand)]
    Summary(summary_cmd::SummaryCmd),
    /// List the ops this build knows (TensorFlow's names) and whether each runs on the CPU.
    Ops(ops_cmd::OpsArgs),
}

/// Decides the kernels' instruction-set path now (also logged at info level) and says which
/// one it is on stderr, once per process, with the reason when `FERROFLOW_ISA` was ignored.
fn announce_isa() {
    use ferroflow_kernels::isa;
    if let Some(w) = isa::request_warning() {
        eprintln!("ferroflow: warning: {w}");
    }
    eprintln!(
        "ferroflow: compute path {} (set {}=avx512|avx2|portable to force a lower one)",
        isa::current(),
        isa::ENV
    );
}

fn main() -> ExitCode {
    allocator::keep_freed_pages();
    tracing_subscriber::fmt()
        // Warnings (a refused Shutdown, a failing accept) show unless RUST_LOG says otherwise.
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    if matches!(cli.command, Command::Train(_) | Command::Server(_) | Command::Demo(_)) {
        announce_isa();
    }
    let r = match cli.command {
        Command::Train(a) => train_cmd::run(a),
        Command::Server(a) => server_cmd::run(a),
        Command::Demo(a) => demo_cmd::run(a),
        Command::Checkpoint(c) => checkpoint_cmd::run(c),
        Command::Summary(c) => summary_cmd::run(c),
        Command::Ops(a) => ops_cmd::run(a),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
