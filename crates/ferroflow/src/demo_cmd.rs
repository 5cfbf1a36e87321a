//! `ferroflow demo`: the local distributed MNIST demo. Starts a cluster of separate OS
//! processes on free loopback ports (1 ps + 2 workers by default, each `ferroflow train`
//! with TensorFlow's trainer flags), shows a live progress bar per worker, prints the
//! chief's test accuracy, and makes sure every process is gone when it returns.

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

/// Arguments of `ferroflow demo`.
#[derive(clap::Args, Debug, Clone)]
#[command(rename_all = "snake_case")]
pub struct DemoArgs {
    /// Model: mlp or cnn.
    #[arg(long, default_value = "cnn")]
    pub model: String,
    /// Global training steps (4000 by default: the CNN reaches 99 % test accuracy with
    /// margin even though asynchronous updates are slightly stale).
    #[arg(long, default_value_t = 4000)]
    pub steps: usize,
    /// Number of worker processes.
    #[arg(long, default_value_t = 2)]
    pub workers: usize,
    /// Number of parameter server processes.
    #[arg(long, default_value_t = 1)]
    pub ps: usize,
    /// Optimizer (see `ferroflow train --help`).
    #[arg(long, default_value = "adam")]
    pub optimizer: String,
    /// Learning rate.
    #[arg(long, default_value_t = 1e-3)]
    pub learning_rate: f64,
    /// Batch size per worker.
    #[arg(long, default_value_t = 100)]
    pub batch: usize,
    /// Directory with the MNIST .gz files.
    #[arg(long, default_value = "data/mnist")]
    pub data_dir: PathBuf,
    /// Checkpoints, summaries and the graph (TensorBoard: `tensorboard --logdir <dir>`).
    #[arg(long, default_value = "logs/demo")]
    pub logdir: PathBuf,
    /// Print plain lines instead of progress bars.
    #[arg(long)]
    pub no_progress: bool,
    /// Synchronous training (see `ferroflow train --help`).
    #[arg(long)]
    pub sync: bool,
}

/// The child processes; all are killed when this is dropped (error paths included).
struct Cluster {
    children: Vec<(String, Child)>,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for (_, c) in &mut self.children {
            if let Ok(None) = c.try_wait() {
                let _ = c.kill();
            }
            let _ = c.wait();
        }
    }
}

fn free_port() -> Result<u16, String> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free local port: {e}"))?;
    l.local_addr().map(|a| a.port()).map_err(|e| e.to_string())
}

enum Msg {
    Line(usize, String),
    Closed(usize),
}

/// Runs the demo.
pub fn run(a: DemoArgs) -> Result<(), String> {
    if a.workers == 0 {
        return Err("--workers must be at least 1".into());
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the ferroflow binary: {e}"))?;
    let hosts = |n: usize| -> Result<String, String> {
        let v: Result<Vec<String>, String> = (0..n).map(|_| free_port().map(|p| format!("127.0.0.1:{p}"))).collect();
        Ok(v?.join(","))
    };
    let ps_hosts = hosts(a.ps)?;
    let worker_hosts = hosts(a.workers)?;
    println!("cluster: ps={ps_hosts} worker={worker_hosts}");
    let spawn = |job: &str, task: usize| -> Result<Child, String> {
        let mut cmd = Command::new(&exe);
        cmd.arg("train")
            .args(["--job_name", job, "--task_index", &task.to_string()])
            .args(["--ps_hosts", &ps_hosts, "--worker_hosts", &worker_hosts])
            .args(["--model", &a.model, "--steps", &a.steps.to_string(), "--batch", &a.batch.to_string()])
            .args(["--optimizer", &a.optimizer, "--learning_rate", &a.learning_rate.to_string()])
            .arg("--data_dir")
            .arg(&a.data_dir)
            .arg("--logdir")
            .arg(&a.logdir)
            .arg("--machine_progress")
            .args(a.sync.then_some("--sync"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd.spawn().map_err(|e| format!("cannot start /job:{job}/task:{task}: {e}"))
    };
    let mut cluster = Cluster { children: Vec::new() };
    for t in 0..a.ps {
        cluster.children.push((format!("/job:ps/task:{t}"), spawn("ps", t)?));
    }
    for t in 0..a.workers {
        cluster.children.push((format!("/job:worker/task:{t}"), spawn("worker", t)?));
    }

    // Every child's stdout and stderr feed one channel; stderr is kept for error reports.
    let (tx, rx) = mpsc::channel::<Msg>();
    let mut stderr_threads = Vec::new();
    for (i, (_, c)) in cluster.children.iter_mut().enumerate() {
        let out = c.stdout.take().ok_or("child has no stdout")?;
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx.send(Msg::Line(i, line));
            }
            let _ = tx.send(Msg::Closed(i));
        });
        let mut err = c.stderr.take().ok_or("child has no stderr")?;
        stderr_threads.push(std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        }));
    }
    drop(tx);

    let multi = if a.no_progress {
        MultiProgress::with_draw_target(indicatif::ProgressDrawTarget::hidden())
    } else {
        MultiProgress::new()
    };
    let style = ProgressStyle::with_template("{prefix:>18} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}")
        .map_err(|e| e.to_string())?;
    let bars: Vec<ProgressBar> = cluster
        .children
        .iter()
        .map(|(name, _)| {
            let b = multi.add(ProgressBar::new(a.steps as u64));
            b.set_style(style.clone());
            b.set_prefix(name.clone());
            b
        })
        .collect();
    let start = Instant::now();
    let mut accuracy: Option<f64> = None;
    let mut open = cluster.children.len();
    let mut local = vec![0usize; cluster.children.len()];
    while open > 0 {
        match rx.recv_timeout(Duration::from_secs(600)) {
            Ok(Msg::Line(i, line)) => {
                let name = &cluster.children[i].0;
                let mut parts = line.split_whitespace();
                match parts.next() {
                    Some("progress") => {
                        let v: Vec<&str> = parts.collect();
                        if let [l, g, loss] = v[..] {
                            local[i] = l.parse().unwrap_or(local[i]);
                            bars[i].set_position(g.parse::<u64>().unwrap_or(0));
                            bars[i].set_message(format!("loss {loss:.6} local step {l}"));
                            if a.no_progress && local[i].is_multiple_of(200) {
                                println!("{name}: local step {l}, global step {g}, loss {loss}");
                            }
                        }
                    }
                    Some("accuracy") => accuracy = parts.next().and_then(|v| v.parse().ok()),
                    _ => {
                        let _ = multi.println(format!("{name}: {line}"));
                        if a.no_progress {
                            println!("{name}: {line}");
                        }
                    }
                }
            }
            Ok(Msg::Closed(i)) => {
                open -= 1;
                bars[i].finish();
            }
            Err(_) => return Err("no output from the cluster for 10 minutes; stopping it".into()),
        }
    }
    let mut failures = Vec::new();
    for (i, (name, c)) in cluster.children.iter_mut().enumerate() {
        let status = c.wait().map_err(|e| format!("{name}: {e}"))?;
        let err = stderr_threads.remove(0).join().unwrap_or_default();
        let _ = i;
        if !status.success() {
            failures.push(format!("{name} exited with {status}: {}", err.trim()));
        }
    }
    multi.clear().ok();
    if !failures.is_empty() {
        return Err(failures.join("\n"));
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{} ps + {} workers trained the {} for {} global steps in {secs:.1}s ({:.1} global steps/s); local steps: {:?}",
        a.ps,
        a.workers,
        a.model,
        a.steps,
        a.steps as f64 / secs,
        &local[a.ps..]
    );
    match accuracy {
        Some(acc) => println!("test accuracy: {:.2}%", acc * 100.0),
        None => return Err("the chief did not report a test accuracy".into()),
    }
    println!("checkpoints and TensorBoard summaries: {} (tensorboard --logdir {0})", a.logdir.display());
    println!("all {} processes exited cleanly", cluster.children.len());
    Ok(())
}
