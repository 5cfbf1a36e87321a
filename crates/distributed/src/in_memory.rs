//! An in-memory cluster: every task a [`crate::Server`] of this process, wired through
//! worker caches that call the peer's [`Worker`] directly, with no socket. Tasks are
//! found by their cluster address (any `host:port` string: nothing resolves or binds it);
//! a client reaches a task's master with a [`crate::GrpcSession`] on `grpc://<address>`,
//! served in-process. One set of [`FaultFilters`] sits between all the tasks of a net, so
//! a test can drop, lose, delay or duplicate any worker RPC, partition tasks and heal
//! them, deterministically; its [`FailPoints`] make a task's master or worker fail or
//! stall at a named place of the step path.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;

use ferroflow_core::proto::*;
use ferroflow_core::{Status, Tensor};

use crate::fail_points::FailPoints;
use crate::fault_filter::FaultFilters;
use crate::worker::Worker;
use crate::worker_api::{CollectiveReply, CollectiveRpc, RecvBatch, RunGraphCall, RunGraphReply, WorkerApi};
use crate::worker_cache::{filtered, WorkerCache};
use crate::{ClusterSpec, Server, ServerOptions};

/// The tasks of one in-memory cluster and the filters between them.
pub struct InMemoryNet {
    workers: Mutex<HashMap<String, Weak<Worker>>>,
    filters: Arc<FaultFilters>,
    fail_points: Arc<FailPoints>,
}

impl std::fmt::Debug for InMemoryNet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.workers.lock().map(|g| g.len()).unwrap_or(0);
        write!(f, "InMemoryNet {{ tasks: {n} }}")
    }
}

impl InMemoryNet {
    /// An empty net whose filters draw their probabilities from `seed`.
    pub fn new(seed: u64) -> Arc<InMemoryNet> {
        Arc::new(InMemoryNet {
            workers: Mutex::new(HashMap::new()),
            filters: FaultFilters::new(seed),
            fail_points: FailPoints::new(),
        })
    }

    /// The fault filters between the tasks.
    pub fn filters(&self) -> &Arc<FaultFilters> {
        &self.filters
    }

    /// The fail points of every task of the net (each point may name its task).
    pub fn fail_points(&self) -> &Arc<FailPoints> {
        &self.fail_points
    }

    /// Starts task (`job`, `task`) of `cluster` on this net (with `opts`; its transport
    /// fields are ignored).
    pub fn server(
        self: &Arc<Self>,
        cluster: &ClusterSpec,
        job: &str,
        task: i32,
        opts: ServerOptions,
    ) -> Result<Server, Status> {
        Server::new(cluster, job, task, ServerOptions { in_memory: Some(self.clone()), ..opts })
    }

    /// Starts every task of `cluster`, in the cluster's order.
    pub fn servers(self: &Arc<Self>, cluster: &ClusterSpec) -> Result<Vec<Server>, Status> {
        cluster.tasks().into_iter().map(|(job, t, _)| self.server(cluster, job, t, ServerOptions::default())).collect()
    }

    /// Makes `worker` reachable at `addr`; an address already taken by a running task is
    /// refused (as a port in use).
    pub(crate) fn attach(&self, addr: &str, worker: &Arc<Worker>) -> Result<(), Status> {
        let mut g = self.workers.lock().unwrap_or_else(|e| e.into_inner());
        if g.get(addr).is_some_and(|w| w.strong_count() > 0) {
            return Err(Status::unknown(format!(
                "Could not start gRPC server: address {addr} of the in-memory cluster is taken by a running task"
            )));
        }
        g.insert(addr.to_string(), Arc::downgrade(worker));
        Ok(())
    }

    /// Forgets the task at `addr` (it stopped): calls to it are UNAVAILABLE.
    pub(crate) fn detach(&self, addr: &str) {
        self.workers.lock().unwrap_or_else(|e| e.into_inner()).remove(addr);
    }

    /// The worker cache of task `own_task`.
    pub(crate) fn cache(self: &Arc<Self>, own_task: &str) -> Arc<dyn WorkerCache> {
        Arc::new(MemoryCache { own_task: own_task.to_string(), net: self.clone() })
    }
}

/// One task's view of the net.
struct MemoryCache {
    own_task: String,
    net: Arc<InMemoryNet>,
}

impl WorkerCache for MemoryCache {
    fn peer(&self, task: &str, addr: &str) -> Result<Arc<dyn WorkerApi>, Status> {
        let addr = crate::strip_scheme(addr).to_string();
        let api: Arc<dyn WorkerApi> =
            Arc::new(InProcessPeer { task: task.to_string(), addr, net: Arc::downgrade(&self.net) });
        Ok(filtered(&self.own_task, task, api, Some(&self.net.filters)))
    }

    fn filters(&self) -> Option<&Arc<FaultFilters>> {
        Some(&self.net.filters)
    }
}

/// A peer task's worker in this process; errors name the task as a remote one's do.
struct InProcessPeer {
    task: String,
    addr: String,
    net: Weak<InMemoryNet>,
}

impl InProcessPeer {
    fn context(&self, what: &str) -> String {
        format!("{what} on task {} ({})", self.task, self.addr)
    }

    /// The peer's worker while it runs; UNAVAILABLE (as a closed port) once it stopped.
    fn worker(&self, what: &str) -> Result<Arc<dyn WorkerApi>, Status> {
        let w = self
            .net
            .upgrade()
            .and_then(|n| n.workers.lock().unwrap_or_else(|e| e.into_inner()).get(&self.addr).and_then(Weak::upgrade));
        w.map(|w| w as Arc<dyn WorkerApi>).ok_or_else(|| {
            Status::unavailable(format!(
                "{}: no task is running at this address (in-memory cluster)",
                self.context(what)
            ))
        })
    }

    fn named<T>(&self, what: &str, r: Result<T, Status>) -> Result<T, Status> {
        r.map_err(|e| e.context(self.context(what)))
    }
}

/// `WorkerApi` for [`InProcessPeer`]: each listed method calls the same method of the
/// peer's worker while it runs, errors naming the RPC and the task.
macro_rules! forward_to_peer {
    ($($method:ident($($arg:ident: $ty:ty),*) -> $ret:ty, $rpc:literal;)*) => {
        #[async_trait::async_trait]
        impl WorkerApi for InProcessPeer {
            fn releases_steps(&self) -> bool {
                true
            }

            fn serves_batches(&self) -> bool {
                true
            }

            $(async fn $method(&self, $($arg: $ty),*) -> Result<$ret, Status> {
                let w = self.worker($rpc)?;
                self.named($rpc, w.$method($($arg),*).await)
            })*

            async fn collective(&self, req: CollectiveRpc, deadline: Instant) -> Result<CollectiveReply, Status> {
                let what = req.name();
                let w = self.worker(what)?;
                self.named(what, w.collective(req, deadline).await)
            }
        }
    };
}

forward_to_peer! {
    get_status(deadline: Instant) -> GetStatusResponse, "GetStatus";
    create_worker_session(req: CreateWorkerSessionRequest, deadline: Instant) -> (), "CreateWorkerSession";
    delete_worker_session(req: DeleteWorkerSessionRequest, deadline: Instant) -> (), "DeleteWorkerSession";
    register_graph(req: RegisterGraphRequest, deadline: Instant) -> RegisterGraphResponse, "RegisterGraph";
    run_graph(call: RunGraphCall, deadline: Instant) -> RunGraphReply, "RunGraph";
    cleanup_graph(req: CleanupGraphRequest, deadline: Instant) -> (), "CleanupGraph";
    cleanup_all(req: CleanupAllRequest, deadline: Instant) -> (), "CleanupAll";
    deregister_graph(req: DeregisterGraphRequest, deadline: Instant) -> (), "DeregisterGraph";
    recv_tensor(req: RecvTensorRequest, deadline: Instant) -> (Tensor, bool), "RecvTensor";
    recv_tensors(batch: RecvBatch<'_>, deadline: Instant) -> (), "RecvTensors";
}
