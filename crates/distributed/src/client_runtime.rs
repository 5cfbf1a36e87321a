//! The async runtime behind ferroflow's blocking clients ([`crate::GrpcSession`] and the
//! control helpers): one small process-wide runtime, so a blocking call works from any
//! thread, including one that belongs to another tokio runtime.

use std::future::Future;
use std::sync::OnceLock;

use ferroflow_core::Status;

/// The number of async (gRPC) threads of a server's or the client's runtime:
/// `FERROFLOW_ASYNC_THREADS` if set to a positive number, else 1 on a machine of at most 2
/// CPUs and 2 on a larger one. Kernels run on the compute pool, not on these threads, so one
/// is enough for the I/O of a small machine; and with two, every call that arrives from
/// outside the runtime (a client's request, a reply's wake-up) is handed from the thread
/// that polled the socket to the other one: ~35-40 µs more per RPC hop on a 2-CPU VM
/// (interleaved A/B), with the same training throughput at 2 and 8 workers.
pub(crate) fn async_threads() -> usize {
    let env = std::env::var("FERROFLOW_ASYNC_THREADS").ok().and_then(|v| v.trim().parse().ok()).filter(|&n| n > 0);
    env.unwrap_or_else(|| {
        let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        if cpus <= 2 {
            1
        } else {
            2
        }
    })
}

fn runtime() -> Result<&'static tokio::runtime::Runtime, Status> {
    static RT: OnceLock<Result<tokio::runtime::Runtime, String>> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(async_threads())
            .thread_name("ferroflow-client")
            .enable_all()
            .build()
            .map_err(|e| e.to_string())
    })
    .as_ref()
    .map_err(|e| Status::internal(format!("cannot start the client runtime: {e}")))
}

/// Runs `f` on the client runtime and waits for it.
pub(crate) fn block_on<T: Send + 'static>(
    f: impl Future<Output = Result<T, Status>> + Send + 'static,
) -> Result<T, Status> {
    let rt = runtime()?;
    let (tx, rx) = std::sync::mpsc::channel();
    rt.spawn(async move {
        let _ = tx.send(f.await);
    });
    rx.recv().unwrap_or_else(|_| Err(Status::internal("the client runtime dropped a call")))
}

/// Runs `f` inside the client runtime's context (to create lazy channels).
pub(crate) fn enter<T>(f: impl FnOnce() -> T) -> Result<T, Status> {
    let _g = runtime()?.enter();
    Ok(f())
}
