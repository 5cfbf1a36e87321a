//! One remote eager context: what a TensorFlow 2 client (`experimental_connect_to_cluster`,
//! `ClusterCoordinator`) keeps on this task under one context id — the worker session its
//! ops run in (the cluster of the client's `ServerDef`, the task's shared resources, so
//! variables made on a ps outlive the calls that made them), the tensors its operations
//! produced (remote handles, by op id and output number), the functions it registered and
//! its keep-alive clock.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ferroflow_core::proto::{FunctionDef, FunctionDefLibrary, ServerDef};
use ferroflow_core::{Status, Tensor};

/// A tensor of the context: the output `output_num` of operation `op_id`.
pub(crate) type HandleId = (i64, i32);

/// A context's tensor.
#[derive(Clone)]
pub(crate) struct Held {
    pub(crate) tensor: Tensor,
}

/// One context.
pub(crate) struct EagerContext {
    pub(crate) id: u64,
    /// The worker session its graphs are registered in and run by.
    pub(crate) session_handle: String,
    /// This task's name in the context's cluster, `/job:J/replica:0/task:T`.
    pub(crate) task: String,
    /// The context's view (bumped by UpdateContext).
    pub(crate) view_id: Mutex<u64>,
    keep_alive: Duration,
    last_use: Mutex<Instant>,
    handles: Mutex<HashMap<HandleId, Held>>,
    /// Packed handles (SendPackedHandle), by op id (each is that op's output 0).
    packed: Mutex<HashMap<i64, super::packed::Packed>>,
    /// Functions registered with `RegisterFunctionOp` (and their libraries).
    library: Mutex<HashMap<String, FunctionDef>>,
    /// Graph handles of the single-op and function graphs already registered, by signature.
    pub(crate) graphs: Mutex<HashMap<Vec<u8>, super::execute::Prepared>>,
    /// The cluster as the client described it, with this task's place in it (replaced by
    /// UpdateContext).
    pub(crate) server_def: Mutex<ServerDef>,
    /// The incarnation of every device of the cluster (CreateContext's
    /// `cluster_device_attributes`), by full device name.
    pub(crate) incarnations: Mutex<HashMap<String, u64>>,
    /// Values of tensors that live on other tasks, fetched once (resource handles).
    pub(crate) remote_values: Mutex<HashMap<HandleId, Tensor>>,
    /// Master sessions that run functions spanning tasks, by function and input devices.
    pub(crate) spans: tokio::sync::Mutex<HashMap<Vec<u8>, super::span::Span>>,
}

impl EagerContext {
    pub(crate) fn new(
        id: u64,
        view_id: u64,
        session_handle: String,
        task: String,
        keep_alive: Duration,
        server_def: ServerDef,
    ) -> Self {
        EagerContext {
            id,
            session_handle,
            task,
            view_id: Mutex::new(view_id),
            keep_alive,
            last_use: Mutex::new(Instant::now()),
            handles: Mutex::new(HashMap::new()),
            packed: Mutex::new(HashMap::new()),
            library: Mutex::new(HashMap::new()),
            graphs: Mutex::new(HashMap::new()),
            server_def: Mutex::new(server_def),
            incarnations: Mutex::new(HashMap::new()),
            remote_values: Mutex::new(HashMap::new()),
            spans: tokio::sync::Mutex::new(HashMap::new()),
        }
    }

    /// Learns the cluster's devices (CreateContext, UpdateContext).
    pub(crate) fn set_devices(&self, devices: &[ferroflow_core::proto::DeviceAttributes]) {
        let mut g = self.incarnations.lock().unwrap_or_else(|e| e.into_inner());
        for d in devices {
            g.insert(d.name.clone(), d.incarnation);
        }
    }

    /// The incarnation of a device of the cluster, or FailedPrecondition naming it.
    pub(crate) fn incarnation(&self, device: &str) -> Result<u64, Status> {
        let canonical = ferroflow_core::DeviceName::parse(device).map(|d| d.to_string()).unwrap_or_default();
        let g = self.incarnations.lock().unwrap_or_else(|e| e.into_inner());
        g.get(device).or_else(|| g.get(&canonical)).copied().ok_or_else(|| {
            Status::failed_precondition(format!(
                "eager context {:016x} on {}: device {device} is not among the cluster's devices the client \
                 announced ({} devices)",
                self.id,
                self.task,
                g.len()
            ))
        })
    }

    /// Marks the context as used now (every RPC naming it does).
    pub(crate) fn touch(&self) {
        *self.last_use.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }

    /// Whether the client has not spoken for longer than its keep-alive (0: never expires).
    pub(crate) fn expired(&self, now: Instant) -> bool {
        !self.keep_alive.is_zero()
            && now.duration_since(*self.last_use.lock().unwrap_or_else(|e| e.into_inner())) > self.keep_alive
    }

    pub(crate) fn view(&self) -> u64 {
        *self.view_id.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Stores an output of an operation.
    pub(crate) fn put(&self, id: HandleId, held: Held) {
        self.handles.lock().unwrap_or_else(|e| e.into_inner()).insert(id, held);
    }

    /// A tensor the client refers to, or InvalidArgument naming it (TensorFlow's words).
    pub(crate) fn get(&self, id: HandleId) -> Result<Held, Status> {
        self.handles.lock().unwrap_or_else(|e| e.into_inner()).get(&id).cloned().ok_or_else(|| {
            Status::invalid_argument(format!(
                "Unable to find the relevant tensor remote_handle: Op ID: {}, Output num: {} (eager context \
                 {:016x} on {})",
                id.0, id.1, self.id, self.task
            ))
        })
    }

    /// Drops a tensor the client no longer refers to (`handle_to_decref`); unknown ids are
    /// ignored, as a decref may race the op that made the tensor failing. Returns the
    /// dropped tensor.
    pub(crate) fn release(&self, id: HandleId) -> Option<Tensor> {
        if id.1 == 0 {
            self.packed.lock().unwrap_or_else(|e| e.into_inner()).remove(&id.0);
        }
        self.handles.lock().unwrap_or_else(|e| e.into_inner()).remove(&id).map(|h| h.tensor)
    }

    /// Keeps a packed handle as output 0 of op `op_id`.
    pub(crate) fn put_packed(&self, op_id: i64, p: super::packed::Packed) {
        self.packed.lock().unwrap_or_else(|e| e.into_inner()).insert(op_id, p);
    }

    /// The packed handle `id` names, if it names one.
    pub(crate) fn packed(&self, id: HandleId) -> Option<super::packed::Packed> {
        if id.1 != 0 {
            return None;
        }
        self.packed.lock().unwrap_or_else(|e| e.into_inner()).get(&id.0).cloned()
    }

    pub(crate) fn num_handles(&self) -> usize {
        self.handles.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Registers a function and the library it needs.
    pub(crate) fn register(&self, f: FunctionDef, library: Option<FunctionDefLibrary>) -> Result<(), Status> {
        let name = f.signature.as_ref().map(|s| s.name.clone()).unwrap_or_default();
        if name.is_empty() {
            return Err(Status::invalid_argument(format!(
                "RegisterFunction on {}: the FunctionDef has no signature name",
                self.task
            )));
        }
        let mut lib = self.library.lock().unwrap_or_else(|e| e.into_inner());
        for g in library.into_iter().flat_map(|l| l.function) {
            let n = g.signature.as_ref().map(|s| s.name.clone()).unwrap_or_default();
            if !n.is_empty() {
                lib.entry(n).or_insert(g);
            }
        }
        lib.insert(name, f);
        Ok(())
    }

    /// Forgets a function (`RemoveFunctionOp`).
    pub(crate) fn remove_function(&self, name: &str) {
        self.library.lock().unwrap_or_else(|e| e.into_inner()).remove(name);
    }

    /// Whether `name` is a function of the context.
    pub(crate) fn has_function(&self, name: &str) -> bool {
        self.library.lock().unwrap_or_else(|e| e.into_inner()).contains_key(name)
    }

    /// The context's functions as a library.
    pub(crate) fn library(&self) -> FunctionDefLibrary {
        let lib = self.library.lock().unwrap_or_else(|e| e.into_inner());
        let mut function: Vec<FunctionDef> = lib.values().cloned().collect();
        function.sort_by(|a, b| a.signature.as_ref().map(|s| &s.name).cmp(&b.signature.as_ref().map(|s| &s.name)));
        FunctionDefLibrary { function, ..Default::default() }
    }
}

/// A shareable context.
pub(crate) type Ctx = Arc<EagerContext>;
