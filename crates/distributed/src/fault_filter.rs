//! Fault filters: what the network between tasks does to their worker RPCs, injected
//! below the master and the rendezvous (every peer call passes through the
//! [`crate::WorkerCache`]), on the in-memory transport and on gRPC alike. A rule matches
//! calls by caller task, callee task and RPC kind, and fails them (a refused connection),
//! loses the request or the reply (the caller waits until its deadline), delays or
//! duplicates them; partitions and isolation are rules in both directions. Rules can fire
//! a bounded number of times or with a probability drawn from a seeded generator, so a
//! test's faults are the same at every run. `heal` removes every rule.
//!
//! This machine's kernel has no `netem`: latency and loss between tasks are tested here.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ferroflow_core::proto::*;
use ferroflow_core::{DeviceName, Status, Tensor};

use crate::worker_api::{CollectiveReply, CollectiveRpc, RecvBatch, RunGraphCall, RunGraphReply, WorkerApi, WorkerRpc};

/// What a rule does to a call it matches.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Fault {
    /// The call fails at once with UNAVAILABLE (a refused or reset connection).
    Fail,
    /// The request is lost: the callee never sees it and the caller waits until the
    /// call's deadline (DEADLINE_EXCEEDED) or until it gives up.
    LoseRequest,
    /// The callee runs the call but its reply is lost: the caller waits until the
    /// deadline.
    LoseReply,
    /// The call reaches the callee after this long (bounded by its deadline).
    Delay(Duration),
    /// The call reaches the callee twice; the caller gets the first answer.
    Duplicate,
}

/// A task as rules name it: job, replica (0 when missing) and index.
#[derive(Clone, Debug, PartialEq, Eq)]
struct TaskKey(String, i32, i32);

fn task_key(name: &str) -> Result<TaskKey, Status> {
    let d = DeviceName::parse(name).map_err(|e| e.context(format!("fault filter task '{name}'")))?;
    match (d.job, d.task) {
        (Some(j), Some(t)) => Ok(TaskKey(j, d.replica.unwrap_or(0), t)),
        _ => Err(Status::invalid_argument(format!("fault filter task '{name}' does not name a job and a task"))),
    }
}

/// Which calls a rule matches and what it does to them.
#[derive(Clone, Debug)]
pub struct Rule {
    fault: Fault,
    from: Option<Vec<TaskKey>>,
    to: Option<Vec<TaskKey>>,
    either_way: bool,
    rpcs: Option<Vec<WorkerRpc>>,
    times: Option<u64>,
    /// Fires with this probability (per million) on a matching call.
    per_million: u32,
}

impl Rule {
    /// A rule that does `fault` to every call.
    pub fn new(fault: Fault) -> Rule {
        Rule { fault, from: None, to: None, either_way: false, rpcs: None, times: None, per_million: 1_000_000 }
    }

    /// Only calls made by these tasks (`/job:J/task:T`).
    pub fn from(mut self, tasks: &[&str]) -> Result<Rule, Status> {
        self.from = Some(tasks.iter().map(|t| task_key(t)).collect::<Result<_, _>>()?);
        Ok(self)
    }

    /// Only calls to these tasks.
    pub fn to(mut self, tasks: &[&str]) -> Result<Rule, Status> {
        self.to = Some(tasks.iter().map(|t| task_key(t)).collect::<Result<_, _>>()?);
        Ok(self)
    }

    /// Also calls in the other direction (from a `to` task to a `from` task).
    pub fn either_way(mut self) -> Rule {
        self.either_way = true;
        self
    }

    /// Only calls of this kind (may be given several times).
    pub fn rpc(mut self, rpc: WorkerRpc) -> Rule {
        self.rpcs.get_or_insert_with(Vec::new).push(rpc);
        self
    }

    /// Only the next `n` matching calls; the rule then stays but no longer fires.
    pub fn times(mut self, n: u64) -> Rule {
        self.times = Some(n);
        self
    }

    /// Fires on a matching call with probability `p` (drawn from the filters' seed).
    pub fn probability(mut self, p: f64) -> Rule {
        self.per_million = (p.clamp(0.0, 1.0) * 1e6) as u32;
        self
    }

    fn one_way(&self, from: &TaskKey, to: &TaskKey) -> bool {
        self.from.as_ref().is_none_or(|f| f.contains(from)) && self.to.as_ref().is_none_or(|t| t.contains(to))
    }

    fn matches(&self, from: &TaskKey, to: &TaskKey, rpc: WorkerRpc) -> bool {
        self.rpcs.as_ref().is_none_or(|r| r.contains(&rpc))
            && (self.one_way(from, to) || (self.either_way && self.one_way(to, from)))
    }
}

/// The rules in force on one or more worker caches.
pub struct FaultFilters {
    rules: Mutex<Vec<(u64, Rule)>>,
    next_id: AtomicU64,
    rng: Mutex<u64>,
    fired: AtomicU64,
}

impl std::fmt::Debug for FaultFilters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.rules.lock().map(|g| g.len()).unwrap_or(0);
        write!(f, "FaultFilters {{ rules: {n}, fired: {} }}", self.fired())
    }
}

impl FaultFilters {
    /// No rules yet; probabilities drawn from `seed`.
    pub fn new(seed: u64) -> Arc<FaultFilters> {
        Arc::new(FaultFilters {
            rules: Mutex::new(Vec::new()),
            next_id: AtomicU64::new(1),
            rng: Mutex::new(seed | 1),
            fired: AtomicU64::new(0),
        })
    }

    /// Adds `rule`; returns its id for [`FaultFilters::remove`].
    pub fn add(&self, rule: Rule) -> u64 {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.rules.lock().unwrap_or_else(|e| e.into_inner()).push((id, rule));
        id
    }

    /// Removes rule `id`.
    pub fn remove(&self, id: u64) {
        self.rules.lock().unwrap_or_else(|e| e.into_inner()).retain(|(i, _)| *i != id);
    }

    /// Every call between a task of `a` and a task of `b`, either way, fails.
    pub fn partition(&self, a: &[&str], b: &[&str]) -> Result<u64, Status> {
        Ok(self.add(Rule::new(Fault::Fail).from(a)?.to(b)?.either_way()))
    }

    /// Every call to or from `task` fails.
    pub fn isolate(&self, task: &str) -> Result<u64, Status> {
        Ok(self.add(Rule::new(Fault::Fail).from(&[task])?.either_way()))
    }

    /// Removes every rule: the network is whole again.
    pub fn heal(&self) {
        self.rules.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    /// How many calls a rule has acted on so far.
    pub fn fired(&self) -> u64 {
        self.fired.load(Ordering::Relaxed)
    }

    /// The fault for a call of `rpc` from `from` to `to`: the first matching rule that
    /// fires.
    fn decide(&self, from: &TaskKey, to: &TaskKey, rpc: WorkerRpc) -> Option<Fault> {
        let mut rules = self.rules.lock().unwrap_or_else(|e| e.into_inner());
        for (_, r) in rules.iter_mut() {
            if r.times == Some(0) || !r.matches(from, to, rpc) {
                continue;
            }
            if r.per_million < 1_000_000 && self.draw() >= r.per_million {
                continue;
            }
            if let Some(n) = r.times.as_mut() {
                *n -= 1;
            }
            self.fired.fetch_add(1, Ordering::Relaxed);
            return Some(r.fault);
        }
        None
    }

    /// A number below a million from the seeded generator (xorshift64*).
    fn draw(&self) -> u32 {
        let mut s = self.rng.lock().unwrap_or_else(|e| e.into_inner());
        *s ^= *s >> 12;
        *s ^= *s << 25;
        *s ^= *s >> 27;
        (s.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) as u32 % 1_000_000
    }
}

/// A peer's worker behind the filters, for calls from one task to another.
pub(crate) struct FilteredWorker {
    from: (String, Option<TaskKey>),
    to: (String, Option<TaskKey>),
    inner: Arc<dyn WorkerApi>,
    filters: Arc<FaultFilters>,
}

/// What the gate lets through.
enum Pass {
    Once,
    Twice,
    LoseReply,
}

impl FilteredWorker {
    pub(crate) fn new(from: &str, to: &str, inner: Arc<dyn WorkerApi>, filters: Arc<FaultFilters>) -> FilteredWorker {
        FilteredWorker {
            from: (from.to_string(), task_key(from).ok()),
            to: (to.to_string(), task_key(to).ok()),
            inner,
            filters,
        }
    }

    fn what(&self, rpc: WorkerRpc) -> String {
        format!("{} from {} to {}", rpc.name(), self.from.0, self.to.0)
    }

    /// Applies the rule (if any) to a call of `rpc` before it goes out.
    async fn gate(&self, rpc: WorkerRpc, deadline: Instant) -> Result<Pass, Status> {
        let (Some(from), Some(to)) = (&self.from.1, &self.to.1) else { return Ok(Pass::Once) };
        match self.filters.decide(from, to, rpc) {
            None => Ok(Pass::Once),
            Some(Fault::Fail) => Err(Status::unavailable(format!(
                "{}: the connection was refused (fault filter: the tasks are partitioned)",
                self.what(rpc)
            ))),
            Some(Fault::LoseRequest) => Err(self.lost(rpc, deadline, "request").await),
            Some(Fault::LoseReply) => Ok(Pass::LoseReply),
            Some(Fault::Delay(d)) => {
                let until = (Instant::now() + d).min(deadline);
                tokio::time::sleep_until(tokio::time::Instant::from_std(until)).await;
                if Instant::now() >= deadline {
                    return Err(Status::deadline_exceeded(format!(
                        "{}: delayed past its deadline (fault filter)",
                        self.what(rpc)
                    )));
                }
                Ok(Pass::Once)
            }
            Some(Fault::Duplicate) => Ok(Pass::Twice),
        }
    }

    /// Waits until `deadline` for an answer that never comes.
    async fn lost(&self, rpc: WorkerRpc, deadline: Instant, part: &str) -> Status {
        tokio::time::sleep_until(tokio::time::Instant::from_std(deadline)).await;
        Status::deadline_exceeded(format!(
            "{}: no answer before the deadline (fault filter: the {part} was lost)",
            self.what(rpc)
        ))
    }
}

/// One filtered call: `$call` runs with `$req` (cloned once more for a duplicate).
macro_rules! filtered_call {
    ($self:ident, $rpc:expr, $req:ident, $deadline:ident, $method:ident) => {{
        match $self.gate($rpc, $deadline).await? {
            Pass::Once => $self.inner.$method($req, $deadline).await,
            Pass::Twice => {
                let (inner, copy) = ($self.inner.clone(), $req.clone());
                tokio::spawn(async move {
                    let _ = inner.$method(copy, $deadline).await;
                });
                $self.inner.$method($req, $deadline).await
            }
            Pass::LoseReply => {
                let _ = $self.inner.$method($req, $deadline).await;
                Err($self.lost($rpc, $deadline, "reply").await)
            }
        }
    }};
}

#[async_trait::async_trait]
impl WorkerApi for FilteredWorker {
    fn releases_steps(&self) -> bool {
        self.inner.releases_steps()
    }

    async fn get_status(&self, deadline: Instant) -> Result<GetStatusResponse, Status> {
        match self.gate(WorkerRpc::GetStatus, deadline).await? {
            Pass::LoseReply => {
                let _ = self.inner.get_status(deadline).await;
                Err(self.lost(WorkerRpc::GetStatus, deadline, "reply").await)
            }
            _ => self.inner.get_status(deadline).await,
        }
    }

    async fn create_worker_session(&self, req: CreateWorkerSessionRequest, deadline: Instant) -> Result<(), Status> {
        filtered_call!(self, WorkerRpc::CreateWorkerSession, req, deadline, create_worker_session)
    }

    async fn delete_worker_session(&self, req: DeleteWorkerSessionRequest, deadline: Instant) -> Result<(), Status> {
        filtered_call!(self, WorkerRpc::DeleteWorkerSession, req, deadline, delete_worker_session)
    }

    async fn register_graph(
        &self,
        req: RegisterGraphRequest,
        deadline: Instant,
    ) -> Result<RegisterGraphResponse, Status> {
        filtered_call!(self, WorkerRpc::RegisterGraph, req, deadline, register_graph)
    }

    async fn run_graph(&self, call: RunGraphCall, deadline: Instant) -> Result<RunGraphReply, Status> {
        filtered_call!(self, WorkerRpc::RunGraph, call, deadline, run_graph)
    }

    async fn cleanup_graph(&self, req: CleanupGraphRequest, deadline: Instant) -> Result<(), Status> {
        filtered_call!(self, WorkerRpc::CleanupGraph, req, deadline, cleanup_graph)
    }

    async fn cleanup_all(&self, req: CleanupAllRequest, deadline: Instant) -> Result<(), Status> {
        filtered_call!(self, WorkerRpc::CleanupAll, req, deadline, cleanup_all)
    }

    async fn deregister_graph(&self, req: DeregisterGraphRequest, deadline: Instant) -> Result<(), Status> {
        filtered_call!(self, WorkerRpc::DeregisterGraph, req, deadline, deregister_graph)
    }

    async fn recv_tensor(&self, req: RecvTensorRequest, deadline: Instant) -> Result<(Tensor, bool), Status> {
        filtered_call!(self, WorkerRpc::RecvTensor, req, deadline, recv_tensor)
    }

    fn serves_batches(&self) -> bool {
        self.inner.serves_batches()
    }

    async fn recv_tensors(&self, batch: RecvBatch<'_>, deadline: Instant) -> Result<(), Status> {
        match self.gate(WorkerRpc::RecvTensor, deadline).await? {
            Pass::Once => self.inner.recv_tensors(batch, deadline).await,
            Pass::Twice => {
                let (inner, copy) = (self.inner.clone(), batch.reqs.to_vec());
                tokio::spawn(async move {
                    let _ = inner.recv_tensors(RecvBatch { reqs: &copy, deliver: &mut |_, _| {} }, deadline).await;
                });
                self.inner.recv_tensors(batch, deadline).await
            }
            Pass::LoseReply => {
                let _ =
                    self.inner.recv_tensors(RecvBatch { reqs: batch.reqs, deliver: &mut |_, _| {} }, deadline).await;
                Err(self.lost(WorkerRpc::RecvTensor, deadline, "reply").await)
            }
        }
    }

    async fn collective(&self, req: CollectiveRpc, deadline: Instant) -> Result<CollectiveReply, Status> {
        filtered_call!(self, WorkerRpc::Collective, req, deadline, collective)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(s: &str) -> TaskKey {
        task_key(s).unwrap()
    }

    #[test]
    fn partition_matches_both_ways_and_heals() {
        let f = FaultFilters::new(7);
        f.partition(&["/job:ps/task:0"], &["/job:worker/task:0", "/job:worker/task:1"]).unwrap();
        let (ps, w0, w2) = (k("/job:ps/replica:0/task:0"), k("/job:worker/task:0"), k("/job:worker/task:2"));
        assert_eq!(f.decide(&w0, &ps, WorkerRpc::RunGraph), Some(Fault::Fail));
        assert_eq!(f.decide(&ps, &w0, WorkerRpc::RecvTensor), Some(Fault::Fail));
        assert_eq!(f.decide(&w2, &ps, WorkerRpc::RunGraph), None);
        f.heal();
        assert_eq!(f.decide(&w0, &ps, WorkerRpc::RunGraph), None);
    }

    #[test]
    fn isolate_kind_and_times() {
        let f = FaultFilters::new(7);
        f.isolate("/job:worker/task:1").unwrap();
        let (ps, w0, w1) = (k("/job:ps/task:0"), k("/job:worker/task:0"), k("/job:worker/task:1"));
        assert_eq!(f.decide(&w1, &ps, WorkerRpc::GetStatus), Some(Fault::Fail));
        assert_eq!(f.decide(&w0, &w1, WorkerRpc::RecvTensor), Some(Fault::Fail));
        assert_eq!(f.decide(&w0, &ps, WorkerRpc::RecvTensor), None);
        f.heal();
        f.add(Rule::new(Fault::LoseRequest).rpc(WorkerRpc::RecvTensor).times(2));
        assert_eq!(f.decide(&w0, &ps, WorkerRpc::RunGraph), None);
        assert_eq!(f.decide(&w0, &ps, WorkerRpc::RecvTensor), Some(Fault::LoseRequest));
        assert_eq!(f.decide(&ps, &w0, WorkerRpc::RecvTensor), Some(Fault::LoseRequest));
        assert_eq!(f.decide(&ps, &w0, WorkerRpc::RecvTensor), None);
        assert_eq!(f.fired(), 4);
    }

    #[test]
    fn probabilities_follow_the_seed() {
        let run = |seed| {
            let f = FaultFilters::new(seed);
            f.add(Rule::new(Fault::Fail).probability(0.25));
            let (a, b) = (k("/job:a/task:0"), k("/job:b/task:0"));
            (0..4000).filter(|_| f.decide(&a, &b, WorkerRpc::RunGraph).is_some()).count()
        };
        let n = run(42);
        assert_eq!(n, run(42), "the same seed gives the same faults");
        assert!((800..1200).contains(&n), "about a quarter of the calls: {n}");
    }

    #[test]
    fn bad_task_names_are_refused() {
        assert!(Rule::new(Fault::Fail).from(&["/job:ps"]).is_err());
        assert!(Rule::new(Fault::Fail).to(&["not a task"]).is_err());
    }
}
