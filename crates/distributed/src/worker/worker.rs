//! The worker's state and its simple methods (status, sessions, cleanup); RegisterGraph,
//! RunGraph and RecvTensor live in their own files.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferroflow_core::proto::{
    CleanupAllRequest, CleanupGraphRequest, CreateWorkerSessionRequest, DeleteWorkerSessionRequest, DeviceAttributes,
    GetStatusResponse,
};
use ferroflow_core::Status;
use ferroflow_kernels::ResourceMgr;

use super::session::WorkerSession;
use super::step_table::StepTable;
use crate::worker_cache::WorkerCache;
use crate::ClusterSpec;

/// Limits of a worker.
#[derive(Clone, Debug)]
pub struct WorkerOptions {
    /// Deadline of a RunGraph whose caller set none.
    pub default_step_timeout: Duration,
    /// Longest a RecvTensor waits for its tensor to be produced (capped further by the
    /// caller's deadline).
    pub max_recv_wait: Duration,
    /// How long a step's table outlives its deadline when no CleanupGraph comes.
    pub step_grace: Duration,
    /// CPU devices of the task, `CPU:0` … `CPU:n-1` (TensorFlow's
    /// `ConfigProto.device_count["CPU"]` of the server's config).
    pub cpu_devices: usize,
    /// Most nodes and serialized bytes of a registered graph (RegisterGraph;
    /// `ferroflow server --max_graph_nodes/--max_graph_bytes`).
    pub graph_limits: crate::GraphLimits,
    /// The task that resolves collective groups (the server config's
    /// `experimental.collective_group_leader`); `None`: the cluster's first chief or
    /// worker task (TensorFlow's tasks each lead alone then, and wait forever).
    pub collective_group_leader: Option<String>,
    /// RecvBuf replies carry a chunk in pieces of at most this many bytes
    /// (`experimental.recv_buf_max_chunk`; 0, ferroflow's default, and negative: one piece,
    /// where TensorFlow's 0 is 4096 bytes).
    pub recv_buf_max_chunk: i32,
}

impl Default for WorkerOptions {
    fn default() -> Self {
        WorkerOptions {
            default_step_timeout: Duration::from_secs(600),
            max_recv_wait: Duration::from_secs(600),
            step_grace: Duration::from_secs(60),
            cpu_devices: 1,
            graph_limits: crate::GraphLimits::default(),
            collective_group_leader: None,
            recv_buf_max_chunk: 0,
        }
    }
}

/// One task's worker. Cheap to share (`Arc`); the gRPC service and the local master both
/// call it.
pub struct Worker {
    pub(crate) task: String,
    pub(crate) incarnation: u64,
    pub(crate) cluster: Arc<ClusterSpec>,
    /// How this task reaches its peers' workers.
    pub(crate) peers: Arc<dyn WorkerCache>,
    /// Fail points of this task's master and worker (tests).
    pub(crate) fail: Option<Arc<crate::FailPoints>>,
    pub(crate) runtime: tokio::runtime::Handle,
    pub(crate) opts: WorkerOptions,
    pub(crate) shared_resources: Arc<ResourceMgr>,
    pub(crate) steps: StepTable,
    /// CleanupGraph calls served (for tests and metrics).
    cleanup_calls: std::sync::atomic::AtomicU64,
    /// Batched RecvTensors calls served and the tensors they asked for.
    pub(crate) batches_served: [std::sync::atomic::AtomicU64; 2],
    /// Single-tensor RecvTensor calls served.
    pub(crate) recv_tensor_served: std::sync::atomic::AtomicU64,
    sessions: Mutex<HashMap<String, Arc<WorkerSession>>>,
    legacy: Arc<WorkerSession>,
    /// Collective groups, instances and chunks of this task.
    pub(crate) collectives: Arc<crate::collective::Collectives>,
}

impl Worker {
    /// A worker for task `task` (`/job:J/replica:0/task:T`) of `cluster`.
    pub(crate) fn new(
        task: &str,
        incarnation: u64,
        cluster: Arc<ClusterSpec>,
        peers: Arc<dyn WorkerCache>,
        runtime: tokio::runtime::Handle,
        opts: WorkerOptions,
    ) -> Worker {
        let shared = Arc::new(ResourceMgr::new());
        let legacy = Arc::new(WorkerSession::new("", shared.clone(), task, cluster.clone()));
        let collectives = Arc::new(crate::collective::Collectives::new(
            task,
            opts.collective_group_leader.as_deref(),
            &default_leader(&cluster, task),
            opts.recv_buf_max_chunk,
        ));
        Worker {
            collectives,
            task: task.to_string(),
            incarnation,
            cluster,
            peers,
            fail: None,
            runtime,
            opts,
            shared_resources: shared,
            steps: StepTable::default(),
            cleanup_calls: Default::default(),
            batches_served: Default::default(),
            recv_tensor_served: Default::default(),
            sessions: Mutex::new(HashMap::new()),
            legacy,
        }
    }

    /// This task's name.
    pub fn task(&self) -> &str {
        &self.task
    }

    /// This task's resource manager shared by non-isolated sessions (where ps variables live).
    pub fn resources(&self) -> &Arc<ResourceMgr> {
        &self.shared_resources
    }

    /// This task's first device, `CPU:0`.
    pub fn device_attributes(&self) -> DeviceAttributes {
        self.cpu_device_attributes(0)
    }

    /// This task's device `CPU:i`. Every device of the task shares the task's incarnation
    /// (the rendezvous keys of its peers name it).
    fn cpu_device_attributes(&self, i: usize) -> DeviceAttributes {
        cpu_device(format!("{}/device:CPU:{i}", self.task), self.incarnation)
    }

    /// GetStatus: the device list.
    pub fn get_status(&self) -> GetStatusResponse {
        let n = self.opts.cpu_devices.max(1);
        GetStatusResponse { device_attributes: (0..n).map(|i| self.cpu_device_attributes(i)).collect() }
    }

    /// CreateWorkerSession.
    pub fn create_worker_session(&self, req: &CreateWorkerSessionRequest) -> Result<(), Status> {
        if req.session_handle.is_empty() {
            return Err(Status::invalid_argument("CreateWorkerSession: session_handle is empty"));
        }
        let (cluster, task) = match &req.server_def {
            Some(sd) if sd.cluster.as_ref().is_some_and(|c| !c.job.is_empty()) => {
                if !sd.protocol.is_empty() && sd.protocol != "grpc" {
                    return Err(Status::invalid_argument(format!(
                        "CreateWorkerSession: protocol '{}' is not supported (only \"grpc\")",
                        sd.protocol
                    )));
                }
                let c = ClusterSpec::from_proto(sd.cluster.as_ref().unwrap_or(&Default::default()))
                    .map_err(|e| e.context("CreateWorkerSession: server_def.cluster"))?;
                c.task_address(&sd.job_name, sd.task_index)
                    .map_err(|e| e.context("CreateWorkerSession: server_def names a task not in its cluster"))?;
                (Arc::new(c), format!("/job:{}/replica:0/task:{}", sd.job_name, sd.task_index))
            }
            _ => (self.cluster.clone(), self.task.clone()),
        };
        let resources =
            if req.isolate_session_state { Arc::new(ResourceMgr::new()) } else { self.shared_resources.clone() };
        let mut g = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        if g.contains_key(&req.session_handle) {
            // A retried CreateWorkerSession (the master's first reply was lost) is fine.
            return Ok(());
        }
        if !req.master_task.is_empty() {
            // TensorFlow's rule: sessions created by the same master task under another
            // incarnation belong to a master that restarted; nobody will close them.
            let before = g.len();
            g.retain(|_, s| s.master.0 != req.master_task || s.master.1 == req.master_incarnation);
            if g.len() < before {
                tracing::info!(
                    task = %self.task,
                    master = %req.master_task,
                    dropped = before - g.len(),
                    "worker sessions of a previous incarnation of this master dropped (the master restarted)"
                );
            }
        }
        let mut session = WorkerSession::new(&req.session_handle, resources, &task, cluster);
        session.master = (req.master_task.clone(), req.master_incarnation);
        g.insert(req.session_handle.clone(), Arc::new(session));
        tracing::debug!(task = %self.task, session = %req.session_handle, isolate = req.isolate_session_state, "worker session created");
        Ok(())
    }

    /// DeleteWorkerSession (unknown handles are ignored, as in TensorFlow).
    pub fn delete_worker_session(&self, req: &DeleteWorkerSessionRequest) {
        let s = self.sessions.lock().unwrap_or_else(|e| e.into_inner()).remove(&req.session_handle);
        if let Some(s) = s {
            tracing::debug!(task = %self.task, session = %s.handle, graphs = s.num_graphs(), "worker session deleted");
        }
    }

    /// The session for a request: a registered one, or the legacy session when the master
    /// did not call CreateWorkerSession.
    pub(crate) fn session(&self, handle: &str, create_called: bool) -> Result<Arc<WorkerSession>, Status> {
        if !create_called && handle.is_empty() {
            return Ok(self.legacy.clone());
        }
        if let Some(s) = self.sessions.lock().unwrap_or_else(|e| e.into_inner()).get(handle) {
            return Ok(s.clone());
        }
        if !create_called {
            return Ok(self.legacy.clone());
        }
        Err(Status::aborted(format!(
            "Session handle is not found: {handle}. Possibly this worker ({}) just restarted.",
            self.task
        ))
        .possibly_restarted())
    }

    /// Number of worker sessions.
    pub fn num_sessions(&self) -> usize {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Number of live step tables (for tests and metrics).
    pub fn num_steps(&self) -> usize {
        self.steps.len()
    }

    /// CleanupGraph: drops the step's table.
    pub fn cleanup_graph(&self, req: &CleanupGraphRequest) {
        self.cleanup_calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.steps.cleanup(req.step_id);
    }

    /// How many CleanupGraph calls this worker served (for tests and metrics).
    pub fn num_cleanup_graph_calls(&self) -> u64 {
        self.cleanup_calls.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How many single-tensor RecvTensor calls this worker served (for tests and metrics).
    pub fn num_recv_tensor_calls(&self) -> u64 {
        self.recv_tensor_served.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How many batched RecvTensors calls this worker served, and how many tensors they
    /// asked for (for tests and metrics).
    pub fn num_recv_tensor_batches(&self) -> (u64, u64) {
        let r = |i: usize| self.batches_served[i].load(std::sync::atomic::Ordering::Relaxed);
        (r(0), r(1))
    }

    /// CleanupAll: clears the given resource containers (all if empty) in every session.
    pub fn cleanup_all(&self, req: &CleanupAllRequest) {
        self.shared_resources.cleanup(&req.container);
        let sessions: Vec<Arc<WorkerSession>> =
            self.sessions.lock().unwrap_or_else(|e| e.into_inner()).values().cloned().collect();
        for s in sessions {
            if !Arc::ptr_eq(&s.resources, &self.shared_resources) {
                s.resources.cleanup(&req.container);
            }
        }
    }

    /// Removes expired step tables; returns how many.
    pub(crate) fn sweep(&self) -> usize {
        self.steps.sweep()
    }

    /// Aborts every step (shutdown).
    pub(crate) fn abort_all(&self, s: Status) {
        self.steps.abort_all(s);
    }
}

/// The group leader when the server config names none: task 0 of job `chief`, else of
/// `worker`, else the first task of the first job (every task of the cluster picks the same).
fn default_leader(cluster: &ClusterSpec, own: &str) -> String {
    for job in ["chief", "worker"] {
        if let Some(&t) = cluster.task_indices(job).ok().and_then(|v| v.first().copied()).as_ref() {
            return format!("/job:{job}/replica:0/task:{t}");
        }
    }
    match cluster.tasks().first() {
        Some((job, t, _)) => format!("/job:{job}/replica:0/task:{t}"),
        None => own.to_string(),
    }
}

/// The attributes of a ferroflow CPU device named `name` of a task of `incarnation`.
pub(crate) fn cpu_device(name: String, incarnation: u64) -> DeviceAttributes {
    DeviceAttributes {
        name,
        device_type: "CPU".into(),
        memory_limit: 256 << 20,
        locality: Some(Default::default()),
        incarnation,
        physical_device_desc: "device: ferroflow CPU".into(),
        xla_global_id: -1,
    }
}
