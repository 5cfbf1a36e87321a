//! Transfer pacing: a task's large tensor transfers cross its link one at a time in each
//! direction, in the order they became ready, instead of sharing the link.
//!
//! In TensorFlow's protocol the receiver pulls: a ps serves every worker's RecvTensor for the
//! weights and issues a RecvTensor to every worker for its gradient. When the link is the
//! limit, N transfers that share it (as TCP shares it) all finish late and together, so the
//! workers fall into step: all pull, then all push, and each direction of the ps's link idles
//! while the other is busy; gradients arriving together also overflow the queue in front of
//! the ps (incast). Served one at a time (first come, first served) each transfer finishes as
//! early as it can, the workers spread out over the cycle and both directions stay busy.
//!
//! Both sides are paced here: a response body over [`pace_bytes`] takes the task's outgoing
//! lease before it hands more bytes to HTTP/2 (which pulls a body only as its send buffer
//! drains, so the bytes leave at the link's pace), and a receiver takes the incoming lease
//! before it reads past the first [`pace_bytes`] of a response (the sender stops when the
//! stream's flow-control window, [`crate::rpc_util::STREAM_WINDOW_SIZE`], is used up). A
//! lease whose transfer makes no progress for [`STALL`] goes back to the end of the queue, so
//! a stalled peer (or two tasks each waiting on the other's lease) costs at most that long.
//! Small transfers are never paced. `ferroflow server --transfer_pacing_bytes 0` turns it off.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::sync::{AcquireError, OwnedSemaphorePermit, Semaphore};

/// Transfers of at least this many bytes are paced unless configured otherwise.
pub const DEFAULT_PACE_BYTES: usize = 1 << 20;

/// A lease whose transfer made no progress for this long is given up.
pub(crate) const STALL: Duration = Duration::from_millis(50);

/// A paced body yields its data in slices of at most this many bytes, so HTTP/2 takes them
/// as its send buffer drains rather than all at once.
pub(crate) const SLICE: usize = 256 << 10;

static PACE_BYTES: AtomicUsize = AtomicUsize::new(DEFAULT_PACE_BYTES);

/// Paces transfers of at least `min_bytes` from now on (0: pacing off). Process-wide: the
/// link it shares out is the host's.
pub fn set_pace_bytes(min_bytes: usize) {
    PACE_BYTES.store(min_bytes, Ordering::Relaxed);
}

/// The size from which transfers are paced, if pacing is on.
pub(crate) fn pace_bytes() -> Option<usize> {
    match PACE_BYTES.load(Ordering::Relaxed) {
        0 => None,
        n => Some(n),
    }
}

/// Which way a transfer crosses the task's link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Way {
    In,
    Out,
}

fn gate(way: Way) -> Arc<Semaphore> {
    static GATES: OnceLock<[Arc<Semaphore>; 2]> = OnceLock::new();
    let g = GATES.get_or_init(|| [Arc::new(Semaphore::new(1)), Arc::new(Semaphore::new(1))]);
    g[way as usize].clone()
}

/// Milliseconds since the first lease, for progress stamps.
fn now_ms() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_millis() as u64
}

struct LeaseState {
    permit: Mutex<Option<OwnedSemaphorePermit>>,
    progress_ms: AtomicU64,
}

impl LeaseState {
    fn release(&self) {
        if let Ok(mut p) = self.permit.lock() {
            p.take();
        }
    }

    fn held(&self) -> bool {
        self.permit.lock().map(|p| p.is_some()).unwrap_or(false)
    }
}

/// One transfer's turn on the link; released when dropped, or by its watchdog once the
/// transfer stalls for [`STALL`].
pub(crate) struct Lease {
    state: Arc<LeaseState>,
}

impl Lease {
    fn new(permit: OwnedSemaphorePermit) -> Lease {
        let state = Arc::new(LeaseState { permit: Mutex::new(Some(permit)), progress_ms: AtomicU64::new(now_ms()) });
        let watched = Arc::downgrade(&state);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(STALL / 2).await;
                let Some(s) = watched.upgrade() else { return };
                if !s.held() {
                    return;
                }
                if now_ms().saturating_sub(s.progress_ms.load(Ordering::Relaxed)) >= STALL.as_millis() as u64 {
                    tracing::trace!("a paced transfer stalled: its lease goes back to the queue");
                    s.release();
                    return;
                }
            }
        });
        Lease { state }
    }

    /// Notes that the transfer moved.
    pub(crate) fn touch(&self) {
        self.state.progress_ms.store(now_ms(), Ordering::Relaxed);
    }

    /// Whether the lease still holds the link (its watchdog may have given it up).
    pub(crate) fn held(&self) -> bool {
        self.state.held()
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.state.release();
    }
}

/// Waits for a lease at `gate` (first come, first served).
async fn lease_of(gate: Arc<Semaphore>) -> Option<Lease> {
    gate.acquire_owned().await.ok().map(Lease::new)
}

type Acquire = Pin<Box<dyn Future<Output = Result<OwnedSemaphorePermit, AcquireError>> + Send>>;

/// The pacing of one response body: [`OutPacer::poll_send`] before each slice of a large
/// transfer, [`OutPacer::idle`] when the body has nothing more ready.
#[derive(Default)]
pub(crate) struct OutPacer {
    lease: Option<Lease>,
    acquiring: Option<Acquire>,
    /// The gate it queues at: the task's outgoing one unless a test gives its own.
    gate: Option<Arc<Semaphore>>,
}

impl OutPacer {
    /// Ready when `queued` bytes (what the body holds ready, the next slice first) may start
    /// to go: at once for a transfer under the pacing size, else once this body holds the
    /// outgoing lease.
    pub(crate) fn poll_send(&mut self, cx: &mut Context<'_>, queued: usize) -> Poll<()> {
        if let Some(l) = &self.lease {
            if l.held() {
                l.touch();
                return Poll::Ready(());
            }
            self.lease = None;
        }
        match pace_bytes() {
            Some(min) if queued >= min => {}
            _ if self.acquiring.is_none() => return Poll::Ready(()),
            _ => {}
        }
        let g = self.gate.clone().unwrap_or_else(|| gate(Way::Out));
        let acquiring = self.acquiring.get_or_insert_with(|| Box::pin(g.acquire_owned()));
        match acquiring.as_mut().poll(cx) {
            Poll::Ready(r) => {
                self.acquiring = None;
                self.lease = r.ok().map(Lease::new);
                Poll::Ready(())
            }
            Poll::Pending => Poll::Pending,
        }
    }

    /// The body has sent all it had: its turn ends.
    pub(crate) fn idle(&mut self) {
        self.lease = None;
        self.acquiring = None;
    }
}

/// The slice of `b` to send next (at most [`SLICE`] bytes when pacing is on); `b` keeps the rest.
pub(crate) fn next_slice(b: &mut Bytes) -> Bytes {
    if pace_bytes().is_some() && b.len() > SLICE {
        b.split_to(SLICE)
    } else {
        std::mem::take(b)
    }
}

/// The pacing of one response being read: [`InPacer::before_read`] before each read,
/// [`InPacer::read`] after it, [`InPacer::message_done`] when a whole message arrived (the
/// next one is a transfer of its own).
#[derive(Default)]
pub(crate) struct InPacer {
    received: usize,
    lease: Option<Lease>,
    /// The gate it queues at: the task's incoming one unless a test gives its own.
    gate: Option<Arc<Semaphore>>,
}

impl InPacer {
    /// Returns at once while the message is under the pacing size or this read holds the
    /// incoming lease; else waits for the lease (at most until `deadline`: the read itself
    /// then reports the deadline).
    pub(crate) async fn before_read(&mut self, deadline: Instant) {
        let Some(min) = pace_bytes() else { return };
        if self.received < min || self.lease.as_ref().is_some_and(Lease::held) {
            return;
        }
        let g = self.gate.clone().unwrap_or_else(|| gate(Way::In));
        self.lease = tokio::time::timeout_at(deadline.into(), lease_of(g)).await.ok().flatten();
    }

    /// `n` more bytes arrived.
    pub(crate) fn read(&mut self, n: usize) {
        self.received += n;
        if let Some(l) = &self.lease {
            l.touch();
        }
    }

    pub(crate) fn message_done(&mut self) {
        self.received = 0;
        self.lease = None;
    }
}

/// A body's data waiting to go, paced: [`PacedQueue::poll_next`] yields it slice by slice,
/// a large transfer's slices only while the body holds the outgoing lease.
#[derive(Default)]
pub(crate) struct PacedQueue {
    parts: VecDeque<Bytes>,
    queued: usize,
    pacer: OutPacer,
}

impl PacedQueue {
    /// Queues `parts` (empty ones are dropped).
    pub(crate) fn extend(&mut self, parts: impl IntoIterator<Item = Bytes>) {
        for b in parts.into_iter().filter(|b| !b.is_empty()) {
            self.queued += b.len();
            self.parts.push_back(b);
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// The next slice once it may go; `None` when nothing is queued (the body's turn ends).
    pub(crate) fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        let Some(front) = self.parts.front_mut() else {
            self.pacer.idle();
            return Poll::Ready(None);
        };
        if self.pacer.poll_send(cx, self.queued).is_pending() {
            return Poll::Pending;
        }
        let slice = next_slice(front);
        if front.is_empty() {
            self.parts.pop_front();
        }
        self.queued -= slice.len();
        Poll::Ready(Some(slice))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Polls `f` once: whether it is still waiting.
    fn pending<F: Future + Unpin>(f: &mut F) -> bool {
        Pin::new(f).poll(&mut Context::from_waker(std::task::Waker::noop())).is_pending()
    }

    #[tokio::test(flavor = "current_thread")]
    async fn leases_are_first_come_first_served_and_a_stalled_one_is_given_up() {
        let gate = Arc::new(Semaphore::new(1));
        let first = lease_of(gate.clone()).await.expect("a lease");
        let mut second = Box::pin(lease_of(gate.clone()));
        let mut third = Box::pin(lease_of(gate.clone()));
        // The second waits while the first moves.
        for _ in 0..4 {
            first.touch();
            assert!(pending(&mut second));
            assert!(pending(&mut third));
            tokio::time::sleep(STALL / 4).await;
        }
        assert!(first.held());
        // The first stalls: its watchdog gives the link to the second, the first in line.
        tokio::time::sleep(STALL * 3).await;
        assert!(!first.held());
        let second = second.await.expect("lease");
        assert!(second.held());
        assert!(pending(&mut third));
        drop(first);
        assert!(second.held(), "dropping a lease given up does not free another's");
        assert!(pending(&mut third));
        drop(second);
        assert!(third.await.expect("lease").held());
    }

    fn queue(bytes: usize, gate: &Arc<Semaphore>) -> PacedQueue {
        let mut q = PacedQueue::default();
        q.pacer.gate = Some(gate.clone());
        q.extend([Bytes::from(vec![1u8; bytes])]);
        q
    }

    /// Polls `q` once; the slice's length if it gave one.
    fn poll_once(q: &mut PacedQueue) -> Poll<Option<usize>> {
        q.poll_next(&mut Context::from_waker(std::task::Waker::noop())).map(|b| b.map(|b| b.len()))
    }

    #[tokio::test(flavor = "current_thread")]
    async fn large_bodies_send_one_at_a_time_in_turn_small_ones_at_once() {
        let gate = Arc::new(Semaphore::new(1));
        let big = 3 * DEFAULT_PACE_BYTES;
        let (mut a, mut b) = (queue(big, &gate), queue(big, &gate));
        let mut small = queue(DEFAULT_PACE_BYTES / 4, &gate);
        assert_eq!(poll_once(&mut a), Poll::Ready(Some(SLICE)), "the first large body takes the lease");
        assert_eq!(poll_once(&mut b), Poll::Pending, "the second waits its turn");
        assert_eq!(poll_once(&mut small), Poll::Ready(Some(SLICE)), "a small body is not paced");
        let mut sent = SLICE;
        while let Poll::Ready(Some(n)) = poll_once(&mut a) {
            sent += n;
            assert_eq!(poll_once(&mut b), Poll::Pending, "b waits while a has bytes to send");
        }
        assert_eq!(sent, big, "a sent all it had, none lost");
        assert_eq!(poll_once(&mut b), Poll::Ready(Some(SLICE)), "a's turn ended when it ran dry");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_receiver_reads_past_the_pacing_size_only_with_the_lease() {
        let gate = Arc::new(Semaphore::new(1));
        let far = Instant::now() + Duration::from_secs(30);
        let mut first = InPacer { gate: Some(gate.clone()), ..Default::default() };
        let mut second = InPacer { gate: Some(gate.clone()), ..Default::default() };
        first.read(DEFAULT_PACE_BYTES);
        first.before_read(far).await;
        assert!(first.lease.as_ref().is_some_and(Lease::held));
        second.read(DEFAULT_PACE_BYTES - 1);
        second.before_read(far).await; // under the pacing size: no wait
        assert!(second.lease.is_none());
        second.read(1);
        let soon = Instant::now() + STALL / 5;
        second.before_read(soon).await; // the first holds the lease and moves: the wait ends at the deadline
        assert!(second.lease.is_none());
        first.read(0);
        first.message_done();
        second.before_read(far).await;
        assert!(second.lease.as_ref().is_some_and(Lease::held), "the turn passed when the first message was done");
    }

    #[test]
    fn slices_are_bounded_and_lose_nothing() {
        let mut b = Bytes::from(vec![7u8; SLICE * 2 + 5]);
        let mut total = 0;
        while !b.is_empty() {
            let s = next_slice(&mut b);
            assert!(s.len() <= SLICE);
            total += s.len();
        }
        assert_eq!(total, SLICE * 2 + 5);
    }
}
