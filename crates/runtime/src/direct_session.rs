//! `DirectSession`: runs a graph in this process (`Session::new("")` in TensorFlow).

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferroflow_core::proto::{GraphDef, RunMetadata, StepStats};
use ferroflow_core::{Status, Tensor};
use ferroflow_graph::Graph;
use ferroflow_kernels::{CancelToken, Rendezvous, ResourceMgr, StepCtx, StepTrace};

use crate::executor::Executor;
use crate::rendezvous::LocalRendezvous;
use ferroflow_graph::{check_feed_types, rewrite_for_client, ClientTensor, StepSignature};

/// The device every node of a local session runs on.
pub const LOCAL_DEVICE: &str = "/job:localhost/replica:0/task:0/device:CPU:0";

/// Per-run options.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Cancel the step with DeadlineExceeded after this long.
    pub timeout: Option<Duration>,
    /// Use this token as the step's cancellation (so another thread can cancel a step that
    /// waits, e.g. on a queue); a fresh one when `None`. Use a new token per run.
    pub cancel: Option<CancelToken>,
    /// Record what the step ran (TensorFlow's `trace_level`): the step's [`RunMetadata`]
    /// then holds `step_stats`, one `DeviceStepStats` per device.
    pub trace: bool,
    /// Return the graphs the step ran (`RunMetadata.partition_graphs`).
    pub output_partition_graphs: bool,
}

struct Prepared {
    exec: Arc<Executor>,
    graph: Arc<GraphDef>,
    /// The rewrite's feeds and fetches (canonical name, dtype, rendezvous key).
    feeds: Vec<ClientTensor>,
    fetches: Vec<ClientTensor>,
}

/// One signature's prepared step, made once by the first run that needs it.
type PlanCell = Arc<Mutex<Option<Arc<Prepared>>>>;

/// Runs steps of a graph in-process. Variables live in the session's resource manager and
/// outlive steps; executors are cached per (feeds, fetches, targets).
///
/// ```
/// use ferroflow_graph::{ops, Scope};
/// use ferroflow_runtime::{DirectSession, StepRunner};
/// let s = Scope::new_root();
/// let c = ops::constant(&s, 3.0f32);
/// let sess = DirectSession::new(s.graph());
/// let out = sess.run(&[], &[&c], &[]).unwrap();
/// assert_eq!(out[0].scalar_value::<f32>().unwrap(), 3.0);
/// ```
pub struct DirectSession {
    graph: Graph,
    resources: Arc<ResourceMgr>,
    cache: Mutex<HashMap<String, PlanCell>>,
    incarnation: u64,
    next_step: AtomicI64,
    /// Fuse MatMul/Conv2D + BiasAdd (+ Relu) in the prepared graphs (on by default).
    fusion: std::sync::atomic::AtomicBool,
}

impl DirectSession {
    /// A session over `graph` (which may keep growing) with a fresh resource manager.
    pub fn new(graph: &Graph) -> DirectSession {
        DirectSession::with_resources(graph, Arc::new(ResourceMgr::new()))
    }

    /// A session sharing an existing resource manager.
    pub fn with_resources(graph: &Graph, resources: Arc<ResourceMgr>) -> DirectSession {
        let incarnation = {
            use std::hash::{BuildHasher, Hasher};
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u64(
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos() as u64)
                    .unwrap_or(1),
            );
            h.finish() | 1
        };
        DirectSession {
            graph: graph.clone(),
            resources,
            cache: Mutex::new(HashMap::new()),
            incarnation,
            next_step: AtomicI64::new(1),
            fusion: std::sync::atomic::AtomicBool::new(true),
        }
    }

    /// A session over an imported GraphDef (e.g. one written by TensorFlow).
    pub fn from_graph_def(gd: &GraphDef) -> Result<DirectSession, Status> {
        Ok(DirectSession::new(&Graph::import(gd)?))
    }

    /// Turns the graph rewrites on or off for the steps prepared from now on: operator fusion
    /// (MatMul/Conv2D + BiasAdd [+ Relu] as one kernel, TensorFlow's remapper) and unread
    /// stateless nodes run as NoOps (its dependency optimizer); on by default. Results are
    /// the same either way.
    pub fn set_fusion(&self, on: bool) {
        self.fusion.store(on, Ordering::Relaxed);
        self.cache.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    /// The graph.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// The session's resource manager.
    pub fn resources(&self) -> &Arc<ResourceMgr> {
        &self.resources
    }

    /// The prepared step of `sig`. The session-wide lock is held only to find the
    /// signature's cell: runs of cached signatures never wait behind one being prepared.
    fn prepare(&self, sig: &StepSignature) -> Result<Arc<Prepared>, Status> {
        let cell = self.cache.lock().unwrap_or_else(|e| e.into_inner()).entry(sig.key()).or_default().clone();
        let mut slot = cell.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = slot.as_ref() {
            return Ok(p.clone());
        }
        let gd = self.graph.to_graph_def();
        let (feeds, fetches, targets) = (&sig.feeds, &sig.fetches, &sig.targets);
        let rw = rewrite_for_client(&gd, feeds, fetches, targets, LOCAL_DEVICE, self.incarnation)?;
        let mut graph = rw.graph;
        if self.fusion.load(Ordering::Relaxed) {
            crate::control_only::convert_control_only(&mut graph, targets);
            crate::remap::fuse_ops_in_place(&mut graph);
        }
        let exec = Arc::new(Executor::new(&graph)?);
        let p = Arc::new(Prepared { exec, graph: Arc::new(graph), feeds: rw.feeds, fetches: rw.fetches });
        *slot = Some(p.clone());
        Ok(p)
    }
}

/// The planned tensor of canonical name `name`.
fn planned<'a>(list: &'a [ClientTensor], name: &str) -> Result<&'a ClientTensor, Status> {
    list.iter().find(|t| t.name == name).ok_or_else(|| Status::internal(format!("'{name}' is not in the step's plan")))
}

impl crate::StepRunner for DirectSession {
    fn run_by_name_meta(&self, step: crate::StepArgs<'_>) -> Result<(Vec<Tensor>, RunMetadata), Status> {
        let crate::StepArgs { feeds, fetches, targets, opts } = step;
        self.graph.status()?;
        let names: Vec<&str> = feeds.iter().map(|(n, _)| n.as_str()).collect();
        let sig = StepSignature::new("Session.run", &names, fetches, targets)?;
        let prepared = self.prepare(&sig)?;
        let fed: Vec<(String, Tensor)> = sig.feeds.iter().cloned().zip(feeds.iter().map(|(_, t)| t.clone())).collect();
        check_feed_types("Session.run", &prepared.feeds, &fed)?;
        let rendezvous = Arc::new(LocalRendezvous::new());
        for (name, t) in fed {
            rendezvous.send(&planned(&prepared.feeds, &name)?.key, t, false)?;
        }
        let trace = opts.trace.then(|| Arc::new(StepTrace::new()));
        let step = Arc::new(StepCtx {
            step_id: self.next_step.fetch_add(1, Ordering::Relaxed),
            rendezvous: rendezvous.clone(),
            resources: self.resources.clone(),
            step_container: Default::default(),
            cancel: opts.cancel.clone().unwrap_or_default(),
            device: LOCAL_DEVICE.to_string(),
            deadline: opts.timeout.map(|t| std::time::Instant::now() + t),
            session: format!("direct-{:x}", self.incarnation).into(),
            trace: trace.clone(),
        });
        prepared.exec.run(step, opts.timeout)?;
        let mut got: HashMap<&str, Tensor> = HashMap::with_capacity(prepared.fetches.len());
        for (i, f) in prepared.fetches.iter().enumerate() {
            let (t, dead) = rendezvous
                .try_take(&f.key)
                .ok_or_else(|| Status::internal(format!("fetch '{}' was not produced", f.name)))?;
            if dead {
                return Err(Status::invalid_argument(format!(
                    "Retval[{i}] does not have value: fetch '{}' is dead (on the untaken branch of a conditional)",
                    f.name
                )));
            }
            got.insert(f.name.as_str(), t);
        }
        let meta = RunMetadata {
            step_stats: trace.map(|t| StepStats { dev_stats: vec![t.device_stats(LOCAL_DEVICE)] }),
            partition_graphs: if opts.output_partition_graphs { vec![(*prepared.graph).clone()] } else { vec![] },
            ..Default::default()
        };
        let out = sig.fetches.iter().map(|f| {
            got.get(f.as_str()).cloned().ok_or_else(|| Status::internal(format!("fetch '{f}' was not produced")))
        });
        Ok((out.collect::<Result<_, _>>()?, meta))
    }
}
