//! The master's open sessions: a cap on how many it holds (`--max_sessions`), the time each
//! was last used, and the expiry of idle ones (`--session_gc_seconds`, TensorFlow's
//! `session_gc_seconds`, off by default as in TensorFlow), plus the handles of recently
//! closed sessions so that a late call on one is told it was closed (and why) rather than
//! that it never existed.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ferroflow_core::Status;

use super::session::MasterSession;

/// Closed session handles remembered.
const MAX_CLOSED: usize = 1024;

/// Default most sessions one master holds open.
pub const DEFAULT_MAX_SESSIONS: usize = 4096;

struct Entry {
    session: Arc<MasterSession>,
    last_used: Instant,
}

#[derive(Default)]
struct Inner {
    open: HashMap<String, Entry>,
    /// Recently closed handles and why they went (None: CloseSession or Reset).
    closed: VecDeque<(String, Option<String>)>,
}

/// See the module docs.
pub(crate) struct SessionTable {
    inner: Mutex<Inner>,
    max: usize,
}

impl SessionTable {
    pub(crate) fn new(max: usize) -> SessionTable {
        SessionTable { inner: Mutex::new(Inner::default()), max: max.max(1) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn len(&self) -> usize {
        self.lock().open.len()
    }

    /// RESOURCE_EXHAUSTED when the master already holds its most sessions (checked before
    /// a CreateSession does any work).
    pub(crate) fn check_room(&self, task: &str) -> Result<(), Status> {
        let n = self.len();
        if n >= self.max {
            return Err(Status::resource_exhausted(format!(
                "CreateSession: the master of {task} already holds {n} open sessions, its limit (ferroflow server \
                 --max_sessions, or --session_gc_seconds to close idle ones); close sessions you no longer use \
                 (Session.close())"
            )));
        }
        Ok(())
    }

    pub(crate) fn insert(&self, handle: String, session: Arc<MasterSession>) {
        self.lock().open.insert(handle, Entry { session, last_used: Instant::now() });
    }

    /// The open session `handle` (marked as used now); a closed one is FAILED_PRECONDITION
    /// saying why, an unknown one ABORTED, as TensorFlow answers.
    pub(crate) fn get(&self, handle: &str) -> Result<Arc<MasterSession>, Status> {
        let mut inner = self.lock();
        if let Some(e) = inner.open.get_mut(handle) {
            e.last_used = Instant::now();
            return Ok(e.session.clone());
        }
        match inner.closed.iter().find(|(h, _)| h == handle) {
            Some((_, None)) => Err(Status::failed_precondition(format!("Session {handle} has been closed."))),
            Some((_, Some(why))) => {
                Err(Status::failed_precondition(format!("Session {handle} has been closed: {why}")))
            }
            None => Err(Status::aborted(format!("Session {handle} is not found."))),
        }
    }

    fn remember(inner: &mut Inner, handle: String, why: Option<String>) {
        inner.closed.push_back((handle, why));
        if inner.closed.len() > MAX_CLOSED {
            inner.closed.pop_front();
        }
    }

    /// Removes `handle` (CloseSession), remembering it as closed.
    pub(crate) fn remove(&self, handle: &str) -> Option<Arc<MasterSession>> {
        let mut inner = self.lock();
        let e = inner.open.remove(handle)?;
        Self::remember(&mut inner, handle.to_string(), None);
        Some(e.session)
    }

    /// Removes every session (Reset).
    pub(crate) fn drain(&self) -> Vec<Arc<MasterSession>> {
        let mut inner = self.lock();
        let all: Vec<(String, Entry)> = inner.open.drain().collect();
        all.into_iter()
            .map(|(h, e)| {
                Self::remember(&mut inner, h, None);
                e.session
            })
            .collect()
    }

    /// Removes the sessions unused for `idle` and not running a step (nobody else holds
    /// them), remembering why they were closed.
    pub(crate) fn expire(&self, idle: Duration) -> Vec<Arc<MasterSession>> {
        let mut inner = self.lock();
        let now = Instant::now();
        let old: Vec<String> = inner
            .open
            .iter()
            .filter(|(_, e)| now.duration_since(e.last_used) >= idle && Arc::strong_count(&e.session) == 1)
            .map(|(h, _)| h.clone())
            .collect();
        let mut out = Vec::with_capacity(old.len());
        for h in old {
            if let Some(e) = inner.open.remove(&h) {
                let why = format!(
                    "it was not used for {} s (ferroflow server --session_gc_seconds {})",
                    idle.as_secs_f64(),
                    idle.as_secs_f64()
                );
                Self::remember(&mut inner, h, Some(why));
                out.push(e.session);
            }
        }
        out
    }
}
