//! One process-wide timer thread for the deadlines of blocked kernels (`timeout_ms` of
//! queue ops, step deadlines). Waiting kernels never hold a thread: they register a
//! callback here that fails them when the deadline passes. Callbacks run on the timer
//! thread and must be short (they hand work back to the executor).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::Instant;

use ferroflow_core::Status;

type Callback = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct State {
    /// (deadline, id) → callback, earliest first.
    queue: BTreeMap<(Instant, u64), Callback>,
    /// id → deadline, to cancel by id.
    index: HashMap<u64, Instant>,
    next_id: u64,
}

struct Timer {
    state: Mutex<State>,
    wake: Condvar,
}

/// The timer, started on first use; an error when the OS refused its thread (then no
/// deadline can be armed, and the waits that need one fail at once instead of waiting
/// unbounded).
fn timer() -> Result<&'static Timer, Status> {
    static T: OnceLock<Result<&'static Timer, String>> = OnceLock::new();
    T.get_or_init(|| {
        let t: &'static Timer =
            Box::leak(Box::new(Timer { state: Mutex::new(State::default()), wake: Condvar::new() }));
        std::thread::Builder::new()
            .name("ferroflow-timer".into())
            .spawn(move || t.run())
            .map(|_| t)
            .map_err(|e| e.to_string())
    })
    .clone()
    .map_err(|e| Status::resource_exhausted(format!("cannot start the ferroflow timer thread for op deadlines: {e}")))
}

impl Timer {
    fn run(&self) {
        let mut g = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let now = Instant::now();
            let due: Vec<Callback> = {
                let later = g.queue.split_off(&(now, u64::MAX));
                let due = std::mem::replace(&mut g.queue, later);
                due.into_iter()
                    .map(|((_, id), cb)| {
                        g.index.remove(&id);
                        cb
                    })
                    .collect()
            };
            if !due.is_empty() {
                drop(g);
                for cb in due {
                    cb();
                }
                g = self.state.lock().unwrap_or_else(|e| e.into_inner());
                continue;
            }
            g = match g.queue.keys().next().map(|(d, _)| *d) {
                Some(d) => {
                    self.wake.wait_timeout(g, d.saturating_duration_since(now)).unwrap_or_else(|e| e.into_inner()).0
                }
                None => self.wake.wait(g).unwrap_or_else(|e| e.into_inner()),
            };
        }
    }
}

/// Runs `cb` at `deadline` (at once, on the timer thread, if it has passed). Returns an id
/// for [`cancel`], or the error of a timer that could not start.
pub fn schedule(deadline: Instant, cb: impl FnOnce() + Send + 'static) -> Result<u64, Status> {
    let t = timer()?;
    let mut g = t.state.lock().unwrap_or_else(|e| e.into_inner());
    let id = g.next_id;
    g.next_id += 1;
    g.queue.insert((deadline, id), Box::new(cb));
    g.index.insert(id, deadline);
    drop(g);
    t.wake.notify_one();
    Ok(id)
}

/// Cancels a scheduled callback; returns whether it was still pending.
pub fn cancel(id: u64) -> bool {
    let Ok(t) = timer() else { return false };
    let mut g = t.state.lock().unwrap_or_else(|e| e.into_inner());
    match g.index.remove(&id) {
        Some(d) => g.queue.remove(&(d, id)).is_some(),
        None => false,
    }
}
