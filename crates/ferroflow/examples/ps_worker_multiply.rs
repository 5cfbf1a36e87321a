//! One parameter server and two workers, each a separate OS process.
//!
//! The ps holds constants (`a = 3` for worker 0, `a = 5` for worker 1); each worker holds
//! its own constant (`b = 4` on worker 0, `b = 8` on worker 1) and multiplies on its own
//! device, so `a` travels from the ps to the worker: worker 0 prints 12, worker 1 prints 40.
//!
//! ```text
//! # everything at once (three child processes on free local ports):
//! cargo run --example ps_worker_multiply
//! # or by hand, in three terminals:
//! C='ps=localhost:2222;worker=localhost:2223,localhost:2224'
//! cargo run --example ps_worker_multiply -- --role ps --cluster "$C"
//! cargo run --example ps_worker_multiply -- --role worker --task 0 --cluster "$C"
//! cargo run --example ps_worker_multiply -- --role worker --task 1 --cluster "$C" --stop-ps
//! ```
//! The ps serves until a worker started with `--stop-ps` tells it to shut down (ferroflow's
//! Shutdown RPC), then exits 0.

use ferroflow_runtime::StepRunner;
use std::process::{Command, Stdio};

use ferroflow::proto::ConfigProto;
use ferroflow::{ops, Scope};
use ferroflow_distributed::{shutdown_server, ClusterSpec, GrpcSession, Server, ServerOptions};

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
}

fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// Runs worker `task`: computes a * b with a on the ps and b on this worker.
fn worker(cluster: &ClusterSpec, task: i32) -> Result<f32, Box<dyn std::error::Error>> {
    let server = Server::new(cluster, "worker", task, ServerOptions::default())?;
    let (a, b) = if task == 0 { (3.0f32, 4.0f32) } else { (5.0, 8.0) };
    let s = Scope::new_root();
    let a = ops::constant(&s.with_device("/job:ps/task:0"), a);
    let here = s.with_device(&format!("/job:worker/task:{task}"));
    let b = ops::constant(&here, b);
    let product = ops::mul(&here, a, b);
    // Contact only the tasks this graph uses (the other worker may not be up yet).
    let config = ConfigProto {
        device_filters: vec!["/job:ps".into(), format!("/job:worker/task:{task}")],
        ..Default::default()
    };
    let sess = GrpcSession::with_config(server.target(), s.graph(), config)?;
    let v = sess.run(&[], &[&product], &[])?[0].scalar_value::<f32>()?;
    sess.close()?;
    Ok(v)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    match arg("--role").as_deref() {
        Some("ps") => {
            let cluster = ClusterSpec::parse_cluster_flag(&arg("--cluster").ok_or("--cluster is required")?)?;
            let server = Server::new(&cluster, "ps", 0, ServerOptions::default())?;
            println!("ps listening on {}", server.target());
            server.join()?;
            println!("ps: shut down");
        }
        Some("worker") => {
            let cluster = ClusterSpec::parse_cluster_flag(&arg("--cluster").ok_or("--cluster is required")?)?;
            let task: i32 = arg("--task").unwrap_or_else(|| "0".into()).parse()?;
            let v = worker(&cluster, task)?;
            println!("worker {task}: {v:.1}");
            if std::env::args().any(|a| a == "--stop-ps") {
                shutdown_server(cluster.task_address("ps", 0)?, "job done")?;
            }
        }
        Some(other) => return Err(format!("unknown --role {other} (ps or worker)").into()),
        None => {
            // Launch the three processes ourselves.
            let c =
                format!("ps=localhost:{};worker=localhost:{},localhost:{}", free_port()?, free_port()?, free_port()?);
            let me = std::env::current_exe()?;
            let mut ps = Command::new(&me).args(["--role", "ps", "--cluster", &c]).stdout(Stdio::inherit()).spawn()?;
            let w0 = Command::new(&me).args(["--role", "worker", "--task", "0", "--cluster", &c]).status()?;
            let w1 =
                Command::new(&me).args(["--role", "worker", "--task", "1", "--cluster", &c, "--stop-ps"]).status()?;
            let p = ps.wait()?;
            if !(w0.success() && w1.success() && p.success()) {
                return Err(format!("a process failed: worker0 {w0}, worker1 {w1}, ps {p}").into());
            }
        }
    }
    Ok(())
}
