//! Finding a session's devices: GetStatus on every task that matches the session's device
//! filters, in parallel, each retried with backoff while it is unreachable, all within one
//! deadline. A task that never answers fails with an error naming the task, its address and
//! the last gRPC error (never a silent wait; user-pain #3).
//!
//! CreateSession waits, as TensorFlow's master does, until every task that passes the
//! session's device filters has answered, logging "CreateSession still waiting for response
//! from worker: …" every [`WAIT_LOG_PERIOD`] with the task's address and last error. Unlike
//! TensorFlow's, the wait is bounded (`MasterOptions::create_session_wait`): a task still
//! down after it stays pending, and a step whose graph names one of them waits for it then,
//! within the step's deadline ([`super::late_tasks`]). A session whose graph never uses a
//! task that never came up is not held up by it for longer than the wait.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ferroflow_core::proto::DeviceAttributes;
use ferroflow_core::{Code, DeviceName, Status};

use super::worker_handle::TaskWorker;
use crate::rpc_util::remaining;
use crate::worker::Worker;
use crate::worker_cache::WorkerCache;
use crate::ClusterSpec;

/// The tasks of a session and their devices.
#[derive(Clone)]
pub(crate) struct Discovered {
    /// One entry per task, in cluster order.
    pub(crate) workers: Vec<TaskWorker>,
    /// Devices, renamed after their task's cluster name.
    pub(crate) devices: Vec<DeviceAttributes>,
    /// Tasks that did not answer within the grace of a lenient discovery, with why.
    pub(crate) pending: Vec<(TaskWorker, Status)>,
}

/// How long the single attempt of a CreateSession that does not wait for tasks lasts.
pub(crate) const ONE_ATTEMPT: Duration = Duration::from_secs(2);

/// How often CreateSession says which tasks it is still waiting for.
pub(crate) const WAIT_LOG_PERIOD: Duration = Duration::from_secs(10);

impl Discovered {
    /// Full device name → incarnation.
    pub(crate) fn incarnations(&self) -> HashMap<String, u64> {
        self.devices.iter().map(|d| (d.name.clone(), d.incarnation)).collect()
    }

    /// The worker of a task (`/job:J/replica:0/task:T`).
    pub(crate) fn worker(&self, task: &str) -> Option<&TaskWorker> {
        self.workers.iter().find(|w| w.task == task)
    }
}

/// Whether a task passes the device filters (none = every task).
pub(crate) fn task_matches(task: &str, filters: &[String]) -> Result<bool, Status> {
    if filters.is_empty() {
        return Ok(true);
    }
    let full = DeviceName::parse(&format!("{task}/device:CPU:0"))?;
    for f in filters {
        let d = DeviceName::parse(f).map_err(|e| e.context(format!("device filter '{f}'")))?;
        if d.compatible(&full) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The workers of the tasks of `cluster` that pass `filters`, plus `own_task` (always).
pub(crate) fn task_workers(
    cluster: &ClusterSpec,
    filters: &[String],
    own_task: &str,
    own_worker: &Arc<Worker>,
    peers: &dyn WorkerCache,
) -> Result<Vec<TaskWorker>, Status> {
    let mut out = Vec::new();
    for (job, idx, addr) in cluster.tasks() {
        let task = format!("/job:{job}/replica:0/task:{idx}");
        if task != own_task && !task_matches(&task, filters)? {
            continue;
        }
        out.push(if task == own_task {
            TaskWorker::local(task, addr.to_string(), own_worker.clone())
        } else {
            let api = peers.peer(&task, addr)?;
            TaskWorker::peer(task, addr.to_string(), api)
        });
    }
    if !out.iter().any(|w| w.task == own_task) {
        out.push(TaskWorker::local(own_task.to_string(), "localhost".into(), own_worker.clone()));
    }
    Ok(out)
}

/// GetStatus on one task, retried while it is unavailable, until `deadline`.
/// With `retry` false, the first failure is final. With `log_waiting`, says every
/// [`WAIT_LOG_PERIOD`] that CreateSession is still waiting for the task.
async fn status_of(
    w: &TaskWorker,
    deadline: Instant,
    retry: bool,
    log_waiting: bool,
) -> Result<Vec<DeviceAttributes>, Status> {
    let start = Instant::now();
    let mut next_log = start + WAIT_LOG_PERIOD;
    let mut backoff = Duration::from_millis(50);
    // Why the task could not be reached ("Connection refused" ...): the attempt that the
    // deadline cut short only knows that time ran out.
    let mut unreachable: Option<Status> = None;
    loop {
        let attempt_deadline = deadline.min(Instant::now() + Duration::from_secs(10));
        match w.get_status(attempt_deadline).await {
            Ok(r) => return Ok(r.device_attributes),
            Err(e)
                if retry
                    && matches!(e.code, Code::Unavailable | Code::DeadlineExceeded)
                    && remaining(deadline) > Duration::from_millis(20) =>
            {
                tracing::debug!(task = %w.task, addr = %w.addr, error = %e, "GetStatus failed; retrying");
                if log_waiting && Instant::now() >= next_log {
                    tracing::info!(
                        task = %w.task, addr = %w.addr, error = %e,
                        "CreateSession still waiting for response from worker: {}", w.task
                    );
                    next_log = Instant::now() + WAIT_LOG_PERIOD;
                }
                if e.code == Code::Unavailable {
                    unreachable = Some(e);
                }
                tokio::time::sleep(backoff.min(remaining(deadline))).await;
                backoff = (backoff * 2).min(Duration::from_secs(1));
            }
            Err(e) => {
                let last = match (&e.code, unreachable) {
                    (Code::DeadlineExceeded, Some(u)) => u.message,
                    _ => e.message,
                };
                return Err(Status::new(
                    e.code,
                    format!(
                        "task {} at {} did not answer GetStatus within {} ms; last error: {last}",
                        w.task,
                        w.addr,
                        start.elapsed().as_millis(),
                    ),
                ));
            }
        }
    }
}

/// GetStatus on every worker in parallel; renames each device after its task.
pub(crate) async fn discover(workers: Vec<TaskWorker>, deadline: Instant) -> Result<Discovered, Status> {
    discover_within(workers, deadline, None).await
}

/// [`discover`] for CreateSession: a remote task is retried while it is unreachable for up
/// to `wait` (zero: asked once), then left pending instead of failing the whole.
pub(crate) async fn discover_lenient(
    workers: Vec<TaskWorker>,
    deadline: Instant,
    wait: Duration,
) -> Result<Discovered, Status> {
    discover_within(workers, deadline, Some(wait)).await
}

async fn discover_within(
    workers: Vec<TaskWorker>,
    deadline: Instant,
    grace: Option<Duration>,
) -> Result<Discovered, Status> {
    let mut set = tokio::task::JoinSet::new();
    // Leniently, a remote task is waited for within `wait` (or gets one attempt): one that
    // is not up by then is reached later.
    let lenient = grace.map(|g| {
        if g.is_zero() {
            (deadline.min(Instant::now() + ONE_ATTEMPT), false)
        } else {
            (deadline.min(Instant::now() + g), true)
        }
    });
    let lenient_deadline = lenient.map(|(d, _)| d);
    for (i, w) in workers.iter().enumerate() {
        let w = w.clone();
        let (d, retry, log) = match lenient {
            Some((d, retry)) if w.is_remote() => (d, retry, retry),
            _ => (deadline, true, false),
        };
        set.spawn(async move { (i, status_of(&w, d, retry, log).await) });
    }
    let mut per_task: Vec<Vec<DeviceAttributes>> = vec![Vec::new(); workers.len()];
    let mut errors: Vec<(usize, Status)> = Vec::new();
    let mut pending: Vec<(usize, Status)> = Vec::new();
    loop {
        // After the first failure, give the others a moment to report theirs, then stop.
        let next = if errors.is_empty() {
            set.join_next().await
        } else {
            tokio::time::timeout(Duration::from_millis(200), set.join_next()).await.unwrap_or_default()
        };
        let Some(j) = next else { break };
        match j {
            Ok((i, Ok(devs))) => per_task[i] = devs,
            Ok((i, Err(e)))
                if lenient_deadline.is_some()
                    && workers[i].is_remote()
                    && matches!(e.code, Code::Unavailable | Code::DeadlineExceeded) =>
            {
                pending.push((i, e));
            }
            Ok((i, Err(e))) => errors.push((i, e)),
            Err(e) => errors.push((0, Status::internal(format!("GetStatus task failed: {e}")))),
        }
    }
    if !errors.is_empty() {
        errors.sort_by_key(|(i, _)| *i);
        let code = errors[0].1.code;
        let msgs: Vec<String> = errors.into_iter().map(|(_, e)| e.message).collect();
        return Err(Status::new(code, msgs.join("; ")));
    }
    let mut devices = Vec::new();
    let mut up = Vec::new();
    let mut late = Vec::new();
    for (i, (w, devs)) in workers.into_iter().zip(per_task).enumerate() {
        if let Some(pos) = pending.iter().position(|(j, _)| *j == i) {
            late.push((w, pending.swap_remove(pos).1));
            continue;
        }
        for mut d in devs {
            let parsed = DeviceName::parse(&d.name).map_err(|e| e.context(format!("device of task {}", w.task)))?;
            let ty = parsed.device_type.clone().unwrap_or_else(|| d.device_type.clone());
            d.name = format!("{}/device:{}:{}", w.task, ty, parsed.id.unwrap_or(0));
            devices.push(d);
        }
        up.push(w);
    }
    Ok(Discovered { workers: up, devices, pending: late })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters() {
        let t = "/job:ps/replica:0/task:1";
        assert!(task_matches(t, &[]).unwrap());
        assert!(task_matches(t, &["/job:ps".into()]).unwrap());
        assert!(task_matches(t, &["/job:worker".into(), "/job:ps/task:1".into()]).unwrap());
        assert!(!task_matches(t, &["/job:ps/task:0".into()]).unwrap());
        assert!(task_matches(t, &["/job:ps/task:x".into()]).is_err());
    }
}
