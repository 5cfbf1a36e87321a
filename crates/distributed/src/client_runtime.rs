//! The async runtime behind ferroflow's blocking clients ([`crate::GrpcSession`] and the
//! control helpers): one process-wide single-threaded runtime that the calling thread
//! drives itself. A blocking call runs its future, and the connection's I/O, on the
//! caller's own thread, so a reply is read by the thread that waits for it: no hand-off to
//! a runtime thread and back (on a VM each such wake-up of an idle CPU costs tens of
//! microseconds, a sizeable share of a small step). Calls from several threads at once
//! take turns driving the runtime; a call made from inside another tokio runtime (where
//! blocking the thread on a runtime is not allowed) is driven by a short-lived helper
//! thread instead.

use std::cell::Cell;
use std::future::Future;
use std::sync::OnceLock;

use ferroflow_core::Status;

fn runtime() -> Result<&'static tokio::runtime::Runtime, Status> {
    static RT: OnceLock<Result<tokio::runtime::Runtime, String>> = OnceLock::new();
    RT.get_or_init(|| tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| Status::internal(format!("cannot start the client runtime: {e}")))
}

thread_local! {
    /// Set while this thread drives the client runtime (its tasks run inside that scope).
    static DRIVING: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` on the client runtime and waits for it.
pub(crate) fn block_on<T: Send + 'static>(
    f: impl Future<Output = Result<T, Status>> + Send + 'static,
) -> Result<T, Status> {
    let rt = runtime()?;
    if DRIVING.with(|d| d.get()) {
        // Blocking here would wait for the very runtime this thread is driving.
        return Err(Status::failed_precondition(
            "a blocking ferroflow client call was made from a task of the client runtime itself",
        ));
    }
    let drive = move || {
        struct Driving;
        impl Drop for Driving {
            fn drop(&mut self) {
                DRIVING.with(|d| d.set(false));
            }
        }
        DRIVING.with(|d| d.set(true));
        let _g = Driving;
        rt.block_on(f)
    };
    if tokio::runtime::Handle::try_current().is_ok() {
        return std::thread::scope(|s| s.spawn(drive).join())
            .unwrap_or_else(|_| Err(Status::internal("a client call panicked on its helper thread")));
    }
    drive()
}

/// Runs `f` inside the client runtime's context (to create lazy channels).
pub(crate) fn enter<T>(f: impl FnOnce() -> T) -> Result<T, Status> {
    let _g = runtime()?.enter();
    Ok(f())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_work_from_plain_threads_concurrently_and_from_inside_a_runtime() {
        // Several threads at once take turns driving the runtime.
        let handles: Vec<_> = (0..4)
            .map(|i| {
                std::thread::spawn(move || {
                    block_on(async move {
                        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                        Ok(i)
                    })
                })
            })
            .collect();
        let got: Vec<i32> = handles.into_iter().map(|h| h.join().unwrap().unwrap()).collect();
        assert_eq!(got, vec![0, 1, 2, 3]);
        // From inside another runtime: a helper thread drives the call.
        let other = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let r = other.block_on(async { block_on(async { Ok(7) }) });
        assert_eq!(r.unwrap(), 7);
        // From a task of the client runtime itself: an error, not a deadlock.
        let r = block_on(async { Ok(block_on(async { Ok(1) })) }).unwrap();
        assert_eq!(r.unwrap_err().code, ferroflow_core::Code::FailedPrecondition);
    }
}
