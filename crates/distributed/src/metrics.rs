//! The distributed runtime's Prometheus metrics, recorded through the `metrics` facade:
//! without an installed recorder (the `ferroflow` binary installs one for
//! `--metrics_port`) every call is a no-op. Names follow Prometheus' conventions
//! (`_total` counters, `_seconds` histograms, `_bytes`); label values are bounded (method
//! and code names from fixed lists, at most [`MAX_SESSION_LABELS`] sessions and
//! [`MAX_PEER_LABELS`] peers, the rest under `other`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use metrics::{Counter, Gauge, Histogram};

/// Steps run by this task's master, by session (successful RunStep calls).
pub const STEPS_TOTAL: &str = "ferroflow_steps_total";
/// Latency of those steps, by session.
pub const STEP_SECONDS: &str = "ferroflow_step_duration_seconds";
/// RPCs served, by method and TensorFlow status code name.
pub const RPC_REQUESTS_TOTAL: &str = "ferroflow_rpc_server_requests_total";
/// Latency of the RPCs served (until the response's last byte), by method.
pub const RPC_SECONDS: &str = "ferroflow_rpc_server_duration_seconds";
/// Bytes this task sent to a peer task in the requests of its RunStep, RunGraph and
/// RecvTensor calls, by peer address.
pub const PEER_SENT_BYTES: &str = "ferroflow_peer_sent_bytes_total";
/// Bytes this task received from a peer task in the responses of those calls.
pub const PEER_RECEIVED_BYTES: &str = "ferroflow_peer_received_bytes_total";
/// Open master sessions.
pub const SESSIONS: &str = "ferroflow_sessions";
/// Open worker sessions.
pub const WORKER_SESSIONS: &str = "ferroflow_worker_sessions";
/// Graphs registered with this task's worker.
pub const REGISTERED_GRAPHS: &str = "ferroflow_registered_graphs";

/// Distinct session label values; later sessions are counted under `other`.
pub const MAX_SESSION_LABELS: usize = 256;
/// Distinct peer label values; later peers are counted under `other`.
pub const MAX_PEER_LABELS: usize = 256;

/// Histogram buckets (seconds) for every `_seconds` metric: 100 µs to 60 s.
pub const LATENCY_BUCKETS: &[f64] = &[
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];

/// Every metric name this crate records (the dashboard test checks against it).
pub const NAMES: &[&str] = &[
    STEPS_TOTAL,
    STEP_SECONDS,
    RPC_REQUESTS_TOTAL,
    RPC_SECONDS,
    PEER_SENT_BYTES,
    PEER_RECEIVED_BYTES,
    SESSIONS,
    WORKER_SESSIONS,
    REGISTERED_GRAPHS,
];

/// Gives every metric of this crate its help text and unit (call after installing a
/// recorder).
pub fn describe() {
    use metrics::{describe_counter, describe_gauge, describe_histogram, Unit};
    describe_counter!(STEPS_TOTAL, Unit::Count, "Steps (successful RunStep calls) run by this task's master");
    describe_histogram!(STEP_SECONDS, Unit::Seconds, "Latency of the steps run by this task's master");
    describe_counter!(RPC_REQUESTS_TOTAL, Unit::Count, "RPCs served by this task, by method and status code");
    describe_histogram!(RPC_SECONDS, Unit::Seconds, "Latency of the RPCs served by this task, by method");
    describe_counter!(PEER_SENT_BYTES, Unit::Bytes, "Bytes sent to a peer task in RunStep/RunGraph/RecvTensor calls");
    describe_counter!(PEER_RECEIVED_BYTES, Unit::Bytes, "Bytes received from a peer task in those calls");
    describe_gauge!(SESSIONS, Unit::Count, "Open master sessions of this task");
    describe_gauge!(WORKER_SESSIONS, Unit::Count, "Open worker sessions of this task");
    describe_gauge!(REGISTERED_GRAPHS, Unit::Count, "Graphs registered with this task's worker");
}

/// A share of a gauge held by one object (a session, a session's graphs): what it added
/// is taken back when it drops, so the gauge counts live objects whatever path drops them.
pub(crate) struct GaugeShare {
    gauge: Gauge,
    held: AtomicI64,
}

impl GaugeShare {
    /// A share of `name` holding `n`.
    pub(crate) fn new(name: &'static str, n: i64) -> GaugeShare {
        let share = GaugeShare { gauge: metrics::gauge!(name), held: AtomicI64::new(0) };
        share.add(n);
        share
    }

    /// Adds `n` (negative: takes back).
    pub(crate) fn add(&self, n: i64) {
        if n != 0 {
            self.held.fetch_add(n, Ordering::Relaxed);
            self.gauge.increment(n as f64);
        }
    }
}

impl Drop for GaugeShare {
    fn drop(&mut self) {
        let n = self.held.swap(0, Ordering::Relaxed);
        if n != 0 {
            self.gauge.decrement(n as f64);
        }
    }
}

/// A session's step metrics, made once per session.
pub(crate) struct SessionMetrics {
    steps: Counter,
    latency: Histogram,
    _open: GaugeShare,
}

static SESSION_LABELS: AtomicUsize = AtomicUsize::new(0);

impl SessionMetrics {
    /// The metrics of session `handle` (`other` past [`MAX_SESSION_LABELS`] sessions); it
    /// counts as open until dropped.
    pub(crate) fn new(handle: &str) -> SessionMetrics {
        let label = if SESSION_LABELS.fetch_add(1, Ordering::Relaxed) < MAX_SESSION_LABELS { handle } else { "other" };
        SessionMetrics {
            steps: metrics::counter!(STEPS_TOTAL, "session" => label.to_string()),
            latency: metrics::histogram!(STEP_SECONDS, "session" => label.to_string()),
            _open: GaugeShare::new(SESSIONS, 1),
        }
    }

    /// Records one successful step that took `took`.
    pub(crate) fn step(&self, took: Duration) {
        self.steps.increment(1);
        self.latency.record(took.as_secs_f64());
    }
}

/// The byte counters of one peer (cheap to clone; the default counts nothing).
#[derive(Clone)]
pub(crate) struct PeerBytes {
    sent: Counter,
    received: Counter,
}

impl Default for PeerBytes {
    fn default() -> PeerBytes {
        PeerBytes { sent: Counter::noop(), received: Counter::noop() }
    }
}

impl PeerBytes {
    /// Counts `n` bytes sent to the peer.
    pub(crate) fn sent(&self, n: usize) {
        self.sent.increment(n as u64);
    }

    /// Counts `n` bytes received from the peer.
    pub(crate) fn received(&self, n: usize) {
        self.received.increment(n as u64);
    }
}

/// The byte counters of peer `addr` (`host:port`), made once per peer and process.
pub(crate) fn peer(addr: &str) -> PeerBytes {
    static PEERS: OnceLock<Mutex<HashMap<String, PeerBytes>>> = OnceLock::new();
    let mut g = PEERS.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = g.get(addr) {
        return p.clone();
    }
    let label = if g.len() < MAX_PEER_LABELS { addr } else { "other" };
    let p = PeerBytes {
        sent: metrics::counter!(PEER_SENT_BYTES, "peer" => label.to_string()),
        received: metrics::counter!(PEER_RECEIVED_BYTES, "peer" => label.to_string()),
    };
    if g.len() < MAX_PEER_LABELS {
        g.insert(addr.to_string(), p.clone());
    }
    p
}

/// The gRPC methods ferroflow serves, as the `method` label; anything else is `other`.
const METHODS: &[&str] = &[
    "CreateSession",
    "ExtendSession",
    "PartialRunSetup",
    "RunStep",
    "CloseSession",
    "ListDevices",
    "Reset",
    "MakeCallable",
    "RunCallable",
    "ReleaseCallable",
    "GetStatus",
    "CreateWorkerSession",
    "DeleteWorkerSession",
    "RegisterGraph",
    "DeregisterGraph",
    "RunGraph",
    "CleanupGraph",
    "CleanupAll",
    "RecvTensor",
    "RecvTensors",
    "Logging",
    "Tracing",
    "RecvBuf",
    "GetStepSequence",
    "MarkRecvFinished",
    "CompleteGroup",
    "CompleteInstance",
    "Shutdown",
    "ServerInfo",
];

/// The `method` label of a request path `/package.Service/Method`: a known method name,
/// else `other` (a path is remote input: it must not mint label values).
pub(crate) fn method_label(path: &str) -> &'static str {
    let name = path.rsplit('/').next().unwrap_or("");
    METHODS.iter().find(|m| **m == name).copied().unwrap_or("other")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_labels_are_known_names_or_other() {
        assert_eq!(method_label("/tensorflow.WorkerService/RunGraph"), "RunGraph");
        assert_eq!(method_label("/tensorflow.MasterService/RunStep"), "RunStep");
        assert_eq!(method_label("/evil/../x\u{0}"), "other");
        assert_eq!(method_label(""), "other");
    }

    #[test]
    fn gauge_shares_are_given_back() {
        use metrics_util::debugging::DebuggingRecorder;
        let rec = DebuggingRecorder::new();
        let snap = rec.snapshotter();
        let gauge = |snap: &metrics_util::debugging::Snapshotter| {
            snap.snapshot().into_vec().into_iter().find(|(k, ..)| k.key().name() == REGISTERED_GRAPHS).map(|(.., v)| {
                match v {
                    metrics_util::debugging::DebugValue::Gauge(g) => g.into_inner(),
                    _ => f64::NAN,
                }
            })
        };
        // A debugging snapshot takes the value (resets it to 0): each one reads the change
        // since the one before.
        metrics::with_local_recorder(&rec, || {
            let a = GaugeShare::new(REGISTERED_GRAPHS, 2);
            let b = GaugeShare::new(REGISTERED_GRAPHS, 1);
            assert_eq!(gauge(&snap), Some(3.0));
            a.add(-1);
            drop(b);
            assert_eq!(gauge(&snap), Some(-2.0));
            drop(a);
            assert_eq!(gauge(&snap), Some(-1.0));
        });
    }
}
