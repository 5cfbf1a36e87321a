//! Idle connections: a connection is busy while one of its requests is being answered
//! and for a moment after any transfer of more than a few bytes (keepalive pings and
//! window updates do not count); otherwise it is idle. The task closes a connection idle
//! for longer than its idle timeout (`--connection_idle_seconds`), and when every
//! connection slot is taken it closes the connection idle the longest, so that a peer
//! holding connections open and quiet cannot lock new clients out. A gRPC client whose
//! connection was closed while idle reconnects on its next call.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::Context;
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// Default idle timeout of a connection.
pub const DEFAULT_CONNECTION_IDLE: Duration = Duration::from_secs(600);

/// At the connection cap, only a connection idle at least this long is closed for a new one.
pub(crate) const EVICT_MIN_IDLE: Duration = Duration::from_secs(1);

/// A read or write of at most this many bytes is not activity (an HTTP/2 PING is 17 bytes,
/// a WINDOW_UPDATE 13, a SETTINGS acknowledgement 9).
const CONTROL_FRAME_BYTES: usize = 32;

/// One connection's activity, shared by its byte stream, its requests and the registry.
#[derive(Debug)]
pub(crate) struct ConnActivity {
    epoch: Instant,
    in_flight: AtomicUsize,
    /// Milliseconds since `epoch` of the last activity.
    last_ms: AtomicU64,
    close: Arc<Notify>,
}

impl ConnActivity {
    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// Marks activity: `bytes` were read or written.
    pub(crate) fn transferred(&self, bytes: usize) {
        if bytes > CONTROL_FRAME_BYTES {
            self.last_ms.store(self.now_ms(), Ordering::Relaxed);
        }
    }

    /// A request began; it counts until the guard is dropped.
    pub(crate) fn begin(self: &Arc<Self>) -> RequestGuard {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        RequestGuard(self.clone())
    }

    /// How long the connection has been idle (None: a request is being answered).
    pub(crate) fn idle_for(&self) -> Option<Duration> {
        if self.in_flight.load(Ordering::Relaxed) > 0 {
            return None;
        }
        Some(Duration::from_millis(self.now_ms().saturating_sub(self.last_ms.load(Ordering::Relaxed))))
    }

    /// A future that ends when the connection is asked to close.
    pub(crate) fn closer(&self) -> Pin<Box<dyn Future<Output = ()> + Send + Sync>> {
        let n = self.close.clone();
        Box::pin(async move { n.notified().await })
    }
}

/// Counts one request of a connection while it lives.
pub(crate) struct RequestGuard(Arc<ConnActivity>);

impl Drop for RequestGuard {
    fn drop(&mut self) {
        self.0.last_ms.store(self.0.now_ms(), Ordering::Relaxed);
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The live connections of a task's listener.
#[derive(Default)]
pub(crate) struct ConnRegistry {
    live: Mutex<Vec<Weak<ConnActivity>>>,
}

impl ConnRegistry {
    /// The activity record of a new connection (active now).
    pub(crate) fn register(&self) -> Arc<ConnActivity> {
        let a = Arc::new(ConnActivity {
            epoch: Instant::now(),
            in_flight: AtomicUsize::new(0),
            last_ms: AtomicU64::new(0),
            close: Arc::new(Notify::new()),
        });
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        if live.len() >= 64 && live.len().is_power_of_two() {
            live.retain(|w| w.strong_count() > 0);
        }
        live.push(Arc::downgrade(&a));
        a
    }

    /// Live connections with how long each has been idle (None: busy).
    fn idle_times(&self) -> Vec<(Arc<ConnActivity>, Option<Duration>)> {
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        live.retain(|w| w.strong_count() > 0);
        live.iter().filter_map(Weak::upgrade).map(|a| (a.clone(), a.idle_for())).collect()
    }

    /// Asks every connection idle for at least `idle` to close; returns how many.
    pub(crate) fn close_idle(&self, idle: Duration) -> usize {
        let mut n = 0;
        for (a, t) in self.idle_times() {
            if t.is_some_and(|t| t >= idle) {
                a.close.notify_one();
                n += 1;
            }
        }
        n
    }

    /// Asks the connection idle the longest (at least `min_idle`) to close; whether one was.
    pub(crate) fn close_oldest_idle(&self, min_idle: Duration) -> bool {
        let oldest = self.idle_times().into_iter().filter_map(|(a, t)| Some((a, t?))).max_by_key(|(_, t)| *t);
        match oldest {
            Some((a, t)) if t >= min_idle => {
                a.close.notify_one();
                true
            }
            _ => false,
        }
    }
}

/// How a connection's reads see a request to close: once asked, a read that would wait
/// ends the connection if it is still idle; if a request came in meanwhile, it carries on.
pub(crate) struct IdleWatch {
    activity: Arc<ConnActivity>,
    closer: Pin<Box<dyn Future<Output = ()> + Send + Sync>>,
}

impl IdleWatch {
    pub(crate) fn new(activity: Arc<ConnActivity>) -> IdleWatch {
        let closer = activity.closer();
        IdleWatch { activity, closer }
    }

    pub(crate) fn activity(&self) -> &Arc<ConnActivity> {
        &self.activity
    }

    /// Called when a read would wait: an error if the connection was asked to close and is idle.
    pub(crate) fn poll_closed(&mut self, cx: &mut Context<'_>) -> Option<std::io::Error> {
        if self.closer.as_mut().poll(cx).is_pending() {
            return None;
        }
        if self.activity.idle_for().is_some() {
            return Some(std::io::Error::new(std::io::ErrorKind::TimedOut, "connection closed: idle"));
        }
        // Busy again: wait for the next request to close.
        self.closer = self.activity.closer();
        let _ = self.closer.as_mut().poll(cx);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cx() -> Context<'static> {
        Context::from_waker(std::task::Waker::noop())
    }

    #[test]
    fn idle_connections_are_closed_and_busy_ones_kept() {
        let reg = ConnRegistry::default();
        let (a, b) = (reg.register(), reg.register());
        let (mut watch_a, mut watch_b) = (IdleWatch::new(a.clone()), IdleWatch::new(b.clone()));
        std::thread::sleep(Duration::from_millis(30));
        let guard = b.begin();
        assert!(b.idle_for().is_none(), "a request is being answered");
        // Pings and window updates do not make a connection busy.
        a.transferred(17);
        assert!(a.idle_for().unwrap() >= Duration::from_millis(30));
        assert_eq!(reg.close_idle(Duration::from_millis(20)), 1);
        assert!(watch_a.poll_closed(&mut cx()).is_some(), "asked to close while idle");
        assert!(watch_b.poll_closed(&mut cx()).is_none());
        // Bytes of a request count as activity.
        drop(guard);
        b.transferred(1000);
        assert!(b.idle_for().unwrap() < Duration::from_millis(20));
        assert_eq!(reg.close_idle(Duration::from_secs(3600)), 0);
        // Dropped connections leave the registry.
        drop((a, b, watch_a, watch_b));
        assert!(reg.idle_times().is_empty());
    }

    #[test]
    fn the_connection_idle_longest_is_closed_first() {
        let reg = ConnRegistry::default();
        let old = reg.register();
        std::thread::sleep(Duration::from_millis(20));
        let (newer, busy) = (reg.register(), reg.register());
        let _g = busy.begin();
        let watches: Vec<IdleWatch> = [&old, &newer, &busy].iter().map(|a| IdleWatch::new((*a).clone())).collect();
        assert!(!reg.close_oldest_idle(Duration::from_secs(3600)), "none idle that long");
        assert!(reg.close_oldest_idle(Duration::from_millis(10)));
        let closed: Vec<bool> = watches.into_iter().map(|mut w| w.poll_closed(&mut cx()).is_some()).collect();
        assert_eq!(closed, [true, false, false]);
    }

    #[test]
    fn a_request_that_races_the_close_keeps_the_connection() {
        let reg = ConnRegistry::default();
        let a = reg.register();
        let mut watch = IdleWatch::new(a.clone());
        assert!(reg.close_oldest_idle(Duration::ZERO));
        let _busy = a.begin();
        assert!(watch.poll_closed(&mut cx()).is_none(), "busy: kept");
        assert!(watch.poll_closed(&mut cx()).is_none(), "re-armed, not closed on the next read");
    }
}
