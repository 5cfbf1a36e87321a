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
use ferroflow_graph::{rewrite_for_client, ClientTensor, StepSignature as Signature};

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

/// A session's plans, one cell per signature key.
pub(crate) type PlanCells =
    std::sync::Mutex<std::collections::HashMap<String, Arc<tokio::sync::OnceCell<Arc<StepPlan>>>>>;

/// A planned step signature.
pub(crate) struct StepPlan {
    pub(crate) parts: Vec<PlanPart>,
    pub(crate) feeds: Vec<ClientTensor>,
    /// Per feed, the task whose RunGraph takes it (its `send`).
    pub(crate) feed_tasks: Vec<String>,
    pub(crate) fetches: Vec<ClientTensor>,
    /// A graph with collective ops: its step ids follow the group leader's sequence.
    pub(crate) collective: Option<crate::collective::StepIds>,
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
    let collective_graph_key = crate::collective::collective_graph_key(&cg.graph.node);
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
            collective_graph_key,
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
    let collective = match (&session.collectives, collective_graph_key) {
        (Some(c), k) if k != 0 => {
            let leader = tasks.worker(c.leader()).map(|w| w.api.clone()).or_else(|| session.collective_leader.clone());
            Some(crate::collective::StepIds { graph_key: k, collectives: c.clone(), leader })
        }
        _ => None,
    };
    Ok(StepPlan { parts: out, feeds: cg.feeds, feed_tasks, fetches: cg.fetches, collective })
}

/// The plan of a signature, from the session's cache or made now.
///
/// Each signature has its own cell: concurrent first runs of one signature plan (and
/// register their graphs) once, while steps of other signatures, cached or new, go on.
/// Waiting for another caller's planning ends at this caller's deadline; a failed plan
/// leaves its cell empty, so the next run plans again.
pub(crate) async fn plan_for(
    session: &MasterSession,
    sig: &Signature,
    deadline: Instant,
) -> Result<Arc<StepPlan>, Status> {
    let key = sig.key();
    let cell = session.plans.lock().unwrap_or_else(|e| e.into_inner()).entry(key.clone()).or_default().clone();
    if let Some(p) = cell.get() {
        return Ok(p.clone());
    }
    // Whether this call is the one planning: its own waits end at its deadline with their
    // own errors; a call waiting for another's planning gives up at its deadline.
    let mine = std::sync::atomic::AtomicBool::new(false);
    let made = cell.get_or_try_init(|| {
        mine.store(true, std::sync::atomic::Ordering::Relaxed);
        async { make_plan(session, sig, deadline).await.map(Arc::new) }
    });
    tokio::pin!(made);
    let r = tokio::select! {
        r = &mut made => r.cloned(),
        _ = tokio::time::sleep_until(deadline.into()) => {
            if mine.load(std::sync::atomic::Ordering::Relaxed) {
                made.await.cloned()
            } else {
                Err(Status::deadline_exceeded(format!(
                    "another run of this step (feeds, fetches, targets) {key} was still planning it at the step's deadline"
                )))
            }
        }
    };
    if r.is_err() {
        let mut plans = session.plans.lock().unwrap_or_else(|e| e.into_inner());
        if plans.get(&key).is_some_and(|c| c.get().is_none() && Arc::ptr_eq(c, &cell)) {
            plans.remove(&key);
        }
    }
    r
}

/// Every fed tensor must have the dtype of the tensor it replaces.
pub(crate) fn check_feed_types(
    plan: &StepPlan,
    feeds: &[(String, ferroflow_core::Tensor)],
    what: &str,
) -> Result<(), Status> {
    ferroflow_graph::check_feed_types(what, &plan.feeds, feeds)
}
