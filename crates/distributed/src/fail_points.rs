//! Fail points: named places in the master's and the worker's step paths where a test
//! makes a task fail or stall on purpose (tikv's `fail_point!`), per server (set through
//! `ServerOptions::fail_points` or an [`crate::InMemoryNet`]'s, never process-wide, so
//! tests running side by side do not see each other's). With no point set, a check is one
//! relaxed atomic load.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use ferroflow_core::{Code, DeviceName, Status};

/// The master's CreateSession, before it asks the tasks for their devices.
pub const CREATE_SESSION: &str = "master/create_session";
/// The master's RunStep, before the partitions' RunGraph calls go out.
pub const RUN_STEP: &str = "master/run_step";
/// A worker's RunGraph, before the partition starts.
pub const RUN_GRAPH_START: &str = "worker/run_graph/start";
/// A worker's RunGraph, after the partition ran (its effects are done) and before the
/// reply goes back.
pub const RUN_GRAPH_DONE: &str = "worker/run_graph/done";
/// A worker serving RecvTensor, before it waits for the tensor.
pub const RECV_TENSOR: &str = "worker/recv_tensor";

/// What a fail point does when reached.
#[derive(Clone, Debug, PartialEq)]
pub enum FailAction {
    /// The call fails with this code and message.
    Error(Code, String),
    /// The call stalls this long, then goes on.
    Delay(Duration),
}

struct Point {
    name: String,
    task: Option<(String, i32, i32)>,
    action: FailAction,
    times: Option<u64>,
}

/// The fail points set on one or more servers.
#[derive(Default)]
pub struct FailPoints {
    active: AtomicBool,
    points: Mutex<Vec<Point>>,
}

impl std::fmt::Debug for FailPoints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.points.lock().map(|g| g.len()).unwrap_or(0);
        write!(f, "FailPoints {{ points: {n} }}")
    }
}

fn task_of(name: &str) -> Option<(String, i32, i32)> {
    let d = DeviceName::parse(name).ok()?;
    Some((d.job?, d.replica.unwrap_or(0), d.task?))
}

impl FailPoints {
    /// No point set.
    pub fn new() -> std::sync::Arc<FailPoints> {
        std::sync::Arc::default()
    }

    /// Sets point `name` (on `task` only, when given: `/job:J/task:T`) to `action`, for
    /// the next `times` hits (every hit when `None`).
    pub fn set(&self, name: &str, task: Option<&str>, action: FailAction, times: Option<u64>) -> Result<(), Status> {
        let task = match task {
            Some(t) => Some(task_of(t).ok_or_else(|| {
                Status::invalid_argument(format!("fail point task '{t}' does not name a job and a task"))
            })?),
            None => None,
        };
        let mut g = self.points.lock().unwrap_or_else(|e| e.into_inner());
        g.push(Point { name: name.to_string(), task, action, times });
        self.active.store(true, Ordering::Release);
        Ok(())
    }

    /// Clears every point.
    pub fn clear(&self) {
        self.points.lock().unwrap_or_else(|e| e.into_inner()).clear();
        self.active.store(false, Ordering::Release);
    }

    /// What point `name` does on `task` now, if it is set (counts the hit).
    fn action(&self, name: &str, task: &str) -> Option<FailAction> {
        if !self.active.load(Ordering::Acquire) {
            return None;
        }
        let me = task_of(task);
        let mut g = self.points.lock().unwrap_or_else(|e| e.into_inner());
        let p = g
            .iter_mut()
            .find(|p| p.name == name && p.times != Some(0) && (p.task.is_none() || p.task.as_ref() == me.as_ref()))?;
        if let Some(n) = p.times.as_mut() {
            *n -= 1;
        }
        Some(p.action.clone())
    }

    /// Reached point `name` on `task`: fails or stalls as set, else returns at once. A
    /// stall ends at the caller's `deadline` (DEADLINE_EXCEEDED): the step's deadline
    /// holds wherever it stalls.
    pub(crate) async fn hit(&self, name: &str, task: &str, deadline: Option<Instant>) -> Result<(), Status> {
        match self.action(name, task) {
            None => Ok(()),
            Some(FailAction::Delay(d)) => {
                let until = Instant::now() + d;
                let until = deadline.map_or(until, |dl| dl.min(until));
                tokio::time::sleep_until(tokio::time::Instant::from_std(until)).await;
                match deadline {
                    Some(dl) if Instant::now() >= dl && until == dl => Err(Status::deadline_exceeded(format!(
                        "the deadline passed while {task} stalled at fail point {name}"
                    ))
                    .with_task(task)),
                    _ => Ok(()),
                }
            }
            Some(FailAction::Error(code, msg)) => {
                Err(Status::new(code, format!("fail point {name} on {task}: {msg}")).with_task(task))
            }
        }
    }
}

/// Reaches point `name` on `task` when `points` are set (a stall ends at `deadline`).
pub(crate) async fn hit(
    points: Option<&FailPoints>,
    name: &str,
    task: &str,
    deadline: Option<Instant>,
) -> Result<(), Status> {
    match points {
        Some(p) => p.hit(name, task, deadline).await,
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_match_name_task_and_times() {
        let f = FailPoints::new();
        assert_eq!(f.action(RUN_GRAPH_START, "/job:ps/replica:0/task:0"), None);
        f.set(RUN_GRAPH_START, Some("/job:ps/task:0"), FailAction::Error(Code::Internal, "boom".into()), Some(1))
            .unwrap();
        assert_eq!(f.action(RUN_GRAPH_START, "/job:worker/replica:0/task:0"), None);
        assert_eq!(f.action(RUN_GRAPH_DONE, "/job:ps/replica:0/task:0"), None);
        assert!(matches!(f.action(RUN_GRAPH_START, "/job:ps/replica:0/task:0"), Some(FailAction::Error(..))));
        assert_eq!(f.action(RUN_GRAPH_START, "/job:ps/replica:0/task:0"), None, "only once");
        f.set(RECV_TENSOR, None, FailAction::Delay(Duration::from_millis(1)), None).unwrap();
        assert!(f.action(RECV_TENSOR, "/job:a/task:3").is_some());
        f.clear();
        assert_eq!(f.action(RECV_TENSOR, "/job:a/task:3"), None);
        assert!(f.set(RECV_TENSOR, Some("/job:a"), FailAction::Delay(Duration::ZERO), None).is_err());
    }
}
