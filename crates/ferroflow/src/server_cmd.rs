//! `ferroflow server`: runs one task of a cluster (a master and a worker on one port)
//! until it is told to stop (ferroflow's Shutdown RPC) or stays idle too long.
//!
//! The cluster comes from `--cluster 'ps=h:p;worker=h:p,h:p'`, from TensorFlow's classic
//! `--ps_hosts/--worker_hosts` flags with `--job_name/--task_index`, or from `TF_CONFIG`;
//! with none of these, a single local task (job `localhost`) on `--port` (0 = any free
//! port). When the port is open the command prints one line ending with the target,
//! `... listening on grpc://host:port`, and exits 0 after a shutdown.

use std::io::Write;
use std::time::Duration;

use ferroflow_distributed::{ClusterFlags, ClusterSpec, Server, ServerOptions, TfConfig};

/// Arguments of `ferroflow server`.
#[derive(clap::Args, Debug, Default)]
pub struct ServerArgs {
    /// The cluster, e.g. 'ps=ps0:2222;worker=w0:2222,w1:2222'.
    #[arg(long)]
    pub cluster: Option<String>,
    /// Parameter server tasks, comma-separated host:port (with --worker_hosts).
    #[arg(long = "ps_hosts", alias = "ps-hosts")]
    pub ps_hosts: Option<String>,
    /// Worker tasks, comma-separated host:port.
    #[arg(long = "worker_hosts", alias = "worker-hosts")]
    pub worker_hosts: Option<String>,
    /// Chief task (TF_CONFIG-style clusters), host:port.
    #[arg(long = "chief_hosts", alias = "chief-hosts")]
    pub chief_hosts: Option<String>,
    /// This task's job (ps, worker, ...).
    #[arg(long = "job_name", alias = "job-name")]
    pub job_name: Option<String>,
    /// This task's index in its job.
    #[arg(long = "task_index", alias = "task-index")]
    pub task_index: Option<i32>,
    /// Stop after this many seconds without any RPC.
    #[arg(long = "idle_timeout_secs", alias = "idle-timeout-secs")]
    pub idle_timeout_secs: Option<f64>,
    /// Host to bind (default 0.0.0.0; the advertised address stays the cluster's).
    #[arg(long)]
    pub bind: Option<String>,
    /// Port of a single local server (no cluster given); 0 picks a free port.
    #[arg(long, default_value_t = 0)]
    pub port: u16,
}

/// Where the cluster and this task come from.
fn resolve(args: &ServerArgs) -> Result<(ClusterSpec, String, i32), String> {
    let mut flags: Vec<String> = Vec::new();
    let mut push = |name: &str, v: &Option<String>| {
        if let Some(v) = v {
            flags.push(format!("--{name}={v}"));
        }
    };
    push("cluster", &args.cluster);
    push("ps_hosts", &args.ps_hosts);
    push("worker_hosts", &args.worker_hosts);
    push("chief_hosts", &args.chief_hosts);
    let has_cluster = !flags.is_empty();
    if has_cluster {
        if let Some(j) = &args.job_name {
            flags.push(format!("--job_name={j}"));
        }
        if let Some(t) = args.task_index {
            flags.push(format!("--task_index={t}"));
        }
        let f = ClusterFlags::parse(&flags).map_err(|e| e.to_string())?;
        let (job, task) = f.task().map_err(|e| e.to_string())?;
        return Ok((f.cluster, job, task));
    }
    if let Some(tc) = TfConfig::from_env().map_err(|e| format!("TF_CONFIG: {e}"))? {
        if !tc.cluster.is_empty() {
            let t = tc.task.clone().ok_or("TF_CONFIG has a cluster but no task: set task.type and task.index")?;
            let job = args.job_name.clone().unwrap_or(t.job);
            let index = args.task_index.unwrap_or(t.index);
            tc.cluster.task_address(&job, index).map_err(|e| e.to_string())?;
            return Ok((tc.cluster, job, index));
        }
    }
    if args.job_name.is_some() || args.task_index.is_some() {
        return Err("--job_name/--task_index need a cluster: --cluster, --<job>_hosts or TF_CONFIG".into());
    }
    let local = format!("localhost:{}", args.port);
    let c = ClusterSpec::new(&[("localhost", vec![local.as_str()])]).map_err(|e| e.to_string())?;
    Ok((c, "localhost".into(), 0))
}

/// Runs the server until it stops; Ok after a shutdown.
pub fn run(args: ServerArgs) -> Result<(), String> {
    let (cluster, job, task) = resolve(&args)?;
    let local_only = job == "localhost" && args.cluster.is_none();
    let opts = ServerOptions {
        bind_host: args.bind.clone().or_else(|| local_only.then(|| "127.0.0.1".to_string())),
        idle_timeout: match args.idle_timeout_secs {
            Some(s) if s.is_finite() && s > 0.0 => Some(Duration::from_secs_f64(s)),
            Some(s) => return Err(format!("--idle_timeout_secs must be a positive number of seconds, got {s}")),
            None => None,
        },
        ..Default::default()
    };
    let server = Server::new(&cluster, &job, task, opts).map_err(|e| e.to_string())?;
    {
        let mut out = std::io::stdout().lock();
        let _ =
            writeln!(out, "ferroflow server {} (cluster {cluster}) listening on {}", server.task(), server.target());
        let _ = out.flush();
    }
    server.join().map_err(|e| e.to_string())?;
    tracing::info!(task = %server.task(), "server stopped");
    Ok(())
}
