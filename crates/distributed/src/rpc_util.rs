//! gRPC plumbing shared by the services and their clients: TensorFlow status ↔ gRPC status,
//! deadlines (the `grpc-timeout` header and bounded waits), message-size limits and the
//! HTTP/2 windows ferroflow uses on both ends.

use std::future::Future;
use std::time::{Duration, Instant};

use ferroflow_core::{Code, Status};

/// TensorFlow allows messages up to INT32_MAX bytes; so do we, both ways.
pub const MAX_MESSAGE_SIZE: usize = i32::MAX as usize;

/// The most a received message may take once decompressed: [`MAX_MESSAGE_SIZE`], or the
/// task's memory budget ([`ferroflow_core::memory_limit`]) when that is smaller. (A message's
/// declared length is checked against the budget before it is read: `message_gate`.)
pub fn decoding_limit() -> usize {
    usize::try_from(ferroflow_core::memory_limit()).map_or(MAX_MESSAGE_SIZE, |m| m.min(MAX_MESSAGE_SIZE))
}

/// HTTP/2 stream and connection windows (32 MiB): large tensors move at memory speed.
pub const WINDOW_SIZE: u32 = 32 << 20;

/// The stream window a client offers while transfers are paced (see `crate::pacing`): what a
/// sender may send of a response before the receiver's turn comes (4 MiB: a few ms of a
/// 10 Gbit/s link, far more than a LAN's bandwidth-delay product).
pub const STREAM_WINDOW_SIZE: u32 = 4 << 20;

/// Largest HTTP/2 frame this side accepts (1 MiB; the protocol default is 16 KiB), so peers
/// may send tensors in 64× fewer frames.
pub const MAX_FRAME_SIZE: u32 = 1 << 20;

/// Response header of a ferroflow worker's RunGraph: it frees a successful step's state
/// by itself (see `worker/step_table.rs`), so its master skips CleanupGraph. TensorFlow's
/// master ignores it.
pub const RELEASES_STEPS: &str = "ferroflow-releases-steps";

/// A ferroflow status as a gRPC status (same code numbers), its message capped
/// ([`Status::capped`]), its payloads in the details as TensorFlow sends them.
pub fn to_grpc(s: Status) -> tonic::Status {
    let s = s.capped();
    let code = tonic::Code::from_i32(s.code as i32);
    if s.payloads.is_empty() {
        return tonic::Status::new(code, s.message);
    }
    tonic::Status::with_details(code, s.message, bytes::Bytes::from(s.payloads.encode()))
}

/// A gRPC status a peer sent as a ferroflow status, with `context` (e.g. the task and its
/// address) prefixed to the message.
pub fn from_grpc(s: &tonic::Status, context: &str) -> Status {
    convert(s, context, false)
}

/// The error of a call this side made through tonic with `deadline`
/// ([`request_with_deadline`]) as a ferroflow status, with `context` prefixed: CANCELLED
/// once the deadline passed is tonic's own timer, which gRPC calls DEADLINE_EXCEEDED.
pub fn from_grpc_call(s: &tonic::Status, context: &str, deadline: Instant) -> Status {
    convert(s, context, Instant::now() >= deadline)
}

fn convert(s: &tonic::Status, context: &str, past_deadline: bool) -> Status {
    let mut code = Code::from_i32(s.code() as i32);
    // A connection that broke or never opened is UNAVAILABLE, as gRPC itself reports it
    // (tonic says UNKNOWN, or CANCELLED for a connection the peer closed under a call, with
    // a transport error as the source).
    let transport = std::error::Error::source(s).is_some_and(|e| e.downcast_ref::<tonic::transport::Error>().is_some());
    if code == Code::Cancelled && past_deadline {
        code = Code::DeadlineExceeded;
    } else if matches!(code, Code::Unknown | Code::Cancelled) && transport {
        code = Code::Unavailable;
    }
    let mut msg = if s.message().is_empty() { "(no message)".to_string() } else { s.message().to_string() };
    // Transport errors keep their cause (e.g. "Connection refused") in the source chain.
    let mut src = std::error::Error::source(s);
    while let Some(e) = src {
        let t = e.to_string();
        if !msg.contains(&t) {
            msg = format!("{msg}: {t}");
        }
        src = e.source();
    }
    if transport && tls_failure(s) {
        msg.push_str(
            " (the TLS handshake failed: either both ends use TLS (--tls_cert, grpcs://) or neither does, \
             and each must trust the CA of the other's certificate)",
        );
    }
    let mut out =
        if context.is_empty() { Status::new(code, msg) } else { Status::new(code, format!("{context}: {msg}")) };
    if !s.details().is_empty() {
        out.payloads = ferroflow_core::status_payload::Payloads::decode(s.details());
    }
    out
}

/// Whether rustls ended the connection (a TLS handshake that failed).
fn tls_failure(s: &tonic::Status) -> bool {
    use tokio_rustls::rustls;
    let mut src = std::error::Error::source(s);
    while let Some(e) = src {
        if e.downcast_ref::<rustls::Error>().is_some()
            || e.downcast_ref::<std::io::Error>().and_then(|io| io.get_ref()).is_some_and(|i| i.is::<rustls::Error>())
        {
            return true;
        }
        src = e.source();
    }
    false
}

/// The deadline a caller set with the `grpc-timeout` header, if any.
pub fn request_deadline<T>(req: &tonic::Request<T>) -> Option<Instant> {
    let v = req.metadata().get("grpc-timeout")?.to_str().ok()?;
    parse_grpc_timeout(v).map(|d| Instant::now() + d)
}

/// The deadline in a raw HTTP/2 request's `grpc-timeout` header, if any (the handlers
/// served below tonic's codec).
pub(crate) fn header_deadline(headers: &http::HeaderMap) -> Option<Instant> {
    let v = headers.get("grpc-timeout")?.to_str().ok()?;
    parse_grpc_timeout(v).map(|d| Instant::now() + d)
}

/// Parses a `grpc-timeout` value (`<digits><unit>`, unit one of H M S m u n).
pub fn parse_grpc_timeout(v: &str) -> Option<Duration> {
    if v.len() < 2 || v.len() > 9 {
        return None;
    }
    let (digits, unit) = v.split_at(v.len() - 1);
    let n: u64 = digits.parse().ok()?;
    Some(match unit {
        "H" => Duration::from_secs(n.checked_mul(3600)?),
        "M" => Duration::from_secs(n.checked_mul(60)?),
        "S" => Duration::from_secs(n),
        "m" => Duration::from_millis(n),
        "u" => Duration::from_micros(n),
        "n" => Duration::from_nanos(n),
        _ => return None,
    })
}

/// Time left until `deadline` (zero if passed).
pub fn remaining(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now())
}

/// Runs `fut` until `deadline`; DeadlineExceeded (with `what` in the message) after it.
pub async fn until<T>(
    deadline: Instant,
    what: impl FnOnce() -> String,
    fut: impl Future<Output = Result<T, Status>>,
) -> Result<T, Status> {
    match tokio::time::timeout_at(tokio::time::Instant::from_std(deadline), fut).await {
        Ok(r) => r,
        Err(_) => Err(Status::deadline_exceeded(format!("{} did not finish before its deadline", what()))),
    }
}

/// The longest timeout a `grpc-timeout` header carries here: 99999999 seconds (about
/// three years; the header has at most 8 digits). Deadlines further away (a client's
/// `timeout_in_ms` of 2^62) are sent as this, which tonic would otherwise refuse with a panic.
pub const MAX_GRPC_TIMEOUT: Duration = Duration::from_secs(99_999_999);

/// A request carrying `msg` with its deadline in the `grpc-timeout` header.
pub fn request_with_deadline<T>(msg: T, deadline: Instant) -> tonic::Request<T> {
    let mut r = tonic::Request::new(msg);
    r.set_timeout(remaining(deadline).clamp(Duration::from_millis(1), MAX_GRPC_TIMEOUT));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn far_deadlines_are_capped_not_a_panic() {
        // Found by the fuzzer: RunOptions.timeout_in_ms = 2^62 panicked a master's task.
        let far = Instant::now() + Duration::from_millis(1 << 62);
        let r = request_with_deadline((), far);
        let v = r.metadata().get("grpc-timeout").unwrap().to_str().unwrap().to_string();
        assert!(
            parse_grpc_timeout(&v).is_some_and(|d| d <= MAX_GRPC_TIMEOUT && d > Duration::from_secs(86_400)),
            "{v}"
        );
        let past = request_with_deadline((), Instant::now());
        assert!(past.metadata().get("grpc-timeout").is_some());
    }

    #[test]
    fn timeouts_and_codes() {
        assert_eq!(parse_grpc_timeout("100m"), Some(Duration::from_millis(100)));
        assert_eq!(parse_grpc_timeout("2S"), Some(Duration::from_secs(2)));
        assert_eq!(parse_grpc_timeout("1H"), Some(Duration::from_secs(3600)));
        assert_eq!(parse_grpc_timeout("x"), None);
        assert_eq!(parse_grpc_timeout("10x"), None);
        assert_eq!(parse_grpc_timeout("1234567890S"), None);
        let g = to_grpc(Status::aborted("gone"));
        assert_eq!(g.code(), tonic::Code::Aborted);
        let s = from_grpc(&g, "task /job:ps/replica:0/task:0 (h:1)");
        assert_eq!(s.code, Code::Aborted);
        assert_eq!(s.message, "task /job:ps/replica:0/task:0 (h:1): gone");
        // tonic's client-side timeout is a deadline, not a cancellation.
        let timer = tonic::Status::cancelled("Timeout expired");
        let s = from_grpc_call(&timer, "RunGraph on task t", Instant::now());
        assert_eq!(s.code, Code::DeadlineExceeded, "{s}");
        assert_eq!(s.message, "RunGraph on task t: Timeout expired");
        // Before the deadline, or sent by the peer, a cancellation stays one.
        let later = Instant::now() + Duration::from_secs(60);
        assert_eq!(from_grpc_call(&tonic::Status::cancelled("by peer"), "", later).code, Code::Cancelled);
        assert_eq!(from_grpc(&timer, "").code, Code::Cancelled);
    }
}
