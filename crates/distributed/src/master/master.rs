//! The master: TensorFlow's MasterService methods over this server's sessions.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ferroflow_core::proto::*;
use ferroflow_core::{Status, Tensor};

use super::discovery::{discover, discover_lenient, task_workers};
use super::late_tasks::WorkerSessionTemplate;
use super::plan::plan_for;
use super::run_step::run_step;
use super::session::{GraphState, MasterSession};
use super::session_table::{SessionTable, DEFAULT_MAX_SESSIONS};
use crate::ids::new_session_handle;
use crate::master_api::{RunStepCall, RunStepReply};
use crate::worker::Worker;
use crate::worker_cache::WorkerCache;
use crate::{ClusterSpec, GraphLimits};
use ferroflow_graph::StepSignature as Signature;

/// Limits of a master.
#[derive(Clone, Debug)]
pub struct MasterOptions {
    /// How long CreateSession waits for every task to answer GetStatus (capped by the
    /// session's `operation_timeout_in_ms` when set).
    pub create_session_timeout: Duration,
    /// How long CreateSession waits for every task that passes the session's device filters
    /// to come up (TensorFlow's master waits without limit, logging "CreateSession still
    /// waiting for response from worker" every 10 s). A task still down after it (or after
    /// `create_session_timeout`, or the session's `operation_timeout_in_ms`) stays pending:
    /// the session is created, and the first step that names the task waits for it then.
    /// Zero: ask each task once (a task not up at once is left pending).
    pub create_session_wait: Duration,
    /// Deadline of a step when neither RunOptions nor the session config set one.
    pub default_step_timeout: Duration,
    /// The server's default session config (`ServerDef.default_session_config`,
    /// `tf.train.Server(..., config=...)`): merged into every session's config as
    /// TensorFlow's master does (`MergeFrom`: the fields it sets win, lists are appended).
    pub default_session_config: Option<ConfigProto>,
    /// Most nodes and serialized bytes of a session's graph (CreateSession and every
    /// ExtendSession; `ferroflow server --max_graph_nodes/--max_graph_bytes`).
    pub graph_limits: GraphLimits,
    /// Most sessions held open at once (`ferroflow server --max_sessions`); CreateSession
    /// beyond it is RESOURCE_EXHAUSTED.
    pub max_sessions: usize,
    /// Sessions unused for this long (and not running a step) are closed
    /// (`--session_gc_seconds`, TensorFlow's `session_gc_seconds`); None: never, as in
    /// TensorFlow by default.
    pub session_gc: Option<Duration>,
}

impl Default for MasterOptions {
    fn default() -> Self {
        MasterOptions {
            create_session_timeout: Duration::from_secs(60),
            create_session_wait: Duration::from_secs(30),
            default_step_timeout: Duration::from_secs(600),
            default_session_config: None,
            graph_limits: GraphLimits::default(),
            max_sessions: DEFAULT_MAX_SESSIONS,
            session_gc: None,
        }
    }
}

/// One task's master.
pub struct Master {
    task: String,
    cluster: Arc<ClusterSpec>,
    worker: Arc<Worker>,
    peers: Arc<dyn WorkerCache>,
    opts: MasterOptions,
    sessions: SessionTable,
}

/// `config.MergeFrom(default)` with protobuf's own rule: decoding two encoded messages one
/// after the other merges the second into the first.
fn merge_config(config: ConfigProto, default: &ConfigProto) -> Result<ConfigProto, Status> {
    use prost::Message;
    let mut bytes = config.encode_to_vec();
    default.encode(&mut bytes).map_err(|e| Status::internal(format!("encoding the default session config: {e}")))?;
    ConfigProto::decode(bytes.as_slice())
        .map_err(|e| Status::internal(format!("merging the server's default session config: {e}")))
}

/// A positive timeout in milliseconds (from a client's RunOptions or ConfigProto), capped
/// at the longest `grpc-timeout`.
fn ms(v: i64) -> Option<Duration> {
    (v > 0).then(|| Duration::from_millis(v as u64).min(crate::rpc_util::MAX_GRPC_TIMEOUT))
}

impl Master {
    pub(crate) fn new(
        task: &str,
        cluster: Arc<ClusterSpec>,
        worker: Arc<Worker>,
        peers: Arc<dyn WorkerCache>,
        opts: MasterOptions,
    ) -> Master {
        Master { task: task.to_string(), cluster, worker, peers, sessions: SessionTable::new(opts.max_sessions), opts }
    }

    /// The collective group leader's worker when it is a task of `cluster` that the
    /// session's device filters left out (`None` when it is in `tasks` or unknown).
    fn filtered_out_leader(
        &self,
        cluster: &ClusterSpec,
        tasks: &super::discovery::Discovered,
    ) -> Option<Arc<dyn crate::worker_api::WorkerApi>> {
        let leader = self.worker.collectives.leader();
        if tasks.worker(leader).is_some() {
            return None;
        }
        let name = ferroflow_core::DeviceName::parse(&format!("{leader}/device:CPU:0")).ok()?;
        let addr = cluster.task_address(name.job.as_deref()?, name.task?).ok()?;
        match self.peers.peer(leader, addr) {
            Ok(api) => Some(api),
            Err(e) => {
                tracing::warn!(leader, error = %e, "the collective group leader is not reachable");
                None
            }
        }
    }

    /// Number of open sessions.
    pub fn num_sessions(&self) -> usize {
        self.sessions.len()
    }

    pub(crate) fn session(&self, handle: &str) -> Result<Arc<MasterSession>, Status> {
        self.sessions.get(handle)
    }

    /// Closes the sessions idle for longer than `--session_gc_seconds` (a no-op without
    /// it); the server's housekeeping calls it twice a second.
    pub(crate) async fn expire_idle_sessions(&self) {
        let Some(idle) = self.opts.session_gc else { return };
        for s in self.sessions.expire(idle) {
            s.closed.send_replace(true);
            self.delete_worker_sessions(&s).await;
            tracing::info!(task = %self.task, session = %s.handle, idle_secs = idle.as_secs_f64(), "idle session closed");
        }
    }

    /// The task of a propagated cluster whose address is `target` (`grpc://` optional).
    fn propagated_identity(&self, cluster: &ClusterSpec, target: &str) -> Result<Option<String>, Status> {
        let addr = crate::channels::strip_scheme(target);
        if addr.is_empty() {
            return Ok(None);
        }
        let found: Vec<String> = cluster
            .tasks()
            .into_iter()
            .filter(|(_, _, a)| *a == addr)
            .map(|(j, t, _)| format!("/job:{j}/replica:0/task:{t}"))
            .collect();
        match found.len() {
            0 | 1 => Ok(found.into_iter().next()),
            _ => Err(Status::invalid_argument(format!(
                "Found multiple matching tasks that correspond to to the master. Master target: '{target}'. \
                 Tasks: {}",
                found.join(", ")
            ))),
        }
    }

    /// CreateSession: discovers the session's tasks, creates a worker session on each and
    /// keeps the graph.
    pub async fn create_session(&self, req: CreateSessionRequest) -> Result<CreateSessionResponse, Status> {
        let fail = self.worker.fail.as_deref();
        crate::fail_points::hit(fail, crate::fail_points::CREATE_SESSION, &self.task, None).await?;
        // Refused before any task is asked for a worker session.
        self.sessions.check_room(&self.task)?;
        if let Some(g) = &req.graph_def {
            self.opts.graph_limits.check(
                "CreateSession: the session's graph",
                g.node.len(),
                prost::Message::encoded_len(g) as u64,
            )?;
        }
        let config = match &self.opts.default_session_config {
            Some(d) => merge_config(req.config.unwrap_or_default(), d)?,
            None => req.config.unwrap_or_default(),
        };
        if config.use_per_session_threads || !config.session_inter_op_thread_pool.is_empty() {
            return Err(Status::invalid_argument(
                "CreateSession: use_per_session_threads and session_inter_op_thread_pool are not supported by a \
                 distributed master",
            ));
        }
        let propagated = config.cluster_def.as_ref().is_some_and(|c| !c.job.is_empty());
        let cluster = if propagated {
            Arc::new(
                ClusterSpec::from_proto(config.cluster_def.as_ref().unwrap_or(&Default::default()))
                    .map_err(|e| e.context("CreateSession: config.cluster_def"))?,
            )
        } else {
            self.cluster.clone()
        };
        // With a propagated cluster this task is, for the session, the task of that
        // cluster whose address is the session's target (TensorFlow's rule; more than one
        // is an error); with none, it keeps its own name beside the cluster's tasks.
        let own_task = if propagated { self.propagated_identity(&cluster, &req.target)? } else { None };
        let own = own_task.clone().unwrap_or_else(|| self.task.clone());
        let timeout = ms(config.operation_timeout_in_ms)
            .map_or(self.opts.create_session_timeout, |t| t.min(self.opts.create_session_timeout));
        let deadline = Instant::now() + timeout;
        // The graph is checked before any task is asked for a worker session.
        let handle = new_session_handle();
        let graph = GraphState::new(req.graph_def.unwrap_or_default(), &self.opts.graph_limits, &handle)
            .map_err(|e| e.context("CreateSession: invalid graph"))?;
        let workers = task_workers(&cluster, &config.device_filters, &own, &self.worker, self.peers.as_ref())?;
        let tasks = discover_lenient(workers, deadline, self.opts.create_session_wait.min(timeout * 3 / 4))
            .await
            .map_err(|e| e.context("CreateSession"))?;
        let worker_sessions = WorkerSessionTemplate {
            handle: handle.clone(),
            cluster_def: if propagated { config.cluster_def.clone() } else { None },
            own_propagated: own_task.is_some(),
            master_task: self.task.clone(),
            master_incarnation: self.worker.incarnation as i64,
            // A propagated cluster gets private state unless the session asks to share it
            // (TensorFlow's `share_session_state_in_clusterspec_propagation`).
            isolate_session_state: config.isolate_session_state
                || (propagated
                    && !config.experimental.as_ref().is_some_and(|e| e.share_session_state_in_clusterspec_propagation)),
        };
        worker_sessions
            .create_on(&tasks.workers, &tasks.devices, deadline)
            .await
            .map_err(|e| e.context("CreateSession"))?;
        for (w, why) in &tasks.pending {
            tracing::warn!(
                task = %self.task, session = %handle, peer = %w.task, addr = %w.addr, error = %why,
                "task not reachable at CreateSession; a step that uses it will wait for it"
            );
        }
        let client_device = format!("{own}/device:CPU:0");
        let mut session = MasterSession::new(
            handle.clone(),
            config,
            client_device,
            self.worker.incarnation,
            tasks,
            worker_sessions,
            graph,
        );
        session.collectives = Some(self.worker.collectives.clone());
        let leader = self.filtered_out_leader(&cluster, &session.tasks());
        session.collective_leader = leader;
        let ntasks = session.tasks().workers.len();
        self.sessions.insert(handle.clone(), Arc::new(session));
        tracing::info!(task = %self.task, session = %handle, tasks = ntasks, "session created");
        Ok(CreateSessionResponse { session_handle: handle, graph_version: 0 })
    }

    /// ExtendSession.
    pub fn extend_session(&self, req: ExtendSessionRequest) -> Result<ExtendSessionResponse, Status> {
        let s = self.session(&req.session_handle)?;
        let v = s
            .extend(req.graph_def.unwrap_or_default(), req.current_graph_version, &self.opts.graph_limits)
            .map_err(|e| e.context("ExtendSession"))?;
        Ok(ExtendSessionResponse { new_graph_version: v })
    }

    /// RunStep (errors are returned; the RPC layer decides whether they go in the body).
    pub async fn run_step(&self, call: RunStepCall) -> Result<RunStepReply, Status> {
        let s = self.session(&call.req.session_handle)?;
        let start = Instant::now();
        let r = self.run_session_step(s.clone(), call).await;
        if r.is_ok() {
            s.metrics.step(start.elapsed());
        }
        r
    }

    async fn run_session_step(&self, s: Arc<MasterSession>, call: RunStepCall) -> Result<RunStepReply, Status> {
        let RunStepCall { req, feeds: fed } = call;
        s.check_request_id(req.request_id, "RunStep")?;
        if !req.partial_run_handle.is_empty() {
            return self.partial_run_step(s, req, fed).await;
        }
        let opts = req.options.unwrap_or_default();
        let (names, values): (Vec<String>, Vec<Tensor>) = fed.into_iter().unzip();
        let sig = Signature::new("RunStep", &names, &req.fetch, &req.target)?;
        let feeds: Vec<(String, Tensor)> = sig.feeds.iter().cloned().zip(values).collect();
        let (fetched, metadata) = self.execute(&s, &sig, feeds, &opts, "RunStep").await?;
        let tensors = req.fetch.into_iter().zip(fetched).collect();
        Ok(RunStepReply { tensors, metadata })
    }

    /// Runs one step of a signature (planned once per session) with `feeds` (canonical
    /// names) under `opts`; returns the fetched tensors in the order of the signature's
    /// fetches, and the step's metadata when `opts` asks for it. `what` names the method in
    /// errors. Closing the session cancels the step on every task.
    pub(crate) async fn execute(
        &self,
        s: &Arc<MasterSession>,
        sig: &Signature,
        feeds: Vec<(String, Tensor)>,
        opts: &RunOptions,
        what: &str,
    ) -> Result<(Vec<Tensor>, Option<RunMetadata>), Status> {
        let deadline = Instant::now() + self.step_timeout(s, opts.timeout_in_ms);
        let plan = plan_for(s, sig, deadline).await.map_err(|e| e.context(what))?;
        super::plan::check_feed_types(&plan, &feeds, what)?;
        let fail = self.worker.fail.as_deref();
        crate::fail_points::hit(fail, crate::fail_points::RUN_STEP, &self.task, Some(deadline))
            .await
            .map_err(|e| e.context(what))?;
        let partition_graphs: Vec<GraphDef> = if opts.output_partition_graphs {
            plan.parts
                .iter()
                .map(|p| <GraphDef as prost::Message>::decode(p.graph.clone()))
                .collect::<Result<_, _>>()
                .map_err(|e| Status::internal(format!("{what}: decoding a partition graph: {e}")))?
        } else {
            Vec::new()
        };
        let mut closed = s.closed.subscribe();
        let mut stats = (opts.trace_level != 0).then(StepStats::default);
        let mut got = tokio::select! {
            r = run_step(&s.handle, plan, feeds, deadline, stats.as_mut()) => r?,
            // Dropping the step cancels its RunGraph calls, which aborts it on every task.
            _ = closed.wait_for(|c| *c) => {
                return Err(Status::cancelled("Step was cancelled by an explicit call to `Session::Close()`."))
            }
        };
        let mut tensors = Vec::with_capacity(sig.fetches.len());
        for c in &sig.fetches {
            tensors.push(got.get(c).cloned().ok_or_else(|| Status::internal(format!("fetch '{c}' was not produced")))?);
        }
        got.clear();
        let metadata = (!partition_graphs.is_empty() || stats.is_some()).then(|| RunMetadata {
            partition_graphs,
            step_stats: stats,
            ..Default::default()
        });
        Ok((tensors, metadata))
    }

    /// How long a step may take: RunOptions' timeout, else the session's
    /// `operation_timeout_in_ms`, else the master's default.
    pub(crate) fn step_timeout(&self, s: &MasterSession, run_timeout_ms: i64) -> Duration {
        ms(run_timeout_ms).or_else(|| ms(s.config.operation_timeout_in_ms)).unwrap_or(self.opts.default_step_timeout)
    }

    /// CloseSession: deletes the worker sessions (10 s bound).
    pub async fn close_session(&self, req: CloseSessionRequest) -> Result<CloseSessionResponse, Status> {
        let Some(s) = self.sessions.remove(&req.session_handle) else {
            return self.session(&req.session_handle).map(|_| CloseSessionResponse {});
        };
        s.closed.send_replace(true);
        self.delete_worker_sessions(&s).await;
        tracing::info!(task = %self.task, session = %s.handle, "session closed");
        Ok(CloseSessionResponse {})
    }

    async fn delete_worker_sessions(&self, s: &MasterSession) {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut set = tokio::task::JoinSet::new();
        let workers = s.tasks().workers.clone();
        for w in workers {
            let h = s.handle.clone();
            set.spawn(async move { w.delete_worker_session(&h, deadline).await });
        }
        while let Some(j) = set.join_next().await {
            if let Ok(Err(e)) = j {
                tracing::warn!(task = %self.task, error = %e, "DeleteWorkerSession failed");
            }
        }
    }

    /// ListDevices: the session's devices (this task's are local), or, without a session,
    /// every task's.
    pub async fn list_devices(&self, req: ListDevicesRequest) -> Result<ListDevicesResponse, Status> {
        let devices = if req.session_handle.is_empty() {
            let workers = task_workers(&self.cluster, &[], &self.task, &self.worker, self.peers.as_ref())?;
            discover(workers, Instant::now() + self.opts.create_session_timeout).await?.devices
        } else {
            self.session(&req.session_handle)?.tasks().devices.clone()
        };
        let prefix = format!("{}/", self.task);
        let (local_device, remote_device) = devices.into_iter().partition(|d| d.name.starts_with(&prefix));
        Ok(ListDevicesResponse { local_device, remote_device })
    }

    /// Reset: closes every session of this master and clears the given containers on
    /// every task matching the device filters.
    pub async fn reset(&self, req: ResetRequest) -> Result<ResetResponse, Status> {
        let sessions: Vec<Arc<MasterSession>> = self.sessions.drain();
        for s in &sessions {
            self.delete_worker_sessions(s).await;
        }
        let workers = task_workers(&self.cluster, &req.device_filters, &self.task, &self.worker, self.peers.as_ref())?;
        let deadline = Instant::now() + self.opts.create_session_timeout;
        let mut set = tokio::task::JoinSet::new();
        for w in workers {
            let c = req.container.clone();
            set.spawn(async move { w.cleanup_all(c, deadline).await });
        }
        while let Some(j) = set.join_next().await {
            j.map_err(|e| Status::internal(format!("CleanupAll task failed: {e}")))?.map_err(|e| e.context("Reset"))?;
        }
        Ok(ResetResponse {})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_config_merges_like_tensorflows_merge_from() {
        let client = ConfigProto {
            operation_timeout_in_ms: 100,
            device_filters: vec!["/job:ps".into()],
            allow_soft_placement: true,
            ..Default::default()
        };
        let server = ConfigProto {
            operation_timeout_in_ms: 1500,
            device_filters: vec!["/job:worker/task:0".into()],
            ..Default::default()
        };
        let m = merge_config(client.clone(), &server).unwrap();
        assert_eq!(m.operation_timeout_in_ms, 1500, "a field the server sets wins");
        assert!(m.allow_soft_placement, "a field only the client sets stays");
        assert_eq!(m.device_filters, vec!["/job:ps".to_string(), "/job:worker/task:0".to_string()]);
        assert_eq!(merge_config(client.clone(), &ConfigProto::default()).unwrap(), client);
    }
}
