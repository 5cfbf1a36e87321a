//! The chief's side of synchronous training: a thread that runs the `sync_op` of
//! [`SyncReplicas`] in a loop (TensorFlow's chief queue runner), with every aggregation
//! bounded and an explicit stop that unblocks everyone.

use ferroflow_runtime::StepRunner;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use ferroflow_core::{Code, Status};
use ferroflow_kernels::CancelToken;
use ferroflow_runtime::RunOptions;

use super::SyncReplicas;

/// Runs one chief step given the step's cancellation token and timeout.
pub type RunStep = Box<dyn FnMut(&CancelToken, Duration) -> Result<(), Status> + Send>;

/// Closes the token queue when the runner stops.
pub type CloseFn = Box<dyn FnOnce() -> Result<(), Status> + Send>;

/// A running chief queue runner. Dropping it stops it.
pub struct ChiefQueueRunner {
    stop: Arc<AtomicBool>,
    current: Arc<Mutex<Option<CancelToken>>>,
    updates: Arc<AtomicU64>,
    thread: Option<JoinHandle<Result<(), Status>>>,
}

impl ChiefQueueRunner {
    /// Starts running `run_sync` in a loop on its own thread; each run must finish within
    /// `aggregation_timeout` (one update: waiting for the replicas' gradients, applying
    /// them). On any error, or after [`ChiefQueueRunner::stop`], `close` runs (it should
    /// close the token queue so replicas waiting for a token stop with OutOfRange).
    pub fn start(run_sync: RunStep, close: CloseFn, aggregation_timeout: Duration) -> Result<ChiefQueueRunner, Status> {
        ChiefQueueRunner::start_bounded(run_sync, close, aggregation_timeout, None)
    }

    /// [`ChiefQueueRunner::start`] that stops by itself after `max_updates` updates (the
    /// training's last global step): the replicas get their last tokens, then the queue
    /// is closed, so nobody waits for an update that will never come.
    pub fn start_bounded(
        mut run_sync: RunStep,
        close: CloseFn,
        aggregation_timeout: Duration,
        max_updates: Option<u64>,
    ) -> Result<ChiefQueueRunner, Status> {
        let stop = Arc::new(AtomicBool::new(false));
        let current: Arc<Mutex<Option<CancelToken>>> = Arc::new(Mutex::new(None));
        let updates = Arc::new(AtomicU64::new(0));
        let (st, cur, up) = (stop.clone(), current.clone(), updates.clone());
        let thread = std::thread::Builder::new()
            .name("sync-replicas-chief".into())
            .spawn(move || {
                let r = loop {
                    if st.load(Ordering::SeqCst) || max_updates.is_some_and(|m| up.load(Ordering::SeqCst) >= m) {
                        break Ok(());
                    }
                    let tok = CancelToken::new();
                    *cur.lock().unwrap_or_else(|e| e.into_inner()) = Some(tok.clone());
                    if st.load(Ordering::SeqCst) {
                        // `stop` may have looked before the token was published.
                        tok.cancel(Status::cancelled("the sync replicas chief queue runner was stopped"));
                    }
                    let r = run_sync(&tok, aggregation_timeout);
                    *cur.lock().unwrap_or_else(|e| e.into_inner()) = None;
                    match r {
                        Ok(()) => {
                            up.fetch_add(1, Ordering::SeqCst);
                        }
                        Err(_) if st.load(Ordering::SeqCst) => break Ok(()),
                        Err(e) if e.code == Code::DeadlineExceeded => {
                            break Err(e.context(format!(
                                "SyncReplicas chief: no aggregated update within {} ms: too few replicas sent \
                                 gradients (finished early or stalled); stopping and closing the token queue",
                                aggregation_timeout.as_millis()
                            )))
                        }
                        Err(e) => break Err(e.context("SyncReplicas chief: the sync step failed")),
                    }
                };
                if let Err(e) = &r {
                    tracing::error!(error = %e, "sync replicas chief queue runner stopped");
                }
                if let Err(e) = close() {
                    tracing::warn!(error = %e, "closing the sync token queue failed");
                }
                r
            })
            .map_err(|e| Status::resource_exhausted(format!("cannot start the sync replicas chief thread: {e}")))?;
        Ok(ChiefQueueRunner { stop, current, updates, thread: Some(thread) })
    }

    /// Starts the runner on `sess` (a session of its own, beside the replicas' steps): runs
    /// `sync.sync_op` in a loop, at most `max_updates` times, and closes the token queue
    /// when it stops.
    pub fn start_on(
        sess: Arc<dyn StepRunner + Send + Sync>,
        sync: &SyncReplicas,
        aggregation_timeout: Duration,
        max_updates: Option<u64>,
    ) -> Result<Self, Status> {
        let op = sync.sync_op.name.clone();
        let close_op = sync.close_token_queue_op.name.clone();
        let s2 = sess.clone();
        ChiefQueueRunner::start_bounded(
            Box::new(move |tok, timeout| {
                let opts = RunOptions { timeout: Some(timeout), cancel: Some(tok.clone()), ..Default::default() };
                sess.run_by_name(&[], &[], std::slice::from_ref(&op), &opts).map(|_| ())
            }),
            Box::new(move || {
                let opts = RunOptions { timeout: Some(Duration::from_secs(30)), cancel: None, ..Default::default() };
                s2.run_by_name(&[], &[], &[close_op], &opts).map(|_| ())
            }),
            aggregation_timeout,
            max_updates,
        )
    }

    /// [`ChiefQueueRunner::start_on`] a local session, unbounded.
    pub fn start_local(
        sess: Arc<ferroflow_runtime::DirectSession>,
        sync: &SyncReplicas,
        aggregation_timeout: Duration,
    ) -> Result<Self, Status> {
        ChiefQueueRunner::start_on(sess, sync, aggregation_timeout, None)
    }

    /// Number of updates applied so far.
    pub fn updates(&self) -> u64 {
        self.updates.load(Ordering::SeqCst)
    }

    /// Whether the runner has stopped (by error or request).
    pub fn is_finished(&self) -> bool {
        self.thread.as_ref().is_none_or(|t| t.is_finished())
    }

    /// Stops the loop (cancelling an aggregation in progress), lets it close the token queue
    /// and returns the loop's error, if it failed before being stopped.
    pub fn stop(mut self) -> Result<(), Status> {
        self.stop_inner()
    }

    fn stop_inner(&mut self) -> Result<(), Status> {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.current.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            t.cancel(Status::cancelled("the sync replicas chief queue runner was stopped"));
        }
        match self.thread.take() {
            Some(t) => t.join().unwrap_or_else(|_| Err(Status::internal("the sync replicas chief thread panicked"))),
            None => Ok(()),
        }
    }
}

impl Drop for ChiefQueueRunner {
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = self.stop_inner();
        }
    }
}
