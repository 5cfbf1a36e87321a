//! Server-side RPC metrics: every response leaving the dispatcher is wrapped so that, when
//! its last frame has gone out (or the client went away), one count by method and status
//! code and one latency sample by method are recorded. The status comes from the headers
//! of a trailers-only response, else from the trailers, else (the stream was dropped
//! before its trailers) it is CANCELLED.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use bytes::Bytes;
use ferroflow_core::Code;
use http::HeaderMap;
use http_body::{Frame, SizeHint};
use tonic::body::Body;

use crate::metrics::{RPC_REQUESTS_TOTAL, RPC_SECONDS};

/// The status code name in a `grpc-status` header, if there is one.
fn code_in(headers: &HeaderMap) -> Option<&'static str> {
    let v = headers.get("grpc-status")?;
    let code = v.to_str().ok().and_then(|s| s.trim().parse::<i32>().ok()).map_or(Code::Unknown, Code::from_i32);
    Some(code.name())
}

/// The code of an HTTP status other than 200 (gRPC's mapping of HTTP statuses).
fn code_of_http(status: http::StatusCode) -> &'static str {
    match status.as_u16() {
        400 => Code::Internal.name(),
        401 => Code::Unauthenticated.name(),
        403 => Code::PermissionDenied.name(),
        404 => Code::Unimplemented.name(),
        429 | 502 | 503 | 504 => Code::Unavailable.name(),
        _ => Code::Unknown.name(),
    }
}

/// Records one finished RPC.
fn record(method: &'static str, code: &'static str, start: Instant) {
    metrics::counter!(RPC_REQUESTS_TOTAL, "method" => method, "code" => code).increment(1);
    metrics::histogram!(RPC_SECONDS, "method" => method).record(start.elapsed().as_secs_f64());
}

/// Wraps `resp` so that the call is recorded when its body ends or is dropped.
pub(crate) fn meter(method: &'static str, start: Instant, resp: http::Response<Body>) -> http::Response<Body> {
    let code =
        if resp.status() != http::StatusCode::OK { Some(code_of_http(resp.status())) } else { code_in(resp.headers()) };
    let (parts, body) = resp.into_parts();
    http::Response::from_parts(parts, Body::new(Metered { inner: body, method, start, code, recorded: false }))
}

/// A response body that records its call once.
struct Metered {
    inner: Body,
    method: &'static str,
    start: Instant,
    code: Option<&'static str>,
    recorded: bool,
}

impl Metered {
    fn finish(&mut self, fallback: &'static str) {
        if !self.recorded {
            self.recorded = true;
            record(self.method, self.code.unwrap_or(fallback), self.start);
        }
    }
}

impl http_body::Body for Metered {
    type Data = Bytes;
    type Error = tonic::Status;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, tonic::Status>>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.inner).poll_frame(cx);
        match &r {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(t) = frame.trailers_ref() {
                    if let Some(c) = code_in(t) {
                        this.code = Some(c);
                    }
                    this.finish(Code::Unknown.name());
                }
            }
            Poll::Ready(Some(Err(e))) => {
                let c = Code::from_i32(e.code() as i32).name();
                this.code.get_or_insert(c);
                this.finish(c);
            }
            // A body that ends without trailers has no status: UNKNOWN unless the headers
            // carried one.
            Poll::Ready(None) => this.finish(Code::Unknown.name()),
            Poll::Pending => {}
        }
        r
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for Metered {
    fn drop(&mut self) {
        // Dropped before its end: the client cancelled or the connection went away (a
        // trailers-only response already knows its code).
        self.finish(Code::Cancelled.name());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;
    use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};

    fn counts(snap: &Snapshotter) -> Vec<(String, String, u64)> {
        let mut out = Vec::new();
        for (k, _, _, v) in snap.snapshot().into_vec() {
            if k.key().name() != RPC_REQUESTS_TOTAL {
                continue;
            }
            let label = |n: &str| k.key().labels().find(|l| l.key() == n).map(|l| l.value().to_string());
            if let DebugValue::Counter(c) = v {
                out.push((label("method").unwrap_or_default(), label("code").unwrap_or_default(), c));
            }
        }
        out.sort();
        out
    }

    fn run<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
    }

    #[test]
    fn calls_are_counted_by_method_and_code() {
        let rec = DebuggingRecorder::new();
        let snap = rec.snapshotter();
        metrics::with_local_recorder(&rec, || {
            // A successful response: the code is in the trailers, read as the body ends.
            let ok = crate::raw_grpc::ok_response([Bytes::from_static(b"\0\0\0\0\0")]);
            let body = meter("RunGraph", Instant::now(), ok).into_body();
            run(body.collect()).unwrap();
            // A trailers-only error: the code is in the headers, recorded when dropped.
            let err = tonic::Status::deadline_exceeded("late").into_http::<Body>();
            drop(meter("RecvTensor", Instant::now(), err));
            // A response dropped before its end (the client went away).
            let ok = crate::raw_grpc::ok_response([Bytes::from_static(b"\0\0\0\0\0")]);
            drop(meter("RunGraph", Instant::now(), ok));
            // A bad grpc-status value is UNKNOWN, not a panic.
            let mut bad = http::Response::new(Body::empty());
            bad.headers_mut().insert("grpc-status", http::HeaderValue::from_static("banana"));
            drop(meter("other", Instant::now(), bad));
        });
        assert_eq!(
            counts(&snap),
            vec![
                ("RecvTensor".into(), "DEADLINE_EXCEEDED".into(), 1),
                ("RunGraph".into(), "CANCELLED".into(), 1),
                ("RunGraph".into(), "OK".into(), 1),
                ("other".into(), "UNKNOWN".into(), 1),
            ]
        );
    }
}
