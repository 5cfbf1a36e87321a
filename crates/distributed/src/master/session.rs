//! A master session: the client's graph (grown by ExtendSession), the session's tasks and
//! devices, cached step plans per (feeds, fetches, targets), and request-id dedup.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};

use ferroflow_core::proto::{ConfigProto, FunctionDefLibrary, GraphDef, NodeDef};
use ferroflow_core::Status;

use super::callable::Callable;
use super::discovery::Discovered;
use super::late_tasks::WorkerSessionTemplate;
use super::plan::PlanCells;
use crate::graph_limits::{meta_bytes, nodes_bytes, GraphLimits};

/// Remembered request ids per session (older ones are forgotten).
const MAX_REQUEST_IDS: usize = 100_000;

pub(crate) struct GraphState {
    /// Shared with the plans being made from it; ExtendSession copies it only while one is.
    pub(crate) graph: Arc<GraphDef>,
    names: HashSet<String>,
    /// Serialized bytes of the graph's nodes (for [`GraphLimits`]).
    node_bytes: u64,
    pub(crate) version: i64,
}

/// The nodes with each call of a library function by name (a node whose op is the
/// function's name, as `function.Defun` makes) turned into a call op of that function.
fn calls_by_name(mut nodes: Vec<NodeDef>, library: Option<&FunctionDefLibrary>) -> Result<Vec<NodeDef>, Status> {
    if let Some(lib) = library {
        for n in &mut nodes {
            ferroflow_graph::call_by_name(n, lib)?;
        }
    }
    Ok(nodes)
}

impl GraphState {
    /// The graph a session starts with (CreateSession), checked against `limits`.
    pub(crate) fn new(graph: GraphDef, limits: &GraphLimits, handle: &str) -> Result<GraphState, Status> {
        #[allow(deprecated)] // `version` is TensorFlow's deprecated field, kept as sent.
        let GraphDef { node, versions, version, library } = graph;
        #[allow(deprecated)]
        let meta = GraphDef { node: vec![], versions, version, library };
        let meta_size = meta_bytes(meta.versions.as_ref(), meta.library.as_ref());
        let node = calls_by_name(node, meta.library.as_ref())?;
        let mut state = GraphState { graph: Arc::new(meta), names: HashSet::new(), node_bytes: 0, version: 0 };
        state.append(node, limits, meta_size, || format!("the graph of session {handle}"))?;
        Ok(state)
    }
}

/// One master session.
pub(crate) struct MasterSession {
    pub(crate) handle: String,
    pub(crate) config: ConfigProto,
    /// The client device: this task's CPU.
    pub(crate) client_device: String,
    pub(crate) client_incarnation: u64,
    /// The session's tasks: those reached, and those pending (see [`super::late_tasks`]).
    tasks: RwLock<Discovered>,
    /// How worker sessions are created (at CreateSession, and for tasks reached later).
    pub(crate) worker_sessions: WorkerSessionTemplate,
    pub(crate) graph: Mutex<GraphState>,
    pub(crate) plans: PlanCells,
    request_ids: Mutex<(HashSet<i64>, VecDeque<i64>)>,
    /// Set by CloseSession: the session's running steps are cancelled, as TensorFlow's
    /// `Session::Close()` cancels a step blocked in another thread.
    pub(crate) closed: tokio::sync::watch::Sender<bool>,
    /// Partial runs in progress, by handle.
    pub(crate) partial_runs: Mutex<HashMap<String, Arc<tokio::sync::Mutex<super::partial_run::PartialRun>>>>,
    /// Step count and latency; the session counts as open until dropped.
    pub(crate) metrics: crate::metrics::SessionMetrics,
    /// Callables by handle, and the next handle to give (handles are never reused).
    callables: Mutex<(HashMap<i64, Arc<Callable>>, i64)>,
    /// The server's collectives: the step ids of graphs with collective ops come from them.
    pub(crate) collectives: Option<Arc<crate::collective::Collectives>>,
    /// The collective group leader's worker when the device filters leave it out of the
    /// session's tasks (it still answers GetStepSequence, as TensorFlow's does).
    pub(crate) collective_leader: Option<Arc<dyn crate::worker_api::WorkerApi>>,
}

impl MasterSession {
    pub(crate) fn new(
        handle: String,
        config: ConfigProto,
        client_device: String,
        client_incarnation: u64,
        tasks: Discovered,
        worker_sessions: WorkerSessionTemplate,
        state: GraphState,
    ) -> MasterSession {
        MasterSession {
            metrics: crate::metrics::SessionMetrics::new(&handle),
            handle,
            config,
            client_device,
            client_incarnation,
            tasks: RwLock::new(tasks),
            worker_sessions,
            graph: Mutex::new(state),
            plans: std::sync::Mutex::new(HashMap::new()),
            request_ids: Mutex::new((HashSet::new(), VecDeque::new())),
            closed: tokio::sync::watch::Sender::new(false),
            partial_runs: Mutex::new(HashMap::new()),
            callables: Mutex::new((HashMap::new(), 0)),
            collectives: None,
            collective_leader: None,
        }
    }

    /// Keeps a made callable; returns its handle.
    pub(crate) fn add_callable(&self, c: Arc<Callable>) -> i64 {
        let mut g = self.callables.lock().unwrap_or_else(|e| e.into_inner());
        let h = g.1;
        g.1 += 1;
        g.0.insert(h, c);
        h
    }

    /// The callable of a handle (InvalidArgument, as in TensorFlow, for a handle never
    /// given or already released).
    pub(crate) fn callable(&self, handle: i64) -> Result<Arc<Callable>, Status> {
        let g = self.callables.lock().unwrap_or_else(|e| e.into_inner());
        g.0.get(&handle).cloned().ok_or_else(|| {
            if (0..g.1).contains(&handle) {
                Status::invalid_argument(format!(
                    "Attempted to run callable after handle was released: {handle} (session {})",
                    self.handle
                ))
            } else {
                Status::invalid_argument(format!("No such callable handle: {handle} (session {})", self.handle))
            }
        })
    }

    /// Forgets a callable; releasing a released handle again is not an error.
    pub(crate) fn release_callable(&self, handle: i64) -> Result<(), Status> {
        let mut g = self.callables.lock().unwrap_or_else(|e| e.into_inner());
        if !(0..g.1).contains(&handle) {
            return Err(Status::invalid_argument(format!(
                "No such callable handle: {handle} (session {})",
                self.handle
            )));
        }
        g.0.remove(&handle);
        Ok(())
    }

    /// The session's tasks (not to be held across an await).
    pub(crate) fn tasks(&self) -> RwLockReadGuard<'_, Discovered> {
        self.tasks.read().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn tasks_mut(&self) -> RwLockWriteGuard<'_, Discovered> {
        self.tasks.write().unwrap_or_else(|e| e.into_inner())
    }

    /// ExtendSession: appends nodes if `current_version` matches; returns the new version.
    pub(crate) fn extend(&self, graph: GraphDef, current_version: i64, limits: &GraphLimits) -> Result<i64, Status> {
        let mut g = self.graph.lock().unwrap_or_else(|e| e.into_inner());
        if current_version != g.version {
            return Err(Status::aborted(format!(
                "Current version is {} but caller expected {current_version}.",
                g.version
            )));
        }
        let GraphDef { node, versions, library, .. } = graph;
        // A new library or versions replace the session's, so the limit counts the new ones.
        let meta =
            meta_bytes(versions.as_ref().or(g.graph.versions.as_ref()), library.as_ref().or(g.graph.library.as_ref()));
        let node = calls_by_name(node, library.as_ref().or(g.graph.library.as_ref()))?;
        g.append(node, limits, meta, || format!("the graph of session {}", self.handle))?;
        let graph = Arc::make_mut(&mut g.graph);
        if versions.is_some() {
            graph.versions = versions;
        }
        if library.is_some() {
            graph.library = library;
        }
        g.version += 1;
        Ok(g.version)
    }

    /// Rejects a repeated non-zero request id.
    pub(crate) fn check_request_id(&self, id: i64, method: &str) -> Result<(), Status> {
        if id == 0 {
            return Ok(());
        }
        let mut g = self.request_ids.lock().unwrap_or_else(|e| e.into_inner());
        if !g.0.insert(id) {
            return Err(Status::aborted(format!(
                "The same {method} request was received twice (request_id {id}); it is not run again"
            )));
        }
        g.1.push_back(id);
        if g.1.len() > MAX_REQUEST_IDS {
            if let Some(old) = g.1.pop_front() {
                g.0.remove(&old);
            }
        }
        Ok(())
    }

    /// The current graph (shared, not copied).
    pub(crate) fn graph_def(&self) -> Arc<GraphDef> {
        self.graph.lock().unwrap_or_else(|e| e.into_inner()).graph.clone()
    }
}

impl GraphState {
    /// Appends nodes after checking the limits, that names are new and that every input
    /// names a node; `what` names the graph in a limit's error (the caller adds the
    /// method) and `meta` is the
    /// serialized size of the graph's versions and library after the append.
    fn append(
        &mut self,
        nodes: Vec<NodeDef>,
        limits: &GraphLimits,
        meta: u64,
        what: impl Fn() -> String,
    ) -> Result<(), Status> {
        let added_bytes = nodes_bytes(&nodes);
        limits.check(&what(), self.graph.node.len() + nodes.len(), self.node_bytes + added_bytes + meta)?;
        let mut added: HashSet<String> = HashSet::new();
        for n in &nodes {
            if n.name.is_empty() {
                return Err(Status::invalid_argument(format!("a node of op '{}' has an empty name", n.op)));
            }
            if self.names.contains(&n.name) || !added.insert(n.name.clone()) {
                return Err(Status::invalid_argument(format!("Node '{}' is not unique in the graph", n.name)));
            }
            if n.op.is_empty() {
                return Err(Status::invalid_argument(format!("node '{}' has no op", n.name)));
            }
        }
        for n in &nodes {
            for inp in &n.input {
                let src = match inp.strip_prefix('^') {
                    Some(c) => c,
                    None => {
                        ferroflow_graph::parse_tensor_name(inp)
                            .map_err(|e| e.context(format!("node '{}' (op {})", n.name, n.op)))?
                            .0
                    }
                };
                if !self.names.contains(src) && !added.contains(src) {
                    return Err(Status::invalid_argument(format!(
                        "node '{}' (op {}): input '{inp}' names no node in the graph",
                        n.name, n.op
                    )));
                }
            }
        }
        self.names.extend(added);
        Arc::make_mut(&mut self.graph).node.extend(nodes);
        self.node_bytes += added_bytes;
        Ok(())
    }
}
