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

use ferroflow_core::proto::ConfigProto;
use ferroflow_distributed::{ClusterSpec, GraphLimits, Server, ServerOptions};

use crate::cluster_args::ClusterArgs;
use crate::metrics_export::{self, MetricsArgs};
use crate::transport_args::TransportArgs;

/// Arguments of `ferroflow server`.
#[derive(clap::Args, Debug, Default)]
pub struct ServerArgs {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Stop after this many seconds without any RPC.
    #[arg(long = "idle_timeout_secs", alias = "idle-timeout-secs")]
    pub idle_timeout_secs: Option<f64>,
    #[command(flatten)]
    pub transport: TransportArgs,
    /// Port of a single local server (no cluster given); 0 picks a free port.
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// The server's default session config, as TensorFlow's `tf.train.Server(...,
    /// config=...)`: a file holding a serialized `ConfigProto` (Python:
    /// `open(p, "wb").write(config.SerializeToString())`). Merged into every session's
    /// config (the fields it sets win).
    #[arg(long = "default_session_config", alias = "default-session-config")]
    pub default_session_config: Option<std::path::PathBuf>,
    /// Bounds every blocked op of every session on this server (milliseconds; sets the
    /// default session config's `operation_timeout_in_ms`).
    #[arg(long = "operation_timeout_in_ms", alias = "operation-timeout-in-ms")]
    pub operation_timeout_in_ms: Option<i64>,
    /// How long a session's creation waits for every task of the cluster (those its
    /// `device_filters` keep) to come up, as TensorFlow's master does, logging which it is
    /// still waiting for every 10 s. A task still down then is waited for by the first step
    /// that uses it. 0: wait for none. Default 30.
    #[arg(long = "create_session_wait_secs", alias = "create-session-wait-secs")]
    pub create_session_wait_secs: Option<f64>,
    /// Largest tensor this task allocates (bytes, or with a K/M/G/T suffix: `8G`); a request
    /// that needs more gets RESOURCE_EXHAUSTED. Default: three quarters of physical memory.
    #[arg(long = "memory_limit", alias = "memory-limit")]
    pub memory_limit: Option<String>,
    /// Most nodes of one graph: a session's graph (CreateSession, ExtendSession) or a
    /// registered partition (RegisterGraph); a larger one gets RESOURCE_EXHAUSTED.
    /// Default 10000000.
    #[arg(long = "max_graph_nodes", alias = "max-graph-nodes")]
    pub max_graph_nodes: Option<usize>,
    /// Most bytes of one graph, serialized (bytes, or with a K/M/G/T suffix: `512M`);
    /// a larger one gets RESOURCE_EXHAUSTED. Default 2G, protobuf's own limit.
    #[arg(long = "max_graph_bytes", alias = "max-graph-bytes")]
    pub max_graph_bytes: Option<String>,
    /// Most sessions the master holds open at once; CreateSession beyond it gets
    /// RESOURCE_EXHAUSTED. Default 4096.
    #[arg(long = "max_sessions", alias = "max-sessions")]
    pub max_sessions: Option<usize>,
    /// Close a session unused (no call, no running step) for this many seconds, as
    /// TensorFlow's `session_gc_seconds`; a later call on it is told why. Default: never.
    #[arg(long = "session_gc_seconds", alias = "session-gc-seconds")]
    pub session_gc_seconds: Option<f64>,
    /// Confine the file ops (checkpoint save/restore/merge, table and dataset files) to
    /// this directory: paths outside it (after `..` and symbolic links) get
    /// PERMISSION_DENIED.
    #[arg(long = "file_root", alias = "file-root")]
    pub file_root: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub metrics: MetricsArgs,
}

/// The default session config the flags give, if any.
fn default_session_config(args: &ServerArgs) -> Result<Option<ConfigProto>, String> {
    use prost::Message;
    let mut config =
        match &args.default_session_config {
            Some(p) => {
                let bytes = std::fs::read(p).map_err(|e| format!("--default_session_config {}: {e}", p.display()))?;
                Some(ConfigProto::decode(bytes.as_slice()).map_err(|e| {
                    format!("--default_session_config {}: not a serialized ConfigProto: {e}", p.display())
                })?)
            }
            None => None,
        };
    if let Some(ms) = args.operation_timeout_in_ms {
        if ms <= 0 {
            return Err(format!("--operation_timeout_in_ms must be a positive number of milliseconds, got {ms}"));
        }
        config.get_or_insert_with(ConfigProto::default).operation_timeout_in_ms = ms;
    }
    Ok(config)
}

/// The limits on one graph the flags give.
fn graph_limits(args: &ServerArgs) -> Result<GraphLimits, String> {
    let max_nodes = args.max_graph_nodes.unwrap_or(ferroflow_distributed::DEFAULT_MAX_GRAPH_NODES);
    if max_nodes == 0 {
        return Err("--max_graph_nodes must be at least 1".into());
    }
    let max_bytes = match &args.max_graph_bytes {
        Some(s) => ferroflow_core::parse_size(s).map_err(|e| format!("--max_graph_bytes {e}"))?,
        None => ferroflow_distributed::DEFAULT_MAX_GRAPH_BYTES,
    };
    Ok(GraphLimits { max_nodes, max_bytes })
}

/// Where the cluster and this task come from (a single local task without a cluster).
fn resolve(args: &ServerArgs) -> Result<(ClusterSpec, String, i32), String> {
    if let Some(r) = args.cluster.resolve()? {
        return Ok(r);
    }
    let local = format!("localhost:{}", args.port);
    let c = ClusterSpec::new(&[("localhost", vec![local.as_str()])]).map_err(|e| e.to_string())?;
    Ok((c, "localhost".into(), 0))
}

/// Runs the server until it stops; Ok after a shutdown.
pub fn run(args: ServerArgs) -> Result<(), String> {
    if let Some(root) = &args.file_root {
        ferroflow_core::set_file_root(Some(root)).map_err(|e| e.message)?;
    }
    if let Some(m) = &args.memory_limit {
        ferroflow_core::set_memory_limit(ferroflow_core::parse_size(m).map_err(|e| format!("--memory_limit {e}"))?);
    }
    let (cluster, job, task) = resolve(&args)?;
    let local_only = job == "localhost" && args.cluster.cluster.is_none();
    let task_addr = cluster.task_address(&job, task).map_err(|e| e.to_string())?.to_string();
    let task_host = (!local_only).then(|| metrics_export::host_of(&task_addr));
    let transport = args.transport.transport(local_only.then(|| "127.0.0.1".to_string()))?;
    metrics_export::start(
        &args.metrics,
        &metrics_export::bind_host(task_host, args.transport.bind.as_deref()),
        transport.allow_from.as_ref(),
    )?;
    let opts = ServerOptions {
        idle_timeout: match args.idle_timeout_secs {
            Some(s) if s.is_finite() && s > 0.0 => Some(Duration::from_secs_f64(s)),
            Some(s) => return Err(format!("--idle_timeout_secs must be a positive number of seconds, got {s}")),
            None => None,
        },
        ..transport.server_options()
    };
    let mut opts = opts;
    opts.master.default_session_config = default_session_config(&args)?;
    match args.create_session_wait_secs {
        Some(s) if s.is_finite() && s >= 0.0 => opts.master.create_session_wait = Duration::from_secs_f64(s),
        Some(s) => return Err(format!("--create_session_wait_secs must be zero or a positive number, got {s}")),
        None => {}
    }
    match args.max_sessions {
        Some(0) => return Err("--max_sessions must be at least 1".into()),
        Some(n) => opts.master.max_sessions = n,
        None => {}
    }
    match args.session_gc_seconds {
        Some(s) if s.is_finite() && s > 0.0 => opts.master.session_gc = Some(Duration::from_secs_f64(s)),
        Some(s) => return Err(format!("--session_gc_seconds must be a positive number, got {s}")),
        None => {}
    }
    let limits = graph_limits(&args)?;
    opts.master.graph_limits = limits;
    opts.worker.graph_limits = limits;
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
