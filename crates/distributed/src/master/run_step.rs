//! Running one step of a planned signature: RunGraph on every partition in parallel with
//! one step id and one deadline; client feeds go to the client partition by rendezvous key
//! and fetches come back from it. When a partition fails, the others are cancelled (their
//! RunGraph calls are dropped, which aborts the step on their workers and ends their
//! blocked RecvTensor calls) and the first real error is returned, naming its task. Every
//! step ends with CleanupGraph on each partition's task, in the background, except after
//! a successful step on ferroflow workers, which release its state by themselves.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ferroflow_core::proto::{ExecutorOpts, RunGraphRequest, StepStats};
use ferroflow_core::{Code, Status, Tensor};

use super::plan::StepPlan;
use crate::ids::{new_request_id, new_step_id};
use crate::worker_api::{RunGraphCall, RunGraphReply};

/// Whether an error only reports that the step was cancelled because of another failure
/// (CANCELLED, or marked derived as TensorFlow's workers mark theirs).
fn is_secondary(e: &Status) -> bool {
    e.code == Code::Cancelled || e.is_derived()
}

/// Runs one step. `feeds` are (canonical name, tensor) and must all be in the plan;
/// returns the fetched tensors by canonical name. With `stats`, every partition traces
/// its step and the devices' records are added there.
pub(crate) async fn run_step(
    session_handle: &str,
    plan: Arc<StepPlan>,
    feeds: Vec<(String, Tensor)>,
    deadline: Instant,
    mut stats: Option<&mut StepStats>,
) -> Result<HashMap<String, Tensor>, Status> {
    let step_id = match &plan.collective {
        Some(c) => c.next(deadline).await?,
        None => new_step_id(),
    };
    // Each used feed goes to the task whose partition takes it.
    let mut sends: HashMap<&str, Vec<(String, Tensor)>> = HashMap::new();
    for (name, t) in feeds {
        let Some(i) = plan.feeds.iter().position(|f| f.name == name) else {
            return Err(Status::internal(format!("feed '{name}' is not in the step plan")));
        };
        let f = &plan.feeds[i];
        if f.used {
            sends.entry(plan.feed_tasks[i].as_str()).or_default().push((f.key.clone(), t));
        }
    }
    if let Some(task) = sends.keys().find(|t| !plan.parts.iter().any(|p| p.worker.task == **t)) {
        return Err(Status::internal(format!("a feed goes to task {task}, which runs no partition of this step")));
    }
    let mut set = Partitions::default();
    let mut pending: Vec<bool> = vec![true; plan.parts.len()];
    let mut by_key: HashMap<String, Tensor> = HashMap::with_capacity(plan.fetches.len());
    for (i, part) in plan.parts.iter().enumerate() {
        let req = RunGraphRequest {
            session_handle: session_handle.to_string(),
            create_worker_session_called: true,
            graph_handle: part.graph_handle.clone(),
            step_id,
            recv_key: part.recv_key.clone(),
            store_errors_in_response_body: true,
            request_id: new_request_id(),
            exec_opts: stats.is_some().then(|| ExecutorOpts { record_timeline: true, ..Default::default() }),
            ..Default::default()
        };
        let call = RunGraphCall { req, send: sends.remove(part.worker.task.as_str()).unwrap_or_default() };
        let worker = part.worker.clone();
        // The client partition last: remote partitions' requests go out before a local
        // partition's executor starts (possibly on this thread).
        set.push(Box::pin(async move { (i, worker.run_graph(call, deadline).await) }), part.is_client);
    }
    let start = Instant::now();
    let mut first_err: Option<Status> = None;
    let sleep = tokio::time::sleep_until(tokio::time::Instant::from_std(deadline));
    tokio::pin!(sleep);
    let mut grace: Option<tokio::time::Instant> = None;
    loop {
        let grace_sleep = async {
            match grace {
                Some(g) => tokio::time::sleep_until(g).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            j = set.join_next() => {
                let Some(j) = j else { break };
                match j {
                    (i, Ok(resp)) => {
                        pending[i] = false;
                        by_key.extend(resp.recv);
                        if let (Some(all), Some(got)) = (stats.as_deref_mut(), resp.step_stats) {
                            all.dev_stats.extend(got.dev_stats);
                        }
                    }
                    (i, Err(e)) => {
                        pending[i] = false;
                        let better = match &first_err {
                            None => true,
                            Some(f) => is_secondary(f) && !is_secondary(&e),
                        };
                        if better {
                            first_err = Some(e);
                        }
                        if first_err.as_ref().is_some_and(|f| !is_secondary(f)) {
                            break;
                        }
                        // Only a cancellation so far: wait briefly for the real cause.
                        grace.get_or_insert(tokio::time::Instant::now() + Duration::from_millis(500));
                    }
                }
            }
            _ = &mut sleep => {
                let stalled: Vec<String> = plan.parts.iter().zip(&pending).filter(|(_, p)| **p)
                    .map(|(part, _)| format!("{} ({})", part.worker.task, part.worker.addr)).collect();
                first_err.get_or_insert(Status::deadline_exceeded(format!(
                    "step {step_id} did not finish within {} ms; tasks still running: [{}]",
                    start.elapsed().as_millis(), stalled.join(", "))));
                break;
            }
            _ = grace_sleep => break,
        }
    }
    // Dropping the set cancels every RunGraph still running (a local one aborts its step,
    // a remote call is reset, which aborts the step on its worker).
    drop(set);
    cleanup(&plan, step_id, first_err.is_none());
    if let Some(c) = &plan.collective {
        c.retire(step_id, first_err.is_none());
    }
    if let Some(e) = first_err {
        return Err(e);
    }
    let mut out = HashMap::with_capacity(plan.fetches.len());
    for f in &plan.fetches {
        let t = by_key.remove(&f.key).ok_or_else(|| {
            Status::internal(format!(
                "fetch '{}' was not returned by the partition that yields it (key '{}')",
                f.name, f.key
            ))
        })?;
        out.insert(f.name.clone(), t);
    }
    Ok(out)
}

type PartFuture = std::pin::Pin<Box<dyn Future<Output = (usize, Result<RunGraphReply, Status>)> + Send>>;

/// The step's RunGraph calls, polled together by the task (or client thread) running the
/// step rather than spawned: their work per poll is small (a request to send, a reply to
/// read, a local executor to start) and every spawn would add a thread hop to the step.
#[derive(Default)]
struct Partitions(Vec<Option<PartFuture>>);

impl Partitions {
    /// Adds a call; `last` ones are polled after the others.
    fn push(&mut self, f: PartFuture, last: bool) {
        if last {
            self.0.push(Some(f));
        } else {
            self.0.insert(0, Some(f));
        }
    }

    /// The next call to finish, or None when all have.
    async fn join_next(&mut self) -> Option<(usize, Result<RunGraphReply, Status>)> {
        std::future::poll_fn(|cx| {
            let mut left = false;
            for slot in self.0.iter_mut() {
                if let Some(f) = slot {
                    if let std::task::Poll::Ready(r) = f.as_mut().poll(cx) {
                        *slot = None;
                        return std::task::Poll::Ready(Some(r));
                    }
                    left = true;
                }
            }
            if left {
                std::task::Poll::Pending
            } else {
                std::task::Poll::Ready(None)
            }
        })
        .await
    }
}

/// CleanupGraph on every partition's task, in the background (bounded by 10 s). After a
/// successful step, tasks that release their step state by themselves are skipped.
fn cleanup(plan: &Arc<StepPlan>, step_id: i64, succeeded: bool) {
    if succeeded && plan.parts.iter().all(|p| p.worker.releases_steps()) {
        return;
    }
    let plan = plan.clone();
    tokio::spawn(async move {
        let deadline = Instant::now() + Duration::from_secs(10);
        for part in plan.parts.iter().filter(|p| !(succeeded && p.worker.releases_steps())) {
            if let Err(e) = part.worker.cleanup_graph(step_id, deadline).await {
                tracing::debug!(task = %part.worker.task, error = %e, step_id, "CleanupGraph failed");
            }
        }
    });
}
