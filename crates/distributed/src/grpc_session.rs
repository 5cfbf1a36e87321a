//! [`GrpcSession`]: a session on a cluster, spoken through a task's MasterService
//! (TensorFlow's `Session("grpc://host:port")`). Same `run` shape as
//! [`ferroflow_runtime::DirectSession`].

use std::sync::Mutex;
use std::time::{Duration, Instant};

use ferroflow_core::proto::master_service_client::MasterServiceClient;
use ferroflow_core::proto::*;
use ferroflow_core::{Status, Tensor};
use ferroflow_graph::{Graph, Operation, Output};
use ferroflow_runtime::RunOptions;
use tonic::transport::Channel;

use crate::channels::{endpoint, master_client, strip_scheme};
use crate::client_runtime::{block_on, enter};
use crate::control::ControlClient;
use crate::ids::new_request_id;
use crate::local_master::LocalMaster;
use crate::master::run_step_http::PATH as RUN_STEP;
use crate::raw_grpc;
use crate::rpc_util::{from_grpc, request_with_deadline};
use crate::status_in_body::StatusInBody;

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
    client: MasterServiceClient<Channel>,
    /// The channel under `client` (RunStep is spoken on it directly, without copies).
    channel: Channel,
    /// The master of a server in this process at `target`, called directly.
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

fn master_channel(target: &str) -> Result<Channel, Status> {
    let ep = endpoint(target, Duration::from_secs(5))?;
    enter(|| ep.connect_lazy())
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
        let channel = master_channel(target)?;
        Ok(GrpcSession {
            target: format!(
                "{}://{}",
                if crate::tls::is_tls_target(target) { "grpcs" } else { "grpc" },
                strip_scheme(target)
            ),
            graph: graph.clone(),
            config,
            client: master_client(channel.clone()),
            channel,
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
                let mut c = self.client.clone();
                let what = self.what("CreateSession");
                let deadline = Instant::now() + CREATE_TIMEOUT;
                let r = block_on(async move {
                    c.create_session(request_with_deadline(req, deadline)).await.map_err(|e| from_grpc(&e, &what))
                })?
                .into_inner();
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
                let mut c = self.client.clone();
                let what = self.what("ExtendSession");
                let deadline = Instant::now() + RPC_TIMEOUT;
                let r = block_on(async move {
                    c.extend_session(request_with_deadline(req, deadline)).await.map_err(|e| from_grpc(&e, &what))
                })?
                .into_inner();
                st.version = r.new_graph_version;
                st.sent = n;
                Ok(h)
            }
            Some(h) => Ok(h),
        }
    }

    /// Runs one step: feeds replace tensors, fetches are returned in order, targets are run.
    pub fn run(
        &self,
        feeds: &[(&Output, Tensor)],
        fetches: &[&Output],
        targets: &[&Operation],
    ) -> Result<Vec<Tensor>, Status> {
        let (f, x, t) = ferroflow_runtime::step_names(feeds, fetches, targets);
        self.run_by_name(&f, &x, &t, &RunOptions::default())
    }

    /// Runs one step with tensors (`node:idx`) and targets (node names) given by name.
    pub fn run_by_name(
        &self,
        feeds: &[(String, Tensor)],
        fetches: &[String],
        targets: &[String],
        opts: &RunOptions,
    ) -> Result<Vec<Tensor>, Status> {
        self.run_by_name_meta(feeds, fetches, targets, opts).map(|(t, _)| t)
    }

    /// [`GrpcSession::run_by_name`], also returning the step's `RunMetadata`: with
    /// `opts.trace`, the step stats of every device that ran (FULL_TRACE); with
    /// `opts.output_partition_graphs`, the partition graphs.
    pub fn run_by_name_meta(
        &self,
        feeds: &[(String, Tensor)],
        fetches: &[String],
        targets: &[String],
        opts: &RunOptions,
    ) -> Result<(Vec<Tensor>, RunMetadata), Status> {
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
            feed: feeds.iter().map(|(n, t)| NamedTensorProto { name: n.clone(), tensor: Some(t.to_proto()) }).collect(),
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
        let channel = self.channel.clone();
        let what = self.what("RunStep");
        let deadline = Instant::now() + step + STEP_MARGIN;
        // Cancelling `opts.cancel` drops the RunStep call; the master then drops the step's
        // RunGraph calls, which aborts the step on every task (blocked ops included).
        let (tx, mut rx) = tokio::sync::oneshot::channel::<Status>();
        let reg = match &opts.cancel {
            Some(tok) => match tok.register(move |st| {
                let _ = tx.send(st.clone());
            }) {
                Some(id) => Some((tok, id)),
                None => return Err(tok.status().unwrap_or_else(|| Status::cancelled("the step was cancelled"))),
            },
            None => None,
        };
        let (local, req) = match self.local.as_ref().and_then(|lm| lm.master().map(|m| (lm, m))) {
            Some((lm, m)) if LocalMaster::can_run_here() => {
                // The step runs on this thread; cancellation and the deadline drop it,
                // which drops its RunGraph calls as a dropped gRPC call would.
                let r = lm.run_here(async {
                    let sleep = tokio::time::sleep_until(tokio::time::Instant::from_std(deadline));
                    tokio::select! {
                        r = m.run_step(req) => Ok(r.unwrap_or_else(RunStepResponse::from_status)),
                        Ok(st) = &mut rx => Err(st.context(format!("{what}: the step was cancelled by the client"))),
                        _ = sleep => Err(Status::deadline_exceeded(format!("{what}: no reply within the step deadline"))),
                    }
                });
                return self.finish_run_step(r.and_then(|r| r), reg, fetches);
            }
            Some((lm, m)) => (Some(lm.spawn(async move { m.run_step(req).await })), None),
            None => (None, Some(req)),
        };
        let bytes = req.is_some().then(|| crate::metrics::peer(crate::channels::strip_scheme(&self.target)));
        let resp = block_on(async move {
            let sleep = tokio::time::sleep_until(tokio::time::Instant::from_std(deadline));
            let what_call = &what;
            let call = async move {
                match local {
                    // In-process: the master's reply as it would have come over gRPC.
                    Some(l) => Ok(l.await.unwrap_or_else(RunStepResponse::from_status)),
                    None => {
                        let req = req.unwrap_or_default();
                        let bytes = bytes.unwrap_or_default();
                        raw_grpc::unary(channel, RUN_STEP, &req, deadline, what_call, &bytes).await
                    }
                }
            };
            tokio::select! {
                r = call => r,
                Ok(st) = &mut rx => Err(st.context(format!("{what}: the step was cancelled by the client"))),
                _ = sleep => Err(Status::deadline_exceeded(format!("{what}: no reply within the step deadline"))),
            }
        });
        self.finish_run_step(resp, reg, fetches)
    }

    /// Deregisters the step's cancellation and decodes its reply.
    fn finish_run_step(
        &self,
        resp: Result<RunStepResponse, Status>,
        reg: Option<(&ferroflow_kernels::CancelToken, u64)>,
        fetches: &[String],
    ) -> Result<(Vec<Tensor>, RunMetadata), Status> {
        if let Some((tok, id)) = reg {
            tok.deregister(id);
        }
        let resp = resp?.into_result()?;
        let mut out = Vec::with_capacity(fetches.len());
        for f in fetches {
            let nt = resp.tensor.iter().find(|t| &t.name == f).ok_or_else(|| {
                Status::internal(format!("RunStep reply from {} has no tensor named '{f}'", self.target))
            })?;
            out.push(
                Tensor::from_proto(nt.tensor.as_ref().unwrap_or(&Default::default()))
                    .map_err(|e| e.context(format!("fetched tensor '{f}'")))?,
            );
        }
        Ok((out, resp.metadata.unwrap_or_default()))
    }

    /// The devices of the session (creating it first if needed).
    pub fn list_devices(&self) -> Result<Vec<DeviceAttributes>, Status> {
        let handle = self.sync_graph()?;
        let mut c = self.client.clone();
        let what = self.what("ListDevices");
        let deadline = Instant::now() + RPC_TIMEOUT;
        let r = block_on(async move {
            c.list_devices(request_with_deadline(ListDevicesRequest { session_handle: handle }, deadline))
                .await
                .map_err(|e| from_grpc(&e, &what))
        })?
        .into_inner();
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
        let mut c = self.client.clone();
        let what = self.what("CloseSession");
        let deadline = Instant::now() + RPC_TIMEOUT;
        block_on(async move {
            c.close_session(request_with_deadline(CloseSessionRequest { session_handle: h }, deadline))
                .await
                .map_err(|e| from_grpc(&e, &what))
        })?;
        Ok(())
    }

    /// Closes every session of the master at `target` and clears resource containers
    /// (all if `containers` is empty) on its cluster (TensorFlow's `Session.reset`).
    pub fn reset(target: &str, containers: &[String]) -> Result<(), Status> {
        let mut c = master_client(master_channel(target)?);
        let what = format!("Reset on {target}");
        let req = ResetRequest { container: containers.to_vec(), device_filters: vec![] };
        let deadline = Instant::now() + RPC_TIMEOUT;
        block_on(async move { c.reset(request_with_deadline(req, deadline)).await.map_err(|e| from_grpc(&e, &what)) })?;
        Ok(())
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
    let ep = endpoint(target, Duration::from_secs(5))?;
    let ch = enter(|| ep.connect_lazy())?;
    let what = format!("Shutdown on {target}");
    let req = crate::control::proto::ShutdownRequest { reason: reason.to_string() };
    let deadline = Instant::now() + Duration::from_secs(10);
    block_on(async move {
        ControlClient::new(ch).shutdown(request_with_deadline(req, deadline)).await.map_err(|e| from_grpc(&e, &what))
    })?;
    Ok(())
}

/// The control service's view of the server at `target`.
pub fn server_info(target: &str) -> Result<crate::control::proto::ServerInfoResponse, Status> {
    let ep = endpoint(target, Duration::from_secs(5))?;
    let ch = enter(|| ep.connect_lazy())?;
    let what = format!("ServerInfo on {target}");
    let deadline = Instant::now() + Duration::from_secs(10);
    let r = block_on(async move {
        ControlClient::new(ch)
            .server_info(request_with_deadline(crate::control::proto::ServerInfoRequest {}, deadline))
            .await
            .map_err(|e| from_grpc(&e, &what))
    })?;
    Ok(r.into_inner())
}

impl ferroflow_runtime::StepRunner for GrpcSession {
    fn run_by_name_meta(
        &self,
        feeds: &[(String, Tensor)],
        fetches: &[String],
        targets: &[String],
        opts: &RunOptions,
    ) -> Result<(Vec<Tensor>, RunMetadata), Status> {
        self.run_by_name_meta(feeds, fetches, targets, opts)
    }
}
