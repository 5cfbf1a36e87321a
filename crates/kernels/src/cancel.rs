//! Step cancellation: a token that kernels and waits observe.

use std::sync::{Arc, Mutex};

use ferroflow_core::Status;

type Callback = Box<dyn FnOnce(&Status) + Send>;

#[derive(Default)]
struct Inner {
    status: Option<Status>,
    callbacks: Vec<(u64, Callback)>,
    next_id: u64,
}

/// Cancellation shared by everything a step runs. Cancelling runs the registered callbacks
/// once (outside the lock) and records the reason.
#[derive(Clone, Default)]
pub struct CancelToken(Arc<Mutex<Inner>>);

impl std::fmt::Debug for CancelToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancelToken").field("cancelled", &self.status()).finish()
    }
}

impl CancelToken {
    /// A fresh token.
    pub fn new() -> CancelToken {
        CancelToken::default()
    }

    /// Cancels with a reason; later calls are ignored.
    pub fn cancel(&self, status: Status) {
        let cbs = {
            let mut g = self.0.lock().unwrap_or_else(|e| e.into_inner());
            if g.status.is_some() {
                return;
            }
            g.status = Some(status.clone());
            std::mem::take(&mut g.callbacks)
        };
        for (_, cb) in cbs {
            cb(&status);
        }
    }

    /// The reason, if cancelled.
    pub fn status(&self) -> Option<Status> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).status.clone()
    }

    /// Whether cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.status().is_some()
    }

    /// Registers a callback run on cancellation. Returns `None` (and does not call it) if
    /// already cancelled; otherwise an id for [`CancelToken::deregister`].
    pub fn register(&self, cb: impl FnOnce(&Status) + Send + 'static) -> Option<u64> {
        let mut g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if g.status.is_some() {
            return None;
        }
        let id = g.next_id;
        g.next_id += 1;
        g.callbacks.push((id, Box::new(cb)));
        Some(id)
    }

    /// Removes a callback.
    pub fn deregister(&self, id: u64) {
        let mut g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        g.callbacks.retain(|(i, _)| *i != id);
    }
}
