//! The `ferroflow` command: `train` (MNIST, in one process or as a task of a cluster),
//! `server` (one task of a cluster) and `demo` (the local distributed MNIST demo).

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cluster_args;
mod demo_cmd;
mod server_cmd;
mod train_cmd;

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
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let r = match cli.command {
        Command::Train(a) => train_cmd::run(a),
        Command::Server(a) => server_cmd::run(a),
        Command::Demo(a) => demo_cmd::run(a),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
