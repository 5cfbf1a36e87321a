//! The data threads: `IteratorGetNext` and `OneShotIterator` hand their work here instead
//! of running it on the compute pool, because an input pipeline blocks while it waits for
//! map functions (which need the compute pool) and prefetching threads. Threads start on
//! demand (as many as calls ever waited at once) and stay.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, OnceLock};

use ferroflow_core::Status;

type Job = Box<dyn FnOnce() + Send>;

struct Pool {
    tx: Mutex<Sender<Job>>,
    rx: Arc<Mutex<Receiver<Job>>>,
    idle: AtomicUsize,
    threads: AtomicUsize,
}

/// Most data threads alive at once.
const MAX_THREADS: usize = 256;

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| {
        let (tx, rx) = mpsc::channel();
        Pool {
            tx: Mutex::new(tx),
            rx: Arc::new(Mutex::new(rx)),
            idle: AtomicUsize::new(0),
            threads: AtomicUsize::new(0),
        }
    })
}

fn worker(p: &'static Pool) {
    // A thread starts reserved for the job that made it; after each job it is idle again.
    loop {
        let job = p.rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
        match job {
            Ok(job) => job(),
            Err(_) => return,
        }
        p.idle.fetch_add(1, Ordering::SeqCst);
    }
}

/// Reserves an idle thread for one job; false when none is idle.
fn reserve_idle(p: &Pool) -> bool {
    let mut i = p.idle.load(Ordering::SeqCst);
    while i > 0 {
        match p.idle.compare_exchange(i, i - 1, Ordering::SeqCst, Ordering::SeqCst) {
            Ok(_) => return true,
            Err(now) => i = now,
        }
    }
    false
}

/// Runs `job` on a data thread: an idle one, else a new one (at most [`MAX_THREADS`]; past
/// that the job waits for a thread to finish).
pub(crate) fn spawn(job: impl FnOnce() + Send + 'static) -> Result<(), Status> {
    let p = pool();
    if !reserve_idle(p) && p.threads.load(Ordering::SeqCst) < MAX_THREADS {
        p.threads.fetch_add(1, Ordering::SeqCst);
        if let Err(e) = std::thread::Builder::new().name("ferroflow-data".into()).spawn(move || worker(p)) {
            if p.threads.fetch_sub(1, Ordering::SeqCst) == 1 {
                return Err(Status::resource_exhausted(format!("cannot start a data thread: {e}")));
            }
        }
    }
    p.tx.lock()
        .unwrap_or_else(|e| e.into_inner())
        .send(Box::new(job))
        .map_err(|_| Status::internal("the data thread pool has stopped"))
}

/// Runs an async kernel's work `job(ctx, done)` on a data thread. If no data thread can take
/// it, `done` gets the error here: the step never waits for a job that will not run.
pub(crate) fn spawn_kernel(
    ctx: ferroflow_kernels::OpContext,
    done: ferroflow_kernels::DoneCallback,
    job: impl FnOnce(ferroflow_kernels::OpContext, ferroflow_kernels::DoneCallback) + Send + 'static,
) {
    let slot = Arc::new(Mutex::new(Some((ctx, done))));
    let taken = slot.clone();
    let r = spawn(move || {
        if let Some((ctx, done)) = taken.lock().unwrap_or_else(|e| e.into_inner()).take() {
            job(ctx, done)
        }
    });
    if let Err(e) = r {
        if let Some((ctx, done)) = slot.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let e = super::dataset::in_node(e, &ctx.node().name);
            done(ctx, Err(e));
        }
    }
}
