//! Per-step rendezvous tables of a worker, keyed by step id.
//!
//! A step's table is created by whichever comes first: the step's RunGraph, or a
//! RecvTensor from a peer whose partition started earlier. It is removed by CleanupGraph
//! (TensorFlow's master sends it after every step), or by the worker itself once the
//! step's RunGraph succeeded and every tensor it holds has been taken (a ferroflow master
//! then skips CleanupGraph: one RPC less per task and step), or, if neither happens (the
//! master died), by the sweeper once its expiry passes, so memory never leaks. Removing a
//! table aborts it: pending receives fail and outstanding RecvTensor calls of the step
//! are cancelled.
//!
//! A step removed by CleanupGraph leaves a tombstone for [`TOMBSTONE_LIFE`]: a RunGraph or
//! RecvTensor of that step arriving late (its RPC overtaken by the cleanup) fails at once
//! with the reason instead of creating a fresh table that would wait for its expiry.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ferroflow_core::Status;
use ferroflow_kernels::{CancelToken, Rendezvous};
use ferroflow_runtime::LocalRendezvous;
use tokio::sync::watch;

/// The shared state of one step on one worker.
pub(crate) struct StepEntry {
    /// The step id.
    pub(crate) step_id: i64,
    /// Tensors sent by this task's partitions (and client feeds), by rendezvous key.
    pub(crate) local: LocalRendezvous,
    /// Cancels the step's executors.
    pub(crate) cancel: CancelToken,
    /// Set once when the step is aborted; RecvTensor calls in flight watch it.
    aborted: watch::Sender<Option<Status>>,
    expires: Mutex<Instant>,
    /// RecvTensor calls of this task's partitions still waiting, by id: what they fetch
    /// from whom (named when the step misses its deadline).
    pending: Mutex<(u64, Vec<(u64, String)>)>,
    /// The step's RunGraph succeeded: remove the table once it is empty.
    release_when_empty: AtomicBool,
    /// Partial runs: per graph handle, the completion of the executor the first
    /// partial RunGraph started (`None` while it runs).
    partial: Mutex<HashMap<String, PartialDone>>,
    /// A step that lives as long as something else (a remote eager context's copies run
    /// at the context's id): no run, failure or drain ends it, only [`StepTable::unpin`].
    persistent: bool,
}

/// The completion of a partial run's executor.
pub(crate) type PartialDone = watch::Receiver<Option<Result<(), Status>>>;

impl StepEntry {
    fn new(step_id: i64, expires: Instant, persistent: bool) -> StepEntry {
        StepEntry {
            persistent,
            step_id,
            local: LocalRendezvous::new(),
            cancel: CancelToken::new(),
            aborted: watch::channel(None).0,
            expires: Mutex::new(expires),
            pending: Mutex::new((0, Vec::new())),
            release_when_empty: AtomicBool::new(false),
            partial: Mutex::new(HashMap::new()),
        }
    }

    /// The completion of `graph`'s partial run in this step, started by `start` on the
    /// first call.
    pub(crate) fn partial_run(&self, graph: &str, start: impl FnOnce() -> PartialDone) -> PartialDone {
        let mut g = self.partial.lock().unwrap_or_else(|e| e.into_inner());
        g.entry(graph.to_string()).or_insert_with(start).clone()
    }

    /// Records a RecvTensor call in flight; returns its id for [`StepEntry::done_waiting`].
    pub(crate) fn waiting_for(&self, what: String) -> u64 {
        let mut g = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        g.0 += 1;
        let id = g.0;
        g.1.push((id, what));
        id
    }

    /// The RecvTensor call `id` ended.
    pub(crate) fn done_waiting(&self, id: u64) {
        self.pending.lock().unwrap_or_else(|e| e.into_inner()).1.retain(|(i, _)| *i != id);
    }

    /// The RecvTensor calls still waiting (at most 3 named), or an empty string.
    pub(crate) fn still_waiting(&self) -> String {
        let g = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        if g.1.is_empty() {
            return String::new();
        }
        let mut v: Vec<&str> = g.1.iter().take(3).map(|(_, w)| w.as_str()).collect();
        let more = format!("and {} more", g.1.len().saturating_sub(3));
        if g.1.len() > 3 {
            v.push(&more);
        }
        format!("; still waiting for {}", v.join(", "))
    }

    /// Aborts the step: pending and future receives fail with `s`, executors are cancelled
    /// and outstanding RecvTensor calls end. Only the first abort counts; a persistent step
    /// is not aborted (one failed copy must not fail the context's next ones).
    pub(crate) fn abort(&self, s: Status) {
        if !self.persistent {
            self.force_abort(s);
        }
    }

    fn force_abort(&self, s: Status) {
        let first = self.aborted.send_if_modified(|v| {
            if v.is_none() {
                *v = Some(s.clone());
                true
            } else {
                false
            }
        });
        if first {
            self.local.abort(s.clone());
            self.cancel.cancel(s);
        }
    }

    /// The abort status, if aborted.
    pub(crate) fn aborted(&self) -> Option<Status> {
        self.aborted.borrow().clone()
    }

    /// Resolves when the step is aborted, with the reason.
    pub(crate) async fn wait_aborted(&self) -> Status {
        let mut rx = self.aborted.subscribe();
        let r = match rx.wait_for(|v| v.is_some()).await {
            Ok(v) => v.clone(),
            // The sender lives in self, so this cannot happen while self is borrowed.
            Err(_) => None,
        };
        r.unwrap_or_else(|| Status::cancelled("step aborted"))
    }

    fn extend(&self, until: Instant) {
        let mut e = self.expires.lock().unwrap_or_else(|e| e.into_inner());
        if until > *e {
            *e = until;
        }
    }

    fn expired(&self, now: Instant) -> bool {
        *self.expires.lock().unwrap_or_else(|e| e.into_inner()) <= now
    }
}

/// How long a cleaned-up step id is remembered.
pub(crate) const TOMBSTONE_LIFE: Duration = Duration::from_secs(60);

/// At most this many cleaned-up step ids are remembered (the oldest go first).
const MAX_TOMBSTONES: usize = 1 << 18;

/// Step ids removed by CleanupGraph, oldest first, with the time each may be forgotten.
#[derive(Default)]
struct Tombstones {
    ids: HashMap<i64, Instant>,
    order: VecDeque<(i64, Instant)>,
}

impl Tombstones {
    fn add(&mut self, step_id: i64, now: Instant) {
        let until = now + TOMBSTONE_LIFE;
        self.ids.insert(step_id, until);
        self.order.push_back((step_id, until));
        self.expire(now);
        while self.order.len() > MAX_TOMBSTONES {
            if let Some((id, until)) = self.order.pop_front() {
                if self.ids.get(&id) == Some(&until) {
                    self.ids.remove(&id);
                }
            }
        }
    }

    fn expire(&mut self, now: Instant) {
        while let Some(&(id, until)) = self.order.front() {
            if until > now {
                break;
            }
            self.order.pop_front();
            if self.ids.get(&id) == Some(&until) {
                self.ids.remove(&id);
            }
        }
    }
}

/// Step id → step state.
#[derive(Default)]
pub(crate) struct StepTable {
    steps: Mutex<HashMap<i64, Arc<StepEntry>>>,
    cleaned: Mutex<Tombstones>,
    /// Persistent step ids (see [`StepTable::pin`]).
    pinned: Mutex<std::collections::HashSet<i64>>,
}

impl StepTable {
    /// The entry of `step_id`, created if absent; it lives at least `ttl` from now. Fails
    /// with CANCELLED if the step was cleaned up already.
    pub(crate) fn get_or_create(&self, step_id: i64, ttl: Duration) -> Result<Arc<StepEntry>, Status> {
        let until = Instant::now() + ttl;
        let mut g = self.steps.lock().unwrap_or_else(|e| e.into_inner());
        if !g.contains_key(&step_id)
            && self.cleaned.lock().unwrap_or_else(|e| e.into_inner()).ids.contains_key(&step_id)
        {
            return Err(Status::cancelled(format!(
                "step {step_id} was already cleaned up on this worker (its RunGraph or RecvTensor came late)"
            )));
        }
        let persistent = self.pinned.lock().unwrap_or_else(|e| e.into_inner()).contains(&step_id);
        let e = g.entry(step_id).or_insert_with(|| Arc::new(StepEntry::new(step_id, until, persistent))).clone();
        e.extend(until);
        Ok(e)
    }

    /// Removes and aborts a step (CleanupGraph) and remembers its id for a while. Returns
    /// whether it existed.
    pub(crate) fn cleanup(&self, step_id: i64) -> bool {
        if self.pinned.lock().unwrap_or_else(|e| e.into_inner()).contains(&step_id) {
            return false;
        }
        let e = {
            let mut g = self.steps.lock().unwrap_or_else(|e| e.into_inner());
            self.cleaned.lock().unwrap_or_else(|e| e.into_inner()).add(step_id, Instant::now());
            g.remove(&step_id)
        };
        match e {
            Some(e) => {
                e.abort(Status::cancelled(format!("step {step_id} was cleaned up")));
                true
            }
            None => false,
        }
    }

    /// The step's RunGraph succeeded on this task: its table goes as soon as every tensor
    /// in it has been taken (now, or at the RecvTensor that takes the last one).
    pub(crate) fn release_when_drained(&self, entry: &StepEntry) {
        entry.release_when_empty.store(true, Ordering::SeqCst);
        self.release_if_drained(entry.step_id);
    }

    /// Removes the step's table if its RunGraph succeeded and nothing is left in it.
    /// Returns whether it did.
    pub(crate) fn release_if_drained(&self, step_id: i64) -> bool {
        let gone = {
            let mut g = self.steps.lock().unwrap_or_else(|e| e.into_inner());
            match g.get(&step_id) {
                Some(e) if !e.persistent && e.release_when_empty.load(Ordering::SeqCst) && e.local.is_empty() => {
                    g.remove(&step_id)
                }
                _ => None,
            }
        };
        match gone {
            Some(e) => {
                e.abort(Status::cancelled(format!("step {step_id} finished and was released")));
                true
            }
            None => false,
        }
    }

    /// Removes and aborts every expired step; returns how many.
    pub(crate) fn sweep(&self) -> usize {
        let now = Instant::now();
        let gone: Vec<Arc<StepEntry>> = {
            let mut g = self.steps.lock().unwrap_or_else(|e| e.into_inner());
            let ids: Vec<i64> = g.iter().filter(|(_, e)| !e.persistent && e.expired(now)).map(|(k, _)| *k).collect();
            ids.into_iter().filter_map(|k| g.remove(&k)).collect()
        };
        self.cleaned.lock().unwrap_or_else(|e| e.into_inner()).expire(now);
        for e in &gone {
            e.abort(Status::deadline_exceeded(format!(
                "step {} expired on this worker without a CleanupGraph",
                e.step_id
            )));
        }
        gone.len()
    }

    /// Aborts and removes every step (server shutdown).
    pub(crate) fn abort_all(&self, s: Status) {
        let all: Vec<Arc<StepEntry>> =
            self.steps.lock().unwrap_or_else(|e| e.into_inner()).drain().map(|(_, e)| e).collect();
        for e in all {
            e.force_abort(s.clone());
        }
    }

    /// Makes `step_id` persistent: its table stays until [`StepTable::unpin`], whatever
    /// runs in it, fails in it or drains it.
    pub(crate) fn pin(&self, step_id: i64) {
        self.pinned.lock().unwrap_or_else(|e| e.into_inner()).insert(step_id);
    }

    /// Ends a persistent step: its table goes, and what waits in it is cancelled.
    pub(crate) fn unpin(&self, step_id: i64, why: Status) {
        self.pinned.lock().unwrap_or_else(|e| e.into_inner()).remove(&step_id);
        let e = self.steps.lock().unwrap_or_else(|e| e.into_inner()).remove(&step_id);
        if let Some(e) = e {
            e.force_abort(why);
        }
    }

    /// Number of live steps.
    pub(crate) fn len(&self) -> usize {
        self.steps.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferroflow_core::{Code, Tensor};
    use ferroflow_kernels::Rendezvous;

    #[test]
    fn create_cleanup_sweep() {
        let t = StepTable::default();
        let a = t.get_or_create(1, Duration::from_secs(60)).unwrap();
        let a2 = t.get_or_create(1, Duration::from_millis(1)).unwrap();
        assert!(Arc::ptr_eq(&a, &a2), "one entry per step id");
        a.local.send("k", Tensor::scalar(1.0f32), false).unwrap();
        let _b = t.get_or_create(2, Duration::ZERO).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t.sweep(), 1, "only the expired step goes");
        assert_eq!(t.len(), 1);
        assert!(t.cleanup(1));
        assert!(!t.cleanup(1));
        assert_eq!(a.aborted().unwrap().code, Code::Cancelled);
        assert!(a.cancel.is_cancelled());
        assert!(a.local.send("z", Tensor::scalar(1.0f32), false).is_err());
        assert_eq!(t.len(), 0);
        // A late RunGraph or RecvTensor of the cleaned-up step does not bring it back.
        let late = t.get_or_create(1, Duration::from_secs(60)).err().unwrap();
        assert_eq!(late.code, Code::Cancelled);
        assert!(late.message.contains("step 1"), "{late}");
        assert_eq!(t.len(), 0);
        // A cleanup that came first (the RunGraph is the late one) also leaves a tombstone.
        assert!(!t.cleanup(7));
        assert!(t.get_or_create(7, Duration::from_secs(60)).is_err());
        assert!(t.get_or_create(8, Duration::from_secs(60)).is_ok());
    }

    #[test]
    fn tombstones_expire() {
        let mut ts = Tombstones::default();
        let t0 = Instant::now();
        ts.add(1, t0);
        ts.add(2, t0 + Duration::from_secs(30));
        ts.expire(t0 + TOMBSTONE_LIFE);
        assert!(!ts.ids.contains_key(&1));
        assert!(ts.ids.contains_key(&2));
        ts.expire(t0 + TOMBSTONE_LIFE * 2);
        assert!(ts.ids.is_empty() && ts.order.is_empty());
    }

    #[test]
    fn a_finished_step_is_released_once_drained() {
        let t = StepTable::default();
        // Nothing left: released at once.
        let a = t.get_or_create(1, Duration::from_secs(60)).unwrap();
        assert!(!t.release_if_drained(1), "not before its RunGraph succeeded");
        t.release_when_drained(&a);
        assert_eq!(t.len(), 0);
        // A tensor still to be fetched by a peer: kept until it is taken.
        let b = t.get_or_create(2, Duration::from_secs(60)).unwrap();
        b.local.send("k", Tensor::scalar(1.0f32), false).unwrap();
        t.release_when_drained(&b);
        assert_eq!(t.len(), 1);
        assert!(!t.release_if_drained(2));
        assert!(b.local.try_take("k").is_some());
        assert!(t.release_if_drained(2));
        assert_eq!(t.len(), 0);
        // A step whose RunGraph did not finish is never released this way.
        let c = t.get_or_create(3, Duration::from_secs(60)).unwrap();
        assert!(!t.release_if_drained(3));
        assert!(c.aborted().is_none());
        assert_eq!(t.len(), 1);
    }

    #[test]
    fn first_abort_wins() {
        let e = StepEntry::new(3, Instant::now(), false);
        e.abort(Status::invalid_argument("real"));
        e.abort(Status::cancelled("later"));
        assert_eq!(e.aborted().unwrap().code, Code::InvalidArgument);
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        assert_eq!(rt.block_on(e.wait_aborted()).message, "real");
    }

    #[test]
    fn a_pinned_step_outlives_drains_failures_cleanups_and_sweeps() {
        let t = StepTable::default();
        t.pin(7);
        let e = t.get_or_create(7, Duration::from_millis(1)).unwrap();
        e.local.send("k", Tensor::scalar(1.0f32), false).unwrap();
        t.release_when_drained(&e);
        assert!(e.local.try_take("k").is_some());
        assert!(!t.release_if_drained(7));
        e.abort(Status::internal("one failed copy"));
        assert!(e.aborted().is_none());
        assert!(!t.cleanup(7));
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(t.sweep(), 0);
        // The same table serves the next copy.
        assert!(Arc::ptr_eq(&e, &t.get_or_create(7, Duration::from_secs(1)).unwrap()));
        t.unpin(7, Status::cancelled("context closed"));
        assert_eq!(e.aborted().unwrap().code, Code::Cancelled);
        assert_eq!(t.len(), 0);
    }
}
