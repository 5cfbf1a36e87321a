//! In-process masters (TensorFlow's `LocalMaster`): a [`crate::GrpcSession`] whose target
//! is a [`crate::Server`] of this same process calls that server's master directly
//! instead of going through HTTP/2 on loopback. This is the between-graph trainer's case:
//! each worker process runs its own server and its client targets it, so every step's
//! feeds (a batch of images) and fetches skip protobuf encoding, two socket copies and
//! decoding. The master and its steps are the same either way: deadlines, errors and
//! cancellation behave as over gRPC.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock, Weak};

use ferroflow_core::Status;

use crate::master::Master;
use crate::server::ServerShared;

/// A registered in-process server: its master and the runtime its steps run on.
#[derive(Clone)]
pub(crate) struct LocalMaster {
    shared: Weak<ServerShared>,
    rt: tokio::runtime::Handle,
}

thread_local! {
    static ON_CLIENT_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether this thread is a client's, running a step through [`LocalMaster::run_here`]:
/// the thread waits for the step anyway, so the local partition's executor may start on
/// it instead of on a blocking-pool thread (one thread hop less per step).
pub(crate) fn on_client_thread() -> bool {
    ON_CLIENT_THREAD.with(|c| c.get())
}

fn registry() -> &'static Mutex<HashMap<String, LocalMaster>> {
    static R: OnceLock<Mutex<HashMap<String, LocalMaster>>> = OnceLock::new();
    R.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Makes the server reachable in-process under `addr` (`host:port`, its target).
pub(crate) fn register(addr: &str, shared: &Arc<ServerShared>, rt: tokio::runtime::Handle) {
    let lm = LocalMaster { shared: Arc::downgrade(shared), rt };
    registry().lock().unwrap_or_else(|e| e.into_inner()).insert(addr.to_string(), lm);
}

/// Removes `addr` (the server is shutting down: later sessions use gRPC and get its
/// real answer, Unavailable once the port is closed).
pub(crate) fn unregister(addr: &str) {
    registry().lock().unwrap_or_else(|e| e.into_inner()).remove(addr);
}

/// The in-process server at `addr` (`host:port`), if any.
pub(crate) fn lookup(addr: &str) -> Option<LocalMaster> {
    registry().lock().unwrap_or_else(|e| e.into_inner()).get(addr).cloned()
}

impl LocalMaster {
    /// The master, unless the server is gone or shutting down (the caller then uses
    /// gRPC and gets the server's real answer). Counts as activity for the idle timeout.
    pub(crate) fn master(&self) -> Option<Arc<Master>> {
        let shared = self.shared.upgrade()?;
        if shared.is_shutting_down() {
            return None;
        }
        shared.touch();
        Some(shared.master.clone())
    }

    /// The server, unless it is gone or shutting down.
    pub(crate) fn server(&self) -> Option<Arc<ServerShared>> {
        self.shared.upgrade().filter(|s| !s.is_shutting_down())
    }

    /// Whether [`LocalMaster::run_here`] may be called: not on a thread that belongs to a
    /// runtime (blocking it there could deadlock; such callers use [`LocalMaster::spawn`]).
    pub(crate) fn can_run_here() -> bool {
        tokio::runtime::Handle::try_current().is_err()
    }

    /// Runs `fut` to completion on the calling thread, inside the server's runtime (the
    /// tasks it spawns run on the server's threads). A step run this way skips two thread
    /// hops each way: the server task that would run it and the client task that would
    /// wait for it. Only where [`LocalMaster::can_run_here`]. If the server's runtime goes
    /// away during the step (its `Server` dropped by another thread), tokio's timers panic;
    /// that is reported as Unavailable, not passed on to the caller.
    pub(crate) fn run_here<F: Future>(&self, fut: F) -> Result<F::Output, Status> {
        struct Reset(bool);
        impl Drop for Reset {
            fn drop(&mut self) {
                ON_CLIENT_THREAD.with(|c| c.set(self.0));
            }
        }
        let _reset = Reset(ON_CLIENT_THREAD.with(|c| c.replace(true)));
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.rt.block_on(fut))).map_err(|p| {
            let why = p.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| p.downcast_ref::<String>().cloned());
            Status::unavailable(format!(
                "the in-process step failed inside its server's runtime (was the server dropped during it?): {}",
                why.unwrap_or_default()
            ))
        })
    }

    /// Runs `fut` on the server's runtime. The returned handle aborts the call when dropped
    /// before it finished (so a cancelled or timed-out client step is dropped by the
    /// master, as when a gRPC call is dropped).
    pub(crate) fn spawn<T: Send + 'static>(
        &self,
        fut: impl Future<Output = Result<T, Status>> + Send + 'static,
    ) -> AbortTaskOnDrop<Result<T, Status>> {
        AbortTaskOnDrop(Some(self.rt.spawn(fut)))
    }
}

/// A task handle that aborts the task when dropped unfinished.
pub(crate) struct AbortTaskOnDrop<T>(Option<tokio::task::JoinHandle<T>>);

impl<T> Future for AbortTaskOnDrop<Result<T, Status>> {
    type Output = Result<T, Status>;

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<Self::Output> {
        let Some(h) = self.0.as_mut() else {
            return std::task::Poll::Ready(Err(Status::internal("in-process master call polled after completion")));
        };
        match std::pin::Pin::new(h).poll(cx) {
            std::task::Poll::Pending => std::task::Poll::Pending,
            std::task::Poll::Ready(r) => {
                self.0 = None;
                std::task::Poll::Ready(
                    r.unwrap_or_else(|e| Err(Status::internal(format!("the in-process master's task failed: {e}")))),
                )
            }
        }
    }
}

impl<T> Drop for AbortTaskOnDrop<T> {
    fn drop(&mut self) {
        if let Some(h) = self.0.take() {
            h.abort();
        }
    }
}
