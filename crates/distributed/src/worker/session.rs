//! Worker sessions: what a master's session holds on one worker — its resource manager
//! (shared by default, private with `isolate_session_state`), its registered graphs, and
//! the cluster it resolves peer tasks with (the server's, or the one propagated in
//! CreateWorkerSession's `server_def`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use ferroflow_core::Status;
use ferroflow_kernels::ResourceMgr;
use ferroflow_runtime::Executor;

use crate::metrics::{GaugeShare, REGISTERED_GRAPHS, WORKER_SESSIONS};
use crate::ClusterSpec;

/// A function this session registered on another task for `RemoteCall`.
#[derive(Clone)]
pub(crate) struct RemoteFunction {
    /// Its graph handle on the target task.
    pub(crate) handle: String,
    /// Rendezvous keys of its arguments and results.
    pub(crate) feed_keys: Vec<String>,
    pub(crate) fetch_keys: Vec<String>,
}

/// (target device, function name) of a registered remote function.
pub(crate) type RemoteFunctionKey = (String, String);

/// One worker session.
pub(crate) struct WorkerSession {
    /// The master session handle ("" for the legacy session).
    pub(crate) handle: String,
    /// Variables and other resources of this session's steps.
    pub(crate) resources: Arc<ResourceMgr>,
    /// This task's name within the session's cluster, `/job:J/replica:0/task:T`.
    pub(crate) task: String,
    /// This task's device, `<task>/device:CPU:0`.
    pub(crate) device: String,
    /// The cluster peers are resolved in.
    pub(crate) cluster: Arc<ClusterSpec>,
    graphs: Mutex<HashMap<String, Arc<Executor>>>,
    next_graph: AtomicU64,
    /// Functions registered on other tasks by this session's `RemoteCall`s.
    remote_functions: Mutex<HashMap<RemoteFunctionKey, RemoteFunction>>,
    /// The master task that created the session and that master's incarnation (empty
    /// when the master did not say).
    pub(crate) master: (String, i64),
    /// This session in the open-sessions gauge (the legacy session is not counted).
    _open: GaugeShare,
    /// This session's graphs in the registered-graphs gauge.
    graphs_gauge: GaugeShare,
}

impl WorkerSession {
    pub(crate) fn new(
        handle: &str,
        resources: Arc<ResourceMgr>,
        task: &str,
        cluster: Arc<ClusterSpec>,
    ) -> WorkerSession {
        WorkerSession {
            handle: handle.to_string(),
            resources,
            task: task.to_string(),
            device: format!("{task}/device:CPU:0"),
            cluster,
            graphs: Mutex::new(HashMap::new()),
            next_graph: AtomicU64::new(1),
            remote_functions: Mutex::new(HashMap::new()),
            master: (String::new(), 0),
            _open: GaugeShare::new(WORKER_SESSIONS, i64::from(!handle.is_empty())),
            graphs_gauge: GaugeShare::new(REGISTERED_GRAPHS, 0),
        }
    }

    /// Stores an executor; returns its handle.
    pub(crate) fn add_graph(&self, exec: Arc<Executor>) -> String {
        let handle = format!("{:016x}", self.next_graph.fetch_add(1, Ordering::Relaxed));
        self.graphs.lock().unwrap_or_else(|e| e.into_inner()).insert(handle.clone(), exec);
        self.graphs_gauge.add(1);
        handle
    }

    /// The executor of a graph handle.
    pub(crate) fn graph(&self, handle: &str) -> Result<Arc<Executor>, Status> {
        self.graphs.lock().unwrap_or_else(|e| e.into_inner()).get(handle).cloned().ok_or_else(|| {
            Status::aborted(format!(
                "Graph handle is not found: {handle}. Possibly, this worker ({}) just restarted.",
                self.task
            ))
            .possibly_restarted()
        })
    }

    /// Drops a graph.
    pub(crate) fn remove_graph(&self, handle: &str) -> Result<(), Status> {
        match self.graphs.lock().unwrap_or_else(|e| e.into_inner()).remove(handle) {
            Some(_) => {
                self.graphs_gauge.add(-1);
                Ok(())
            }
            None => Err(Status::aborted(format!("Graph handle is not found: {handle} (task {})", self.task))
                .possibly_restarted()),
        }
    }

    /// The remote function registered under `key`, if any.
    pub(crate) fn remote_function(&self, key: &RemoteFunctionKey) -> Option<RemoteFunction> {
        self.remote_functions.lock().unwrap_or_else(|e| e.into_inner()).get(key).cloned()
    }

    /// Remembers a registered remote function.
    pub(crate) fn set_remote_function(&self, key: RemoteFunctionKey, f: RemoteFunction) {
        self.remote_functions.lock().unwrap_or_else(|e| e.into_inner()).insert(key, f);
    }

    /// Forgets a remote function (its target lost the graph).
    pub(crate) fn forget_remote_function(&self, key: &RemoteFunctionKey) {
        self.remote_functions.lock().unwrap_or_else(|e| e.into_inner()).remove(key);
    }

    /// Number of registered graphs.
    pub(crate) fn num_graphs(&self) -> usize {
        self.graphs.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// The `host:port` of a peer task given as `/job:J/replica:R/task:T` (or a device name
    /// on it).
    pub(crate) fn address_of(&self, task_or_device: &str) -> Result<String, Status> {
        let d = ferroflow_core::DeviceName::parse(task_or_device)?;
        let (Some(job), Some(task)) = (d.job.as_deref(), d.task) else {
            return Err(Status::invalid_argument(format!("device '{task_or_device}' does not name a job and task")));
        };
        self.cluster.task_address(job, task).map(str::to_string).map_err(|e| {
            Status::invalid_argument(format!(
                "task /job:{job}/task:{task} (from '{task_or_device}') is not in this server's cluster \
                 [{}]: {}",
                self.cluster, e.message
            ))
        })
    }
}
