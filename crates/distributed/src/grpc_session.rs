//! [`GrpcSession`]: a session on a cluster, spoken to a task's master (TensorFlow's
//! `Session("grpc://host:port")`). Same `run` shape as [`ferroflow_runtime::DirectSession`].
//! The master is a [`MasterApi`]: a server of this process is called directly (like
//! TensorFlow's LocalMaster: no encoding, no loopback copies), any other over gRPC.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ferroflow_core::proto::*;
use ferroflow_core::{Status, Tensor};
use ferroflow_graph::Graph;

use crate::channels::{endpoint, strip_scheme};
use crate::client_runtime::{block_on, enter};
use crate::control::ControlClient;
use crate::ids::new_request_id;
use crate::local_master::LocalMaster;
use crate::master_api::{MasterApi, RunStepCall};
use crate::rpc::RemoteMaster;
use crate::rpc_util::{from_grpc_call, request_with_deadline};

mod partial_run;
pub use partial_run::PartialRunHandle;

#[derive(Default)]
struct State {
    handle: Option<String>,
    version: i64,
    sent: usize,
    closed: bool,
}

/// A session on a ferroflow (or TensorFlow) cluster.
///
/// ```no_run
/// use ferroflow_distributed::{GrpcSession, Server};
/// use ferroflow_graph::{ops, Scope};
/// use ferroflow_runtime::StepRunner;
/// let server = Server::create_local_server().unwrap();
/// let s = Scope::new_root();
/// let c = ops::constant(&s, 3.0f32);
/// let sess = GrpcSession::new(server.target(), s.graph()).unwrap();
/// assert_eq!(sess.run(&[], &[&c], &[]).unwrap()[0].scalar_value::<f32>().unwrap(), 3.0);
/// ```
pub struct GrpcSession {
    target: String,
    graph: Graph,
    config: ConfigProto,
    /// The master at `target` over gRPC.
    remote: Arc<RemoteMaster>,
    /// The master of a server in this process at `target`, called directly while it serves.
    local: Option<LocalMaster>,
    state: Mutex<State>,
}

/// Time allowed for CreateSession (the master waits up to a minute for every task).
const CREATE_TIMEOUT: Duration = Duration::from_secs(120);
/// Time allowed for the other session RPCs.
const RPC_TIMEOUT: Duration = Duration::from_secs(60);
/// Margin over a step's own deadline (the master enforces the step deadline).
const STEP_MARGIN: Duration = Duration::from_secs(30);
/// A step's deadline when neither RunOptions nor the config set one.
const DEFAULT_STEP: Duration = Duration::from_secs(600);

/// A call on a master, ready to run on whichever runtime the master needs.
type MasterCall<T> = Pin<Box<dyn Future<Output = Result<T, Status>> + Send + 'static>>;

fn remote_master(target: &str, shown: String) -> Result<RemoteMaster, Status> {
    let ep = endpoint(target, Duration::from_secs(5))?;
    Ok(RemoteMaster::new(shown, enter(|| ep.connect_lazy())?))
}

/// `grpc://host:port` (or `grpcs://` for a TLS target).
fn shown_target(target: &str) -> String {
    format!("{}://{}", if crate::tls::is_tls_target(target) { "grpcs" } else { "grpc" }, strip_scheme(target))
}

impl GrpcSession {
    /// A session on `target` (`grpc://host:port` or `host:port`; `grpcs://host:port` over
    /// TLS, see [`crate::tls`]) over `graph`, which may keep growing; nothing is sent before
    /// the first run.
    pub fn new(target: &str, graph: &Graph) -> Result<GrpcSession, Status> {
        GrpcSession::with_config(target, graph, ConfigProto::default())
    }

    /// [`GrpcSession::new`] with a session config (device filters, timeouts, ...).
    pub fn with_config(target: &str, graph: &Graph, config: ConfigProto) -> Result<GrpcSession, Status> {
        let shown = shown_target(target);
        Ok(GrpcSession {
            remote: Arc::new(remote_master(target, shown.clone())?),
            target: shown,
            graph: graph.clone(),
            config,
            local: crate::local_master::lookup(strip_scheme(target)),
            state: Mutex::new(State::default()),
        })
    }

    /// Always speak gRPC, even when `target` is a server of this process (whose master is
    /// otherwise called directly, like TensorFlow's LocalMaster): to measure or test the
    /// wire path.
    pub fn over_grpc_only(mut self) -> GrpcSession {
        self.local = None;
        self
    }

    /// Whether steps go to an in-process master instead of over gRPC.
    pub fn is_in_process(&self) -> bool {
        self.local.is_some()
    }

    /// The graph.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// The target.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// The session handle, once created.
    pub fn handle(&self) -> Option<String> {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).handle.clone()
    }

    fn what(&self, method: &str) -> String {
        format!("{method} on {}", self.target)
    }

    /// Runs `call` on the master and waits for it, at most until `deadline` (`late` says
    /// what did not happen in time) or until `cancel` fires. The master is this process's
    /// while its server serves (the step then runs on this thread when it may, else on
    /// the server's runtime), else the one at the target over gRPC. A call given up on is
    /// dropped, which drops a step's RunGraph calls everywhere.
    fn call<T: Send + 'static>(
        &self,
        what: String,
        deadline: Instant,
        late: &'static str,
        cancel: Option<tokio::sync::oneshot::Receiver<Status>>,
        call: impl FnOnce(Arc<dyn MasterApi>) -> MasterCall<T>,
    ) -> Result<T, Status> {
        let local = self.local.as_ref().and_then(|lm| lm.master().map(|m| (lm, m)));
        let (fut, lm) = match local {
            Some((lm, m)) if LocalMaster::can_run_here() => (call(m), Some(lm)),
            Some((lm, m)) => (Box::pin(lm.spawn(call(m))) as MasterCall<T>, None),
            None => (call(self.remote.clone()), None),
        };
        let bounded = async move {
            let sleep = tokio::time::sleep_until(tokio::time::Instant::from_std(deadline));
            let cancelled = async {
                match cancel {
                    Some(rx) => rx.await.ok(),
                    None => None,
                }
            };
            tokio::select! {
                r = fut => r,
                Some(st) = cancelled => Err(st.context(format!("{what}: the step was cancelled by the client"))),
                _ = sleep => Err(Status::deadline_exceeded(format!("{what}: {late}"))),
            }
        };
        match lm {
            Some(lm) => lm.run_here(bounded).and_then(|r| r),
            None => block_on(bounded),
        }
    }

    /// A session RPC other than RunStep, bounded by `timeout`.
    fn rpc<T: Send + 'static>(
        &self,
        method: &str,
        timeout: Duration,
        call: impl FnOnce(Arc<dyn MasterApi>, Instant) -> MasterCall<T>,
    ) -> Result<T, Status> {
        let deadline = Instant::now() + timeout;
        self.call(self.what(method), deadline, "did not finish before its deadline", None, |m| call(m, deadline))
    }

    /// Creates the session or sends the nodes added since the last run.
    fn sync_graph(&self) -> Result<String, Status> {
        self.graph.status()?;
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if st.closed {
            return Err(Status::failed_precondition("this session has been closed"));
        }
        match st.handle.clone() {
            None => {
                let gd = self.graph.to_graph_def();
                let n = gd.node.len();
                let req = CreateSessionRequest {
                    graph_def: Some(gd),
                    config: Some(self.config.clone()),
                    target: self.target.clone(),
                };
                let r = self.rpc("CreateSession", CREATE_TIMEOUT, |m, d| {
                    Box::pin(async move { m.create_session(req, d).await })
                })?;
                st.handle = Some(r.session_handle.clone());
                st.version = r.graph_version;
                st.sent = n;
                Ok(r.session_handle)
            }
            // Only the nodes added since the last sync are copied (not the whole graph per step).
            Some(h) if self.graph.num_nodes() > st.sent => {
                let gd = self.graph.graph_def_since(st.sent);
                let n = st.sent + gd.node.len();
                let req = ExtendSessionRequest {
                    session_handle: h.clone(),
                    graph_def: Some(gd),
                    current_graph_version: st.version,
                };
                let r = self.rpc("ExtendSession", RPC_TIMEOUT, |m, d| {
                    Box::pin(async move { m.extend_session(req, d).await })
                })?;
                st.version = r.new_graph_version;
                st.sent = n;
                Ok(h)
            }
            Some(h) => Ok(h),
        }
    }

    /// A step's fetched tensors in the order of `fetches`.
    fn in_fetch_order(&self, mut got: Vec<(String, Tensor)>, fetches: &[String]) -> Result<Vec<Tensor>, Status> {
        let mut out = Vec::with_capacity(fetches.len());
        for f in fetches {
            let at = got.iter().position(|(name, _)| name == f).ok_or_else(|| {
                Status::internal(format!("RunStep reply from {} has no tensor named '{f}'", self.target))
            })?;
            out.push(got.swap_remove(at).1);
        }
        Ok(out)
    }

    /// The devices of the session (creating it first if needed).
    pub fn list_devices(&self) -> Result<Vec<DeviceAttributes>, Status> {
        let handle = self.sync_graph()?;
        let req = ListDevicesRequest { session_handle: handle };
        let r = self.rpc("ListDevices", RPC_TIMEOUT, |m, d| Box::pin(async move { m.list_devices(req, d).await }))?;
        Ok(r.local_device.into_iter().chain(r.remote_device).collect())
    }

    /// Closes the session (its worker sessions are deleted; ps variables stay).
    pub fn close(&self) -> Result<(), Status> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if st.closed {
            return Ok(());
        }
        st.closed = true;
        let Some(h) = st.handle.take() else { return Ok(()) };
        let req = CloseSessionRequest { session_handle: h };
        self.rpc("CloseSession", RPC_TIMEOUT, |m, d| Box::pin(async move { m.close_session(req, d).await }))?;
        Ok(())
    }

    /// Closes every session of the master at `target` and clears resource containers
    /// (all if `containers` is empty) on its cluster (TensorFlow's `Session.reset`).
    pub fn reset(target: &str, containers: &[String]) -> Result<(), Status> {
        let master = remote_master(target, target.to_string())?;
        let req = ResetRequest { container: containers.to_vec(), device_filters: vec![] };
        let deadline = Instant::now() + RPC_TIMEOUT;
        block_on(async move { master.reset(req, deadline).await })?;
        Ok(())
    }
}

impl ferroflow_runtime::StepRunner for GrpcSession {
    fn run_by_name_meta(&self, step: ferroflow_runtime::StepArgs<'_>) -> Result<(Vec<Tensor>, RunMetadata), Status> {
        let ferroflow_runtime::StepArgs { feeds, fetches, targets, opts } = step;
        let handle = self.sync_graph()?;
        let step = opts
            .timeout
            .or_else(|| {
                (self.config.operation_timeout_in_ms > 0)
                    .then(|| Duration::from_millis(self.config.operation_timeout_in_ms as u64))
            })
            .unwrap_or(DEFAULT_STEP);
        let req = RunStepRequest {
            session_handle: handle,
            fetch: fetches.to_vec(),
            target: targets.to_vec(),
            options: Some(ferroflow_core::proto::RunOptions {
                timeout_in_ms: opts.timeout.map_or(0, |t| t.as_millis().max(1) as i64),
                trace_level: if opts.trace { run_options::TraceLevel::FullTrace as i32 } else { 0 },
                output_partition_graphs: opts.output_partition_graphs,
                ..Default::default()
            }),
            store_errors_in_response_body: true,
            request_id: new_request_id(),
            ..Default::default()
        };
        let call = RunStepCall { req, feeds: feeds.to_vec() };
        let deadline = Instant::now() + step + STEP_MARGIN;
        // Cancelling `opts.cancel` drops the RunStep call; the master then drops the step's
        // RunGraph calls, which aborts the step on every task (blocked ops included).
        let (tx, rx) = tokio::sync::oneshot::channel::<Status>();
        let reg = match &opts.cancel {
            Some(tok) => match tok.register(move |st| {
                let _ = tx.send(st.clone());
            }) {
                Some(id) => Some((tok, id)),
                None => return Err(tok.status().unwrap_or_else(|| Status::cancelled("the step was cancelled"))),
            },
            None => None,
        };
        let reply = self.call(self.what("RunStep"), deadline, "no reply within the step deadline", Some(rx), |m| {
            Box::pin(async move { m.run_step(call, deadline).await })
        });
        if let Some((tok, id)) = reg {
            tok.deregister(id);
        }
        let reply = reply?;
        Ok((self.in_fetch_order(reply.tensors, fetches)?, reply.metadata.unwrap_or_default()))
    }
}

impl Drop for GrpcSession {
    fn drop(&mut self) {
        if let Err(e) = self.close() {
            tracing::debug!(target = %self.target, error = %e, "closing the session failed");
        }
    }
}

/// Tells the server at `target` to shut down (ferroflow's Control service); returns once
/// it acknowledged.
pub fn shutdown_server(target: &str, reason: &str) -> Result<(), Status> {
    if let Some(shared) = crate::local_master::lookup(strip_scheme(target)).and_then(|lm| lm.server()) {
        // A server of this process (an in-memory cluster's task has no port at all).
        tracing::info!(task = %shared.task, reason, "shutdown requested in-process");
        shared.request_shutdown();
        return Ok(());
    }
    let ep = endpoint(target, Duration::from_secs(5))?;
    let ch = enter(|| ep.connect_lazy())?;
    let what = format!("Shutdown on {target}");
    let req = crate::control::proto::ShutdownRequest { reason: reason.to_string() };
    let deadline = Instant::now() + Duration::from_secs(10);
    block_on(async move {
        ControlClient::new(ch)
            .shutdown(request_with_deadline(req, deadline))
            .await
            .map_err(|e| from_grpc_call(&e, &what, deadline))
    })?;
    Ok(())
}

/// The control service's view of the server at `target`.
pub fn server_info(target: &str) -> Result<crate::control::proto::ServerInfoResponse, Status> {
    if let Some(shared) = crate::local_master::lookup(strip_scheme(target)).and_then(|lm| lm.server()) {
        return Ok(shared.info());
    }
    let ep = endpoint(target, Duration::from_secs(5))?;
    let ch = enter(|| ep.connect_lazy())?;
    let what = format!("ServerInfo on {target}");
    let deadline = Instant::now() + Duration::from_secs(10);
    let r = block_on(async move {
        ControlClient::new(ch)
            .server_info(request_with_deadline(crate::control::proto::ServerInfoRequest {}, deadline))
            .await
            .map_err(|e| from_grpc_call(&e, &what, deadline))
    })?;
    Ok(r.into_inner())
}
