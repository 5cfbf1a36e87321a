//! The async runtime behind ferroflow's blocking clients ([`crate::GrpcSession`] and the
//! control helpers): one small process-wide runtime, so a blocking call works from any
//! thread, including one that belongs to another tokio runtime.

use std::future::Future;
use std::sync::OnceLock;

use ferroflow_core::Status;

fn runtime() -> Result<&'static tokio::runtime::Runtime, Status> {
    static RT: OnceLock<Result<tokio::runtime::Runtime, String>> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
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
