//! Partial runs (`Session.partial_run_setup` / `partial_run`): PartialRunSetup plans the
//! whole signature and allocates one step; each RunStep with the handle feeds some of the
//! feeds and fetches some of the fetches of that one step, in any order the graph allows,
//! with TensorFlow's checks and messages (a feed or fetch not in the setup, fed or fetched
//! twice, a fetch that needs a feed not given yet). The workers keep the step's executors
//! running between calls (`RunGraph.is_partial`); the call that completes every feed and
//! fetch is the last one and ends the step everywhere.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use ferroflow_core::proto::{
    GraphDef, PartialRunSetupRequest, PartialRunSetupResponse, RunGraphRequest, RunStepRequest,
};
use ferroflow_core::{Status, Tensor};

use super::master::Master;
use super::plan::{plan_for, StepPlan};
use super::session::MasterSession;
use crate::ids::{new_request_id, new_step_id};
use crate::master_api::RunStepReply;
use crate::worker_api::RunGraphCall;
use ferroflow_graph::StepSignature as Signature;

/// One partial run's state on the master.
pub(crate) struct PartialRun {
    plan: Arc<StepPlan>,
    step_id: i64,
    /// Canonical name → fed (or fetched) yet.
    feeds: HashMap<String, bool>,
    fetches: HashMap<String, bool>,
    started: bool,
    failed: Option<Status>,
}

fn canonical(what: &str, n: &str) -> Result<String, Status> {
    ferroflow_graph::canonical_tensor_name(n).map_err(|e| e.context(format!("{what} '{n}'")))
}

/// TensorFlow's CheckFetches: a fetch must not depend on a feed that is still pending.
/// Walks back from each fetch, stopping at the tensors in `fed` (fed so far or now).
fn check_fetches(
    graph: &GraphDef,
    fetches: &[String],
    pending: &HashSet<String>,
    fed: &HashSet<String>,
) -> Result<(), Status> {
    let index: HashMap<&str, usize> = graph.node.iter().enumerate().map(|(i, n)| (n.name.as_str(), i)).collect();
    let mut seen = vec![false; graph.node.len()];
    let mut stack: Vec<usize> = Vec::new();
    for f in fetches {
        if pending.contains(f) {
            // Fetching a feed that is not fed yet.
            return Err(Status::invalid_argument(format!(
                "Fetch {f} can't be computed from the feeds that have been fed so far."
            )));
        }
        let node = f.rsplit_once(':').map_or(f.as_str(), |(n, _)| n);
        if let Some(&i) = index.get(node) {
            if !std::mem::replace(&mut seen[i], true) {
                stack.push(i);
            }
        }
    }
    while let Some(i) = stack.pop() {
        for inp in &graph.node[i].input {
            let (src, tensor) = match inp.strip_prefix('^') {
                Some(c) => (c, None),
                None => {
                    let (n, slot) = ferroflow_graph::parse_tensor_name(inp)?;
                    (n, Some(format!("{n}:{slot}")))
                }
            };
            if let Some(t) = tensor {
                if pending.contains(&t) {
                    return Err(Status::invalid_argument(format!(
                        "Fetch {t} can't be computed from the feeds that have been fed so far."
                    )));
                }
                if fed.contains(&t) {
                    continue;
                }
            }
            if let Some(&j) = index.get(src) {
                if !std::mem::replace(&mut seen[j], true) {
                    stack.push(j);
                }
            }
        }
    }
    Ok(())
}

impl Master {
    /// PartialRunSetup: plans (and registers) the signature and allocates its step.
    pub async fn partial_run_setup(&self, req: PartialRunSetupRequest) -> Result<PartialRunSetupResponse, Status> {
        let s = self.session(&req.session_handle)?;
        s.check_request_id(req.request_id, "PartialRunSetup")?;
        let sig = Signature::new("PartialRunSetup", &req.feed, &req.fetch, &req.target)?;
        let deadline = Instant::now() + self.step_timeout(&s, 0);
        let plan = plan_for(&s, &sig, deadline).await.map_err(|e| e.context("PartialRunSetup"))?;
        let Signature { feeds, fetches, .. } = sig;
        let step_id = new_step_id();
        let run = PartialRun {
            plan,
            step_id,
            feeds: feeds.into_iter().map(|f| (f, false)).collect(),
            fetches: fetches.into_iter().map(|f| (f, false)).collect(),
            started: false,
            failed: None,
        };
        let handle = format!("{step_id:x}");
        s.partial_runs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(handle.clone(), Arc::new(tokio::sync::Mutex::new(run)));
        Ok(PartialRunSetupResponse { partial_run_handle: handle })
    }

    /// RunStep with a `partial_run_handle`.
    pub(crate) async fn partial_run_step(
        &self,
        s: Arc<MasterSession>,
        req: RunStepRequest,
        feeds: Vec<(String, Tensor)>,
    ) -> Result<RunStepReply, Status> {
        let handle = req.partial_run_handle.clone();
        let run = s.partial_runs.lock().unwrap_or_else(|e| e.into_inner()).get(&handle).cloned();
        let Some(run) = run else {
            return Err(Status::invalid_argument("Must run 'setup' before performing partial runs!"));
        };
        let mut run = run.lock().await;
        if let Some(e) = &run.failed {
            return Err(e.clone());
        }
        let deadline = Instant::now() + self.step_timeout(&s, req.options.as_ref().map_or(0, |o| o.timeout_in_ms));
        let result = self.partial_call(&s, &mut run, req, feeds, deadline).await;
        let finished = run.feeds.values().all(|f| *f) && run.fetches.values().all(|f| *f);
        if run.failed.is_some() {
            self.cleanup_partial(&run);
        }
        if finished || run.failed.is_some() {
            s.partial_runs.lock().unwrap_or_else(|e| e.into_inner()).remove(&handle);
        }
        result
    }

    async fn partial_call(
        &self,
        s: &MasterSession,
        run: &mut PartialRun,
        req: RunStepRequest,
        fed: Vec<(String, Tensor)>,
        deadline: Instant,
    ) -> Result<RunStepReply, Status> {
        let mut feeds: Vec<(String, Tensor)> = Vec::with_capacity(fed.len());
        for (name, t) in fed {
            let c = canonical("feed", &name)?;
            match run.feeds.get(&c) {
                None => {
                    return Err(Status::invalid_argument(format!(
                        "The feed {name} was not specified in partial_run_setup."
                    )))
                }
                Some(true) => return Err(Status::invalid_argument(format!("The feed {name} has already been fed."))),
                Some(false) => feeds.push((c, t)),
            }
        }
        let mut fetches = Vec::with_capacity(req.fetch.len());
        for f in &req.fetch {
            let c = canonical("fetch", f)?;
            match run.fetches.get(&c) {
                None => {
                    return Err(Status::invalid_argument(format!(
                        "The fetch {f} was not specified in partial_run_setup."
                    )))
                }
                Some(true) => return Err(Status::invalid_argument(format!("The fetch {f} has already been fetched."))),
                Some(false) => fetches.push(c),
            }
        }
        let pending: HashSet<String> = run
            .feeds
            .iter()
            .filter(|(n, fed)| !**fed && !feeds.iter().any(|(f, _)| f == *n))
            .map(|(n, _)| n.clone())
            .collect();
        let fed: HashSet<String> = run
            .feeds
            .iter()
            .filter(|(n, fed)| **fed || feeds.iter().any(|(f, _)| f == *n))
            .map(|(n, _)| n.clone())
            .collect();
        check_fetches(&s.graph_def(), &fetches, &pending, &fed)?;
        let plan = run.plan.clone();
        super::plan::check_feed_types(&plan, &feeds, "partial run")?;
        for (n, _) in &feeds {
            run.feeds.insert(n.clone(), true);
        }
        for f in &fetches {
            run.fetches.insert(f.clone(), true);
        }
        let is_last = run.feeds.values().all(|f| *f) && run.fetches.values().all(|f| *f);
        // Each fed tensor goes to the task whose partition takes it; each fetch comes from
        // the partition that yields it.
        let mut sends: HashMap<&str, Vec<(String, Tensor)>> = HashMap::new();
        for (name, t) in feeds {
            if let Some(i) = plan.feeds.iter().position(|f| f.name == name).filter(|&i| plan.feeds[i].used) {
                sends.entry(plan.feed_tasks[i].as_str()).or_default().push((plan.feeds[i].key.clone(), t));
            }
        }
        let keys: Vec<(String, String)> = fetches
            .iter()
            .map(|f| {
                let c = plan
                    .fetches
                    .iter()
                    .find(|c| &c.name == f)
                    .ok_or_else(|| Status::internal(format!("partial run: fetch '{f}' is not in the step plan")))?;
                Ok((f.clone(), c.key.clone()))
            })
            .collect::<Result<_, Status>>()?;
        let first = !run.started;
        run.started = true;
        let mut set = tokio::task::JoinSet::new();
        for part in &plan.parts {
            let send = sends.remove(part.worker.task.as_str()).unwrap_or_default();
            let recv_key: Vec<String> =
                keys.iter().filter(|(_, k)| part.recv_key.contains(k)).map(|(_, k)| k.clone()).collect();
            if !first && !is_last && send.is_empty() && recv_key.is_empty() {
                continue;
            }
            let req = RunGraphRequest {
                session_handle: s.handle.clone(),
                create_worker_session_called: true,
                graph_handle: part.graph_handle.clone(),
                step_id: run.step_id,
                recv_key,
                is_partial: true,
                is_last_partial_run: is_last,
                store_errors_in_response_body: true,
                request_id: new_request_id(),
                ..Default::default()
            };
            let worker = part.worker.clone();
            set.spawn(async move { worker.run_graph(RunGraphCall { req, send }, deadline).await });
        }
        let mut got: HashMap<String, Tensor> = HashMap::new();
        let mut first_err: Option<Status> = None;
        while let Some(j) = set.join_next().await {
            match j.map_err(|e| Status::internal(format!("partial run call failed: {e}"))).and_then(|r| r) {
                Ok(resp) => got.extend(resp.recv),
                Err(e) => {
                    // The first error ends the call; the others' RunGraphs are dropped.
                    first_err.get_or_insert(e);
                    set.abort_all();
                }
            }
        }
        if let Some(e) = first_err {
            // A call that failed on a task ends the partial run (the step is aborted
            // there); later calls see the same error. Errors found before any task was
            // called (a feed not in the setup, ...) leave the run as it was.
            let e = e.context("partial run");
            run.failed = Some(e.clone());
            return Err(e);
        }
        let mut tensors = Vec::with_capacity(req.fetch.len());
        for (orig, (_, key)) in req.fetch.into_iter().zip(&keys) {
            let t =
                got.get(key).cloned().ok_or_else(|| Status::internal(format!("fetch '{orig}' was not produced")))?;
            tensors.push((orig, t));
        }
        Ok(RunStepReply { tensors, metadata: None })
    }

    /// Ends a failed partial run's step on every task (in the background).
    fn cleanup_partial(&self, run: &PartialRun) {
        let deadline = Instant::now() + std::time::Duration::from_secs(10);
        for part in &run.plan.parts {
            let (w, step) = (part.worker.clone(), run.step_id);
            tokio::spawn(async move { drop(w.cleanup_graph(step, deadline).await) });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_node as node;
    use super::*;

    #[test]
    fn a_fetch_that_needs_a_pending_feed_is_refused() {
        // a, b, c placeholders; r1 = a + b; r2 = r1 * c (with a control edge from d).
        let g = GraphDef {
            node: vec![
                node("a", &[]),
                node("b", &[]),
                node("c", &[]),
                node("d", &[]),
                node("r1", &["a", "b:0"]),
                node("r2", &["r1", "c", "^d"]),
            ],
            ..Default::default()
        };
        let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<HashSet<_>>();
        let none = set(&[]);
        assert!(check_fetches(&g, &["r1:0".into()], &set(&["c:0"]), &none).is_ok());
        let e = check_fetches(&g, &["r2:0".into()], &set(&["c:0"]), &none).unwrap_err();
        assert_eq!(e.message, "Fetch c:0 can't be computed from the feeds that have been fed so far.");
        let e = check_fetches(&g, &["r2:0".into()], &set(&["a:0"]), &none).unwrap_err();
        assert!(e.message.starts_with("Fetch a:0 "), "{}", e.message);
        assert!(check_fetches(&g, &["a:0".into()], &set(&["a:0"]), &none).is_err());
        assert!(check_fetches(&g, &["r2:0".into()], &none, &none).is_ok());
        // A fed intermediate cuts the walk: r1 fed, so r2 needs neither a nor b.
        assert!(check_fetches(&g, &["r2:0".into()], &set(&["a:0"]), &set(&["r1:0", "c:0"])).is_ok());
    }
}
