//! Tasks a session reaches after CreateSession: a task that was not up within
//! `MasterOptions::create_session_wait` stays pending, and the first step whose graph names it
//! (a node's requested device with its job, and its task or none) waits for it within the
//! step's deadline, creates its worker session and adds its devices. A step that never names
//! it never waits; one that does and cannot reach it fails naming the task, its address and
//! the cause ("connection refused").

use std::time::Instant;

use ferroflow_core::proto::{ClusterDef, CreateWorkerSessionRequest, DeviceAttributes, GraphDef, ServerDef};
use ferroflow_core::{DeviceName, Status};

use super::discovery::discover;
use super::session::MasterSession;
use super::worker_handle::TaskWorker;

/// What every worker session of one master session is created with.
pub(crate) struct WorkerSessionTemplate {
    pub(crate) handle: String,
    /// The propagated cluster (`config.cluster_def`), if any.
    pub(crate) cluster_def: Option<ClusterDef>,
    /// Whether this master is, for the session, a task of the propagated cluster.
    pub(crate) own_propagated: bool,
    /// This master's own task name.
    pub(crate) master_task: String,
    pub(crate) master_incarnation: i64,
    pub(crate) isolate_session_state: bool,
}

impl WorkerSessionTemplate {
    /// The CreateWorkerSession request for `task`, which learns of `devices`.
    pub(crate) fn request(
        &self,
        task: &str,
        devices: &[DeviceAttributes],
    ) -> Result<CreateWorkerSessionRequest, Status> {
        let propagated = self.cluster_def.is_some();
        let server_def = if propagated && (self.own_propagated || task != self.master_task) {
            let d = DeviceName::parse(task)?;
            Some(ServerDef {
                cluster: self.cluster_def.clone(),
                job_name: d.job.unwrap_or_default(),
                task_index: d.task.unwrap_or(0),
                protocol: "grpc".into(),
                ..Default::default()
            })
        } else {
            None
        };
        Ok(CreateWorkerSessionRequest {
            session_handle: self.handle.clone(),
            server_def,
            isolate_session_state: self.isolate_session_state,
            cluster_device_attributes: devices.to_vec(),
            master_task: self.master_task.clone(),
            master_incarnation: self.master_incarnation,
        })
    }

    /// Creates the worker session on every one of `workers`, in parallel.
    pub(crate) async fn create_on(
        &self,
        workers: &[TaskWorker],
        devices: &[DeviceAttributes],
        deadline: Instant,
    ) -> Result<(), Status> {
        let mut set = tokio::task::JoinSet::new();
        for w in workers {
            let req = self.request(&w.task, devices)?;
            let w = w.clone();
            set.spawn(async move { w.create_worker_session(req, deadline).await });
        }
        while let Some(j) = set.join_next().await {
            j.map_err(|e| Status::internal(format!("CreateWorkerSession task failed: {e}")))??;
        }
        Ok(())
    }
}

/// Whether a node asking for `requested` may need `task` (`/job:J/replica:R/task:T`): the
/// request names the task's job, and its replica and task or none.
fn names_task(requested: &DeviceName, task: &DeviceName) -> bool {
    requested.job.is_some()
        && requested.job == task.job
        && requested.replica.is_none_or(|r| Some(r) == task.replica)
        && requested.task.is_none_or(|t| Some(t) == task.task)
}

/// The pending tasks (indices into `pending`) that a node of `graph` names.
pub(crate) fn named_by(pending: &[(TaskWorker, Status)], graph: &GraphDef) -> Vec<usize> {
    let tasks: Vec<Option<DeviceName>> = pending.iter().map(|(w, _)| DeviceName::parse(&w.task).ok()).collect();
    let mut out: Vec<usize> = Vec::new();
    for n in &graph.node {
        if n.device.is_empty() || out.len() == pending.len() {
            continue;
        }
        let Ok(requested) = DeviceName::parse(&n.device) else { continue };
        for (i, t) in tasks.iter().enumerate() {
            if !out.contains(&i) && t.as_ref().is_some_and(|t| names_task(&requested, t)) {
                out.push(i);
            }
        }
    }
    out
}

/// Reaches the pending tasks `graph` names (see the module docs) before it is placed.
pub(crate) async fn reach_named_tasks(
    session: &MasterSession,
    graph: &GraphDef,
    deadline: Instant,
) -> Result<(), Status> {
    let (needed, known_devices) = {
        let t = session.tasks();
        let idx = named_by(&t.pending, graph);
        if idx.is_empty() {
            return Ok(());
        }
        (idx.into_iter().map(|i| t.pending[i].0.clone()).collect::<Vec<_>>(), t.devices.clone())
    };
    let names: Vec<String> = needed.iter().map(|w| w.task.clone()).collect();
    tracing::info!(session = %session.handle, tasks = ?names, "the step uses tasks not reached at CreateSession; waiting for them");
    let found = discover(needed, deadline).await.map_err(|e| {
        e.context(format!("the step places nodes on {} (not reachable since CreateSession)", names.join(", ")))
    })?;
    let mut devices = known_devices;
    devices.extend(found.devices.iter().cloned());
    session.worker_sessions.create_on(&found.workers, &devices, deadline).await?;
    let mut t = session.tasks_mut();
    t.pending.retain(|(w, _)| !names.contains(&w.task));
    t.workers.extend(found.workers);
    t.devices.extend(found.devices);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requested_devices_name_tasks_by_job_and_index() {
        let task = DeviceName::parse("/job:ps/replica:0/task:1").unwrap();
        let named = |s: &str| names_task(&DeviceName::parse(s).unwrap(), &task);
        assert!(named("/job:ps/task:1"));
        assert!(named("/job:ps"));
        assert!(named("/job:ps/replica:0/task:1/device:CPU:0"));
        assert!(!named("/job:ps/task:0"));
        assert!(!named("/job:worker"));
        assert!(!named("/device:CPU:0"), "no job: placed among the tasks already known");
    }
}
