//! Blocked kernel invocations ("attempts") parked inside a resource (a queue, an
//! accumulator) until the resource can satisfy them. No thread waits: the attempt keeps the
//! kernel's [`OpContext`] and completion callback, and whoever changes the resource (an
//! enqueue, a close, an applied gradient) completes it. Every attempt is also armed against
//! the step's [`crate::CancelToken`] (Cancelled), the step's deadline and the op's own
//! timeout (DeadlineExceeded), so every wait is bounded by something.

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use ferroflow_core::Status;

use crate::{timer, CancelToken, DoneCallback, OpContext};

/// Starts a waiting kernel: `prep` checks its inputs and finds its resource, then `wait`
/// takes what `prep` returned with `ctx` and `done` (to park the attempt); an error of
/// `prep` completes the kernel at once.
pub(crate) fn start_waiting<T>(
    ctx: OpContext,
    done: DoneCallback,
    prep: impl FnOnce(&OpContext) -> Result<T, Status>,
    wait: impl FnOnce(T, OpContext, DoneCallback),
) {
    match prep(&ctx) {
        Ok(v) => wait(v, ctx, done),
        Err(e) => done(ctx, Err(e)),
    }
}

/// Work to run once the resource's lock is released (completes a kernel).
pub(crate) type Completion = Box<dyn FnOnce() + Send>;

/// Runs completions (outside any lock).
pub(crate) fn run_all(cs: Vec<Completion>) {
    for c in cs {
        c();
    }
}

/// Cancel and timer registrations of one attempt.
#[derive(Default)]
pub(crate) struct Guard {
    cancel: Option<(CancelToken, u64)>,
    timers: Vec<u64>,
    deadline: Option<Instant>,
    /// Why a deadline could not be armed (the attempt then fails once parked).
    unarmed: Option<Status>,
}

impl Guard {
    fn disarm(&mut self) {
        if let Some((tok, id)) = self.cancel.take() {
            tok.deregister(id);
        }
        for t in self.timers.drain(..) {
            timer::cancel(t);
        }
    }
}

/// A parked kernel invocation with its own request `K`.
pub(crate) struct Pending<K> {
    /// Unique within the resource.
    pub id: u64,
    /// What the attempt asks for.
    pub kind: K,
    /// The kernel's context (outputs are set on it before completing).
    pub ctx: OpContext,
    done: DoneCallback,
    guard: Guard,
}

impl<K> Pending<K> {
    /// Disarms the attempt's cancel/timer registrations and returns its completion.
    pub fn finish(mut self, r: Result<(), Status>) -> Completion {
        self.guard.disarm();
        let (ctx, done) = (self.ctx, self.done);
        Box::new(move || done(ctx, r))
    }

    /// Disarms the attempt and hands back its context and callback (for attempts that go on
    /// to other work once satisfied, like a reader that got a file name).
    pub fn into_parts(mut self) -> (OpContext, DoneCallback) {
        self.guard.disarm();
        (self.ctx, self.done)
    }
}

/// A resource holding parked attempts.
pub(crate) trait Abortable: Send + Sync + 'static {
    /// Removes attempt `id` if it is still parked and returns its completion failing with `s`.
    fn abort(&self, id: u64, s: Status) -> Option<Completion>;
}

/// Builds an attempt and arms it: the step's cancellation fails it with Cancelled, the
/// earlier of `timeout` and the step's deadline with DeadlineExceeded. `what` names the
/// operation and resource for the messages. Call [`check_armed`] once it is parked.
pub(crate) fn park<R: Abortable, K>(
    res: &Arc<R>,
    id: u64,
    kind: K,
    ctx: OpContext,
    done: DoneCallback,
    timeout: Option<Duration>,
    what: &str,
) -> Pending<K> {
    let mut guard = Guard::default();
    let step = ctx.step().clone();
    let weak: Weak<R> = Arc::downgrade(res);
    let w = weak.clone();
    let msg = what.to_string();
    let tok = step.cancel.clone();
    if let Some(cid) = tok.register(move |reason| {
        if let Some(r) = w.upgrade() {
            let s = Status::cancelled(format!("{msg} was cancelled: {}", reason.message));
            if let Some(c) = r.abort(id, s) {
                c();
            }
        }
    }) {
        guard.cancel = Some((tok, cid));
    }
    let now = Instant::now();
    let mut arm_timer = |deadline: Instant, text: String| {
        let w = weak.clone();
        guard.deadline = Some(guard.deadline.map_or(deadline, |d| d.min(deadline)));
        let armed = timer::schedule(deadline, move || {
            if let Some(r) = w.upgrade() {
                if let Some(c) = r.abort(id, Status::deadline_exceeded(text)) {
                    c();
                }
            }
        });
        match armed {
            Ok(t) => guard.timers.push(t),
            Err(e) => guard.unarmed = Some(e),
        }
    };
    if let Some(t) = timeout {
        arm_timer(now + t, format!("{what} timed out after {} ms (timeout_ms)", t.as_millis()));
    }
    if let Some(d) = step.deadline {
        arm_timer(d, format!("{what} did not complete before the step's deadline"));
    }
    Pending { id, kind, ctx, done, guard }
}

/// Parks the armed attempt `p` in `res`: `enter` puts it there (under the resource's lock) and
/// returns the completions that became ready, which then run; then [`check_armed`].
pub(crate) fn enter_parked<R: Abortable, K>(
    res: &Arc<R>,
    p: Pending<K>,
    what: &str,
    enter: impl FnOnce(Pending<K>) -> Vec<Completion>,
) {
    let (id, deadline, cancel) = (p.id, p.deadline(), p.ctx.step().cancel.clone());
    let unarmed = p.guard.unarmed.clone();
    run_all(enter(p));
    if let Some(s) = unarmed {
        if let Some(c) = res.abort(id, s.context(what.to_string())) {
            c();
        }
        return;
    }
    check_armed(res, id, &cancel, deadline, what);
}

/// Closes the race between arming and parking: if the step was cancelled or the deadline
/// passed meanwhile, aborts the attempt now.
pub(crate) fn check_armed<R: Abortable>(
    res: &Arc<R>,
    id: u64,
    cancel: &CancelToken,
    deadline: Option<Instant>,
    what: &str,
) {
    if let Some(reason) = cancel.status() {
        if let Some(c) = res.abort(id, Status::cancelled(format!("{what} was cancelled: {}", reason.message))) {
            c();
        }
        return;
    }
    if deadline.is_some_and(|d| Instant::now() >= d) {
        if let Some(c) = res.abort(id, Status::deadline_exceeded(format!("{what} passed its deadline"))) {
            c();
        }
    }
}

impl<K> Pending<K> {
    /// The earliest deadline the attempt is armed with.
    pub fn deadline(&self) -> Option<Instant> {
        self.guard.deadline
    }
}

/// The op's `timeout_ms` attr as a duration (`<= 0` means none, as in TensorFlow).
pub(crate) fn timeout_from_ms(ms: i64) -> Option<Duration> {
    (ms > 0).then(|| Duration::from_millis(ms as u64))
}
