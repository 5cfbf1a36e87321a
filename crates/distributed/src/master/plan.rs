//! Planning a step signature (feeds, fetches, targets) once per session: rewrite client
//! feeds/fetches as `_Recv`/`_Send` on the client device, prune, place on the session's
//! devices, partition per task and register each partition with its task's worker.

use std::sync::Arc;
use std::time::Instant;

use ferroflow_core::proto::RegisterGraphRequest;
use ferroflow_core::Status;
use ferroflow_runtime::placer::{place_with_options, PlacerOptions};

use super::at_source::AtSource;
use super::session::MasterSession;
use super::worker_handle::TaskWorker;
use crate::{partition_graph, PartitionOptions, SplitBy};
use ferroflow_graph::{rewrite_for_client, ClientTensor};

/// One registered partition.
pub(crate) struct PlanPart {
    pub(crate) worker: TaskWorker,
    pub(crate) graph_handle: String,
    /// Whether this is the client device's partition.
    pub(crate) is_client: bool,
    /// Rendezvous keys of the fetches this partition yields (its RunGraph `recv_key`).
    pub(crate) recv_key: Vec<String>,
    /// The partition graph as registered, serialized (`RunOptions.output_partition_graphs`
    /// decodes it): a tenth of the memory of the decoded graph, which the worker holds.
    pub(crate) graph: bytes::Bytes,
}

/// A planned step signature.
pub(crate) struct StepPlan {
    pub(crate) parts: Vec<PlanPart>,
    pub(crate) feeds: Vec<ClientTensor>,
    /// Per feed, the task whose RunGraph takes it (its `send`).
    pub(crate) feed_tasks: Vec<String>,
    pub(crate) fetches: Vec<ClientTensor>,
}

/// A step signature: canonical tensor names fed and fetched, target node names, and the
/// tensor connections of a callable ((from, to): `to` reads `from` in this step).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Signature {
    pub(crate) feeds: Vec<String>,
    pub(crate) fetches: Vec<String>,
    pub(crate) targets: Vec<String>,
    pub(crate) connections: Vec<(String, String)>,
}

impl Signature {
    /// The cache key (order-insensitive, like TensorFlow's).
    pub(crate) fn key(&self) -> String {
        let sorted = |v: &[String]| {
            let mut v = v.to_vec();
            v.sort();
            v.dedup();
            v.join(",")
        };
        let mut key = format!("{}|{}|{}", sorted(&self.feeds), sorted(&self.fetches), sorted(&self.targets));
        let mut conns: Vec<String> = self.connections.iter().map(|(f, t)| format!("{f}>{t}")).collect();
        if !conns.is_empty() {
            conns.sort();
            key.push('|');
            key.push_str(&conns.join(","));
        }
        key
    }
}

/// Builds and registers the plan of a signature (names already canonical).
pub(crate) async fn make_plan(session: &MasterSession, sig: &Signature, deadline: Instant) -> Result<StepPlan, Status> {
    // Every step of planning holds one copy of the nodes it needs: the session's graph is
    // shared, the rewrite copies only the nodes the step runs, the partitions replace that
    // copy and move into the registered graphs.
    let mut graph = session.graph_def();
    if !sig.connections.is_empty() {
        graph = Arc::new(super::callable::connect(&graph, &sig.connections)?);
    }
    let (feeds, fetches, targets) = (&sig.feeds, &sig.fetches, &sig.targets);
    let mut cg =
        rewrite_for_client(&graph, feeds, fetches, targets, &session.client_device, session.client_incarnation)?;
    drop(graph);
    super::late_tasks::reach_named_tasks(session, &cg.graph, deadline).await?;
    let tasks = session.tasks().clone();
    let devices: Vec<String> = tasks.devices.iter().map(|d| d.name.clone()).collect();
    let opts = PlacerOptions { allow_soft_placement: session.config.allow_soft_placement };
    ferroflow_runtime::lower_spanning_calls(&mut cg.graph)?;
    place_with_options(&mut cg.graph, &devices, &session.client_device, &opts)?;
    let incarnations = tasks.incarnations();
    let ferroflow = |t: &str| tasks.worker(t).is_some_and(|w| w.is_ferroflow());
    let at = AtSource { client_device: &session.client_device, incarnations: &incarnations, eligible: ferroflow };
    let feed_tasks = at.feeds(&mut cg.graph, &mut cg.feeds)?;
    let fetch_tasks = at.fetches(&mut cg.graph, &mut cg.fetches)?;
    let parts = partition_graph(
        std::mem::take(&mut cg.graph),
        &PartitionOptions { incarnations: &incarnations, split_by: SplitBy::Task },
    )?;
    let client_task = ferroflow_core::DeviceName::parse(&session.client_device)?.task_name();
    let mut set = tokio::task::JoinSet::new();
    for (task, gd) in parts {
        let graph = bytes::Bytes::from(prost::Message::encode_to_vec(&gd));
        let worker = tasks
            .worker(&task)
            .ok_or_else(|| {
                Status::internal(format!("partition for task {task}, which is not among the session's tasks"))
            })?
            .clone();
        let req = RegisterGraphRequest {
            session_handle: session.handle.clone(),
            create_worker_session_called: true,
            graph_def: Some(gd),
            graph_options: session.config.graph_options,
            ..Default::default()
        };
        let is_client = task == client_task;
        let recv_key: Vec<String> =
            cg.fetches.iter().zip(&fetch_tasks).filter(|(_, t)| **t == task).map(|(f, _)| f.key.clone()).collect();
        set.spawn(async move {
            let h = worker.register_graph(req, deadline).await;
            h.map(|graph_handle| PlanPart { worker, graph_handle, is_client, recv_key, graph })
        });
    }
    let mut out = Vec::new();
    while let Some(j) = set.join_next().await {
        out.push(j.map_err(|e| Status::internal(format!("RegisterGraph task failed: {e}")))??);
    }
    out.sort_by(|a, b| a.worker.task.cmp(&b.worker.task));
    Ok(StepPlan { parts: out, feeds: cg.feeds, feed_tasks, fetches: cg.fetches })
}

/// The plan of a signature, from the session's cache or made now.
pub(crate) async fn plan_for(
    session: &MasterSession,
    sig: &Signature,
    deadline: Instant,
) -> Result<Arc<StepPlan>, Status> {
    let key = sig.key();
    // Holding the lock while planning makes concurrent first runs of one signature
    // register their graphs once.
    let mut plans = session.plans.lock().await;
    if let Some(p) = plans.get(&key) {
        return Ok(p.clone());
    }
    let p = Arc::new(make_plan(session, sig, deadline).await?);
    plans.insert(key, p.clone());
    Ok(p)
}

/// Every fed tensor must have the dtype of the tensor it replaces.
pub(crate) fn check_feed_types(
    plan: &StepPlan,
    feeds: &[(String, ferroflow_core::Tensor)],
    what: &str,
) -> Result<(), Status> {
    for (name, t) in feeds {
        if let Some(f) = plan.feeds.iter().find(|f| &f.name == name) {
            if t.dtype() != f.dtype {
                return Err(Status::invalid_argument(format!(
                    "{what}: cannot feed a tensor of dtype {} to '{name}', which is {}",
                    t.dtype().name(),
                    f.dtype.name()
                )));
            }
        }
    }
    Ok(())
}
