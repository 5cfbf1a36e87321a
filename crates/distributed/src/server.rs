//! [`Server`]: one task of a cluster — a master and a worker (and ferroflow's control
//! service) on one port, served by one tokio runtime.
//!
//! ```no_run
//! use ferroflow_distributed::{ClusterSpec, Server, ServerOptions};
//! let cluster = ClusterSpec::new(&[("ps", vec!["ps0:2222"]), ("worker", vec!["w0:2222"])]).unwrap();
//! let server = Server::new(&cluster, "ps", 0, ServerOptions::default()).unwrap();
//! println!("serving {}", server.target());
//! server.join().unwrap(); // until Shutdown (RPC or Server::shutdown) or the idle timeout
//! ```

use std::net::{SocketAddr, TcpListener};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use ferroflow_core::Status;
use tokio::sync::watch;

use crate::access::AllowList;
use crate::channels::ChannelCache;
use crate::control::proto::ServerInfoResponse;
use crate::ids::random_nonzero;
use crate::master::{Master, MasterOptions};
use crate::worker::{Worker, WorkerOptions};
use crate::worker_cache::{GrpcWorkerCache, WorkerCache};
use crate::{ClusterSpec, FaultFilters, InMemoryNet};

/// Most CPU devices a server's `device_count` may ask for.
pub const MAX_CPU_DEVICES: i32 = 1024;

/// How a server binds and behaves.
#[derive(Debug, Default)]
pub struct ServerOptions {
    /// Host to bind; the port is the task's port in the cluster and the advertised address
    /// stays the cluster's. Default: loopback when the task's advertised host is loopback
    /// (`localhost`, `127.x`, `::1`), else `0.0.0.0` (like TensorFlow; in Kubernetes the
    /// advertised name is a service address the pod cannot bind).
    pub bind_host: Option<String>,
    /// Addresses allowed to connect (`--allow_from`); others are closed before any RPC.
    pub allow_from: Option<AllowList>,
    /// Most connections held open at once (default [`DEFAULT_MAX_CONNECTIONS`]).
    pub max_connections: Option<usize>,
    /// Most connections one peer address holds open at once (default a quarter of
    /// `max_connections`, [`crate::DEFAULT_PEER_SHARE`]); further ones are closed at once.
    pub max_connections_per_peer: Option<usize>,
    /// A connection with no request for this long is closed (default
    /// [`crate::DEFAULT_CONNECTION_IDLE`]; zero: never).
    pub connection_idle: Option<Duration>,
    /// TLS on this task's port and to its peers (`--tls_cert`, `--tls_key`, `--tls_client_ca`,
    /// `--tls_ca`); its target is then `grpcs://host:port`.
    pub tls: Option<crate::tls::ServerTls>,
    /// An already bound listener to serve on instead (tests bind `127.0.0.1:0` first).
    pub listener: Option<TcpListener>,
    /// How long a new connection may take to send its first request before it is closed
    /// (default [`crate::access::HANDSHAKE_TIMEOUT`]).
    pub handshake_timeout: Option<Duration>,
    /// Stop after this long without any RPC (a parameter server that outlives its job).
    pub idle_timeout: Option<Duration>,
    /// Connect timeout of channels to peer tasks (default 5 s).
    pub connect_timeout: Option<Duration>,
    /// Async (gRPC) threads; default `FERROFLOW_ASYNC_THREADS`, else 1 on a machine of at
    /// most 2 CPUs and 2 on a larger one. Kernels run on the compute pool, not on these.
    pub threads: Option<usize>,
    /// Worker limits.
    pub worker: WorkerOptions,
    /// Master limits.
    pub master: MasterOptions,
    /// Run on this in-memory net instead of a port: no socket is opened, peers are the
    /// net's other tasks (see [`InMemoryNet`]).
    pub in_memory: Option<Arc<InMemoryNet>>,
    /// Fault filters on every call this task makes to its peers over gRPC (tests; an
    /// in-memory task uses its net's).
    pub fault_filters: Option<Arc<FaultFilters>>,
    /// Fail points of this task's master and worker (tests; an in-memory task uses its
    /// net's).
    pub fail_points: Option<Arc<crate::FailPoints>>,
}

/// The hosts of every task of `cluster`.
fn cluster_hosts(cluster: &ClusterSpec) -> Vec<String> {
    let mut hosts: Vec<String> = cluster
        .tasks()
        .into_iter()
        .filter_map(|(_, _, a)| crate::cluster_spec::split_host_port(a).map(|(h, _)| h.to_string()))
        .collect();
    hosts.sort();
    hosts.dedup();
    hosts
}

/// State the services share with the server.
pub(crate) struct ServerShared {
    pub(crate) task: String,
    pub(crate) target: String,
    pub(crate) worker: Arc<Worker>,
    pub(crate) master: Arc<Master>,
    /// The remote eager service (TensorFlow 2 clients).
    pub(crate) eager: Arc<crate::eager::EagerService>,
    /// `--allow_from`, also consulted by the control service.
    pub(crate) allow: Option<Arc<AllowList>>,
    /// Hosts of the cluster's tasks (peers that may use the control service).
    pub(crate) cluster_hosts: Vec<String>,
    /// Whether clients must present a certificate (mutual TLS): then the certificate, not
    /// the address, says who is a task of the cluster.
    pub(crate) mutual_tls: bool,
    last_activity: Mutex<Instant>,
    shutdown_tx: watch::Sender<bool>,
    stopped: (Mutex<bool>, Condvar),
}

impl ServerShared {
    pub(crate) fn touch(&self) {
        *self.last_activity.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }

    fn idle(&self) -> Duration {
        self.last_activity.lock().unwrap_or_else(|e| e.into_inner()).elapsed()
    }

    /// Whether a shutdown was requested.
    pub(crate) fn is_shutting_down(&self) -> bool {
        *self.shutdown_tx.borrow()
    }

    /// Starts a graceful shutdown: running steps are aborted, then the port closes.
    pub(crate) fn request_shutdown(&self) {
        if !*self.shutdown_tx.borrow() {
            tracing::info!(task = %self.task, "shutting down");
            crate::local_master::unregister(crate::channels::strip_scheme(&self.target));
            self.worker.abort_all(Status::cancelled(format!("server {} is shutting down", self.task)));
            self.shutdown_tx.send_replace(true);
        }
    }

    pub(crate) fn mark_stopped(&self) {
        let (m, cv) = &self.stopped;
        *m.lock().unwrap_or_else(|e| e.into_inner()) = true;
        cv.notify_all();
    }

    /// Waits until stopped, at most `timeout` (forever if None); returns whether stopped.
    fn wait_stopped(&self, timeout: Option<Duration>) -> bool {
        let (m, cv) = &self.stopped;
        let mut g = m.lock().unwrap_or_else(|e| e.into_inner());
        let end = timeout.map(|t| Instant::now() + t);
        while !*g {
            match end {
                None => g = cv.wait(g).unwrap_or_else(|e| e.into_inner()),
                Some(end) => {
                    let left = end.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return false;
                    }
                    g = cv.wait_timeout(g, left).unwrap_or_else(|e| e.into_inner()).0;
                }
            }
        }
        true
    }

    pub(crate) fn info(&self) -> ServerInfoResponse {
        ServerInfoResponse {
            task: self.task.clone(),
            target: self.target.clone(),
            incarnation: self.worker.incarnation,
            master_sessions: self.master.num_sessions() as i64,
            worker_sessions: self.worker.num_sessions() as i64,
            idle_secs: self.idle().as_secs_f64(),
        }
    }
}

/// One task of a cluster, serving TensorFlow's MasterService and WorkerService.
pub struct Server {
    runtime: Option<tokio::runtime::Runtime>,
    shared: Arc<ServerShared>,
    local_addr: SocketAddr,
}

impl Server {
    /// Starts task `task` of job `job` of `cluster`: binds its port (see
    /// [`ServerOptions::bind_host`]; port 0 picks a free port, readable with
    /// [`Server::port`]) and serves until shut down. The port is open when this returns.
    pub fn new(cluster: &ClusterSpec, job: &str, task: i32, mut opts: ServerOptions) -> Result<Server, Status> {
        let addr = cluster.task_address(job, task)?.to_string();
        let (host, port) = crate::cluster_spec::split_host_port(&addr)
            .ok_or_else(|| Status::invalid_argument(format!("task address '{addr}' is not host:port")))?;
        let host = host.to_string();
        let task_name = format!("/job:{job}/replica:0/task:{task}");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(opts.threads.unwrap_or_else(crate::client_runtime::async_threads).max(1))
            .thread_name(format!("ferroflow-{job}-{task}"))
            .enable_all()
            .build()
            .map_err(|e| Status::internal(format!("cannot start the async runtime: {e}")))?;
        let memory = opts.in_memory.take();
        // The cluster as this task sees it: its own entry carries the bound port.
        let (listener, own, local_addr) = match &memory {
            Some(_) => (None, addr.clone(), SocketAddr::from(([0, 0, 0, 0], port))),
            None => {
                let l = crate::server_tcp::bind(&mut opts, &host, port, &task_name, &addr)?;
                let local = l.local_addr()?;
                (Some(l), format!("{host}:{}", local.port()), local)
            }
        };
        let cluster = Arc::new(with_address(cluster, job, task, &own)?);
        let target = format!("{}://{own}", if opts.tls.is_some() { "grpcs" } else { "grpc" });
        if let Some(t) = &opts.tls {
            // This process's clients (a training loop beside its task) reach the cluster as it does.
            crate::tls::set_client_tls_if_unset(&t.client);
        }
        let peers: Arc<dyn WorkerCache> = match &memory {
            Some(net) => net.cache(&task_name),
            None => {
                let channels = Arc::new(ChannelCache::with_tls(
                    opts.connect_timeout.unwrap_or(Duration::from_secs(5)),
                    opts.tls.as_ref().map(|t| t.client.clone()),
                ));
                Arc::new(GrpcWorkerCache::new(&task_name, channels, opts.fault_filters.take()))
            }
        };
        let incarnation = random_nonzero();
        let handle = runtime.handle().clone();
        let mut worker_opts = std::mem::take(&mut opts.worker);
        // The server's config sets its CPU devices, as TensorFlow's `device_count`.
        if let Some(&n) = opts.master.default_session_config.as_ref().and_then(|c| c.device_count.get("CPU")) {
            if !(1..=MAX_CPU_DEVICES).contains(&n) {
                return Err(Status::invalid_argument(format!(
                    "the server config's device_count asks for {n} CPU devices; 1 to {MAX_CPU_DEVICES} are possible"
                )));
            }
            worker_opts.cpu_devices = n as usize;
        }
        if let Some(x) = opts.master.default_session_config.as_ref().and_then(|c| c.experimental.as_ref()) {
            if !x.collective_group_leader.is_empty() {
                worker_opts.collective_group_leader = Some(x.collective_group_leader.clone());
            }
            worker_opts.recv_buf_max_chunk = x.recv_buf_max_chunk;
        }
        let mut worker = Worker::new(&task_name, incarnation, cluster.clone(), peers.clone(), handle, worker_opts);
        worker.fail = opts.fail_points.take().or_else(|| memory.as_ref().map(|n| n.fail_points().clone()));
        let worker = Arc::new(worker);
        if let Some(net) = &memory {
            // A client finds an in-process server by its address: two running ones may
            // not share it (as two servers cannot bind one port).
            if crate::local_master::lookup(&own).is_some_and(|lm| lm.server().is_some()) {
                return Err(Status::unknown(format!(
                    "Could not start gRPC server: task {task_name}'s address {own} is taken by a running server of \
                     this process"
                )));
            }
            net.attach(&own, &worker)?;
        }
        let master =
            Arc::new(Master::new(&task_name, cluster.clone(), worker.clone(), peers, std::mem::take(&mut opts.master)));
        let (shutdown_tx, shutdown_rx) = watch::channel(false);
        let shared = Arc::new(ServerShared {
            task: task_name.clone(),
            target: target.clone(),
            worker: worker.clone(),
            master: master.clone(),
            eager: Arc::new(crate::eager::EagerService::new(worker.clone(), master.clone())),
            allow: opts.allow_from.take().map(Arc::new),
            cluster_hosts: cluster_hosts(&cluster),
            mutual_tls: opts.tls.as_ref().is_some_and(|t| t.mutual),
            last_activity: Mutex::new(Instant::now()),
            shutdown_tx,
            stopped: (Mutex::new(false), Condvar::new()),
        });
        match (listener, memory) {
            (Some(l), _) => crate::server_tcp::serve(&runtime, &shared, l, &opts, shutdown_rx.clone())?,
            (None, Some(net)) => {
                let (s2, mut rx2, own2) = (shared.clone(), shutdown_rx.clone(), own.clone());
                runtime.spawn(async move {
                    let _ = rx2.wait_for(|v| *v).await;
                    net.detach(&own2);
                    s2.mark_stopped();
                });
            }
            (None, None) => return Err(Status::internal("a server with neither a listener nor an in-memory net")),
        }
        // Housekeeping: expired step tables, idle timeout.
        let s3 = shared.clone();
        let idle_timeout = opts.idle_timeout;
        let mut rx3 = shutdown_rx;
        runtime.spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(500));
            loop {
                tokio::select! {
                    _ = tick.tick() => {}
                    _ = rx3.wait_for(|v| *v) => return,
                }
                let n = s3.worker.sweep();
                if n > 0 {
                    tracing::debug!(task = %s3.task, steps = n, "expired step tables removed");
                }
                s3.eager.sweep();
                s3.master.expire_idle_sessions().await;
                if let Some(t) = idle_timeout {
                    if s3.idle() >= t {
                        tracing::info!(task = %s3.task, idle_secs = t.as_secs_f64(), "idle timeout reached");
                        s3.request_shutdown();
                        return;
                    }
                }
            }
        });
        crate::local_master::register(&own, &shared, runtime.handle().clone());
        tracing::info!(task = %task_name, %target, bound = %local_addr, "server started");
        Ok(Server { runtime: Some(runtime), shared, local_addr })
    }

    /// A single-task server on `localhost` with a free port (TensorFlow's
    /// `tf.distribute.Server.create_local_server()`), job `localhost`, bound to 127.0.0.1.
    pub fn create_local_server() -> Result<Server, Status> {
        let cluster = ClusterSpec::new(&[("localhost", vec!["localhost:0"])])?;
        Server::new(
            &cluster,
            "localhost",
            0,
            ServerOptions { bind_host: Some("127.0.0.1".into()), ..Default::default() },
        )
    }

    /// `grpc://host:port` (`grpcs://` with TLS), the session target of this task.
    pub fn target(&self) -> &str {
        &self.shared.target
    }

    /// The bound port.
    pub fn port(&self) -> u16 {
        self.local_addr.port()
    }

    /// The bound socket address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// `/job:J/replica:0/task:T`.
    pub fn task(&self) -> &str {
        &self.shared.task
    }

    /// The worker (its shared resource manager holds this task's variables).
    pub fn worker(&self) -> &Arc<Worker> {
        &self.shared.worker
    }

    /// The master.
    pub fn master(&self) -> &Arc<Master> {
        &self.shared.master
    }

    /// Blocks until the server has stopped (Shutdown RPC, [`Server::shutdown`] or the idle
    /// timeout).
    pub fn join(&self) -> Result<(), Status> {
        self.shared.wait_stopped(None);
        Ok(())
    }

    /// Stops the server (running steps are cancelled) and waits until the port is closed
    /// (at most ~5 s).
    pub fn shutdown(&self) {
        self.shared.request_shutdown();
        self.shared.wait_stopped(Some(Duration::from_secs(10)));
    }

    /// Whether the server has stopped.
    pub fn is_stopped(&self) -> bool {
        self.shared.wait_stopped(Some(Duration::ZERO))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shutdown();
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

/// `cluster` with task (job, task)'s address replaced.
fn with_address(cluster: &ClusterSpec, job: &str, task: i32, addr: &str) -> Result<ClusterSpec, Status> {
    let mut map: std::collections::BTreeMap<String, std::collections::BTreeMap<i32, String>> = Default::default();
    for (j, t, a) in cluster.tasks() {
        let a = if j == job && t == task { addr } else { a };
        map.entry(j.to_string()).or_default().insert(t, a.to_string());
    }
    ClusterSpec::from_map(map)
}
