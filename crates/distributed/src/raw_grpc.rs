//! gRPC over HTTP/2 by hand, for the one call whose payload is a tensor (RecvTensor): the
//! request and response bodies are built from and read into `Bytes` chunks, so the tensor
//! is neither copied into an encode buffer nor gathered into a decode buffer (tonic's codec
//! does both). Everything else (connections, HTTP/2, flow control) stays tonic's and
//! hyper's; the messages are the same bytes a tonic or TensorFlow peer sends and expects.

pub use crate::tensor_wire::encode_run_step;
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use bytes::{BufMut, Bytes, BytesMut};
use ferroflow_core::Status;
use http::{HeaderMap, HeaderValue, StatusCode};
use http_body::Frame;
use http_body_util::BodyExt;
use prost::Message;
use tonic::body::Body;
use tonic::codegen::Service;
use tonic::transport::Channel;

use crate::metrics::PeerBytes;
use crate::pacing::PacedQueue;
use crate::rpc_util::{from_grpc, MAX_MESSAGE_SIZE};
use crate::tensor_wire::Chunks;

/// A body of data known in advance, then (for a response) its trailers; sent paced (see
/// [`crate::pacing`]).
#[derive(Default)]
struct FrameList {
    data: PacedQueue,
    trailers: Option<HeaderMap>,
}

impl FrameList {
    fn new(parts: impl IntoIterator<Item = Bytes>, trailers: Option<HeaderMap>) -> FrameList {
        let mut data = PacedQueue::default();
        data.extend(parts);
        FrameList { data, trailers }
    }
}

impl http_body::Body for FrameList {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        match this.data.poll_next(cx) {
            Poll::Ready(Some(b)) => Poll::Ready(Some(Ok(Frame::data(b)))),
            Poll::Ready(None) => Poll::Ready(this.trailers.take().map(|t| Ok(Frame::trailers(t)))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.data.is_empty() && self.trailers.is_none()
    }
}

/// A successful gRPC response: the message as `parts` (DATA frames), then `grpc-status: 0`.
pub fn ok_response(parts: impl IntoIterator<Item = Bytes>) -> http::Response<Body> {
    let mut trailers = HeaderMap::new();
    trailers.insert("grpc-status", HeaderValue::from_static("0"));
    let mut resp = http::Response::new(Body::new(FrameList::new(parts, Some(trailers))));
    resp.headers_mut().insert(http::header::CONTENT_TYPE, HeaderValue::from_static("application/grpc"));
    resp
}

/// A gRPC error response (trailers only), as tonic answers one.
pub(crate) fn error_response(s: tonic::Status) -> http::Response<Body> {
    s.into_http()
}

/// `message` with its 5-byte gRPC prefix (uncompressed).
pub fn framed<M: Message>(message: &M) -> Bytes {
    let n = message.encoded_len();
    let mut b = BytesMut::with_capacity(5 + n);
    b.put_u8(0);
    b.put_u32(n as u32);
    message.encode_raw(&mut b);
    b.freeze()
}

/// Reads a request body that must arrive in full by `until` (a client that stalls does not
/// hold the server's task forever).
pub(crate) async fn read_request_body<B>(body: B, limit: usize, what: &str, until: Instant) -> Result<Chunks, Status>
where
    B: http_body::Body<Data = Bytes> + Unpin,
    B::Error: std::fmt::Display,
{
    let read = read_frames(body, limit, what, Some(BODY_IDLE));
    match tokio::time::timeout_at(tokio::time::Instant::from_std(until), read).await {
        Ok(r) => r.map(|(chunks, _)| chunks),
        Err(_) => Err(Status::deadline_exceeded(format!("{what}: the request body did not arrive in time"))),
    }
}

/// Longest pause between two pieces of a request body: a client that sends its headers
/// and then nothing gives its call up after this, whatever its deadline.
pub(crate) const BODY_IDLE: std::time::Duration = std::time::Duration::from_secs(20);

/// Reads a body's DATA chunks (at most `limit` bytes, each message's declared length
/// within the task's memory budget: see [`crate::message_gate`]) and its trailers.
pub(crate) async fn read_body<B>(body: B, limit: usize, what: &str) -> Result<(Chunks, HeaderMap), Status>
where
    B: http_body::Body<Data = Bytes> + Unpin,
    B::Error: std::fmt::Display,
{
    read_frames(body, limit, what, None).await
}

/// [`read_body`], each frame waited for at most `idle` (when set).
async fn read_frames<B>(
    mut body: B,
    limit: usize,
    what: &str,
    idle: Option<std::time::Duration>,
) -> Result<(Chunks, HeaderMap), Status>
where
    B: http_body::Body<Data = Bytes> + Unpin,
    B::Error: std::fmt::Display,
{
    let mut chunks = Chunks::default();
    let mut trailers = HeaderMap::new();
    let mut framing = crate::message_gate::Scanner::default();
    let mut len = 0usize;
    loop {
        let next = match idle {
            Some(d) => tokio::time::timeout(d, body.frame()).await.map_err(|_| {
                Status::deadline_exceeded(format!("{what}: no part of the request body arrived for {d:?}"))
            })?,
            None => body.frame().await,
        };
        let Some(frame) = next else { break };
        let frame = frame.map_err(|e| Status::unavailable(format!("{what}: reading the body failed: {e}")))?;
        match frame.into_data() {
            Ok(data) => {
                // Nothing here is reserved from a declared length, but one past the
                // budget fails now rather than after its bytes arrived.
                framing.scan(&data, |p| crate::message_gate::admit(what, p)).map_err(|(_, e)| e)?;
                len += data.len();
                if len > limit {
                    return Err(Status::resource_exhausted(format!(
                        "{what}: the body exceeds the {limit}-byte message limit"
                    )));
                }
                chunks.push(data);
            }
            Err(frame) => {
                if let Ok(t) = frame.into_trailers() {
                    trailers.extend(t);
                }
            }
        }
    }
    Ok((chunks, trailers))
}

/// The gRPC status in `headers` (`grpc-status`, `grpc-message`, and the details that carry
/// TensorFlow's status payloads), if any. The details are decoded here: tonic would panic
/// on a malformed header; one that is not base64 reaches the status as bytes that are no
/// payload container, which [`crate::rpc_util::from_grpc`] marks as payloads lost.
fn status_in(headers: &HeaderMap) -> Option<tonic::Status> {
    use base64::Engine;
    headers.get("grpc-status")?;
    let mut h = headers.clone();
    let details = h.remove("grpc-status-details-bin");
    let s = tonic::Status::from_header_map(&h)?;
    let Some(d) = details else { return Some(s) };
    let text = d.as_bytes();
    let end = text.iter().rposition(|&b| b != b'=').map_or(0, |i| i + 1);
    let bytes = base64::engine::general_purpose::STANDARD_NO_PAD.decode(&text[..end]).unwrap_or_else(|_| vec![0xff]);
    Some(tonic::Status::with_details(s.code(), s.message().to_string(), Bytes::from(bytes)))
}

/// The gRPC code for an HTTP status other than 200 (gRPC's HTTP-to-gRPC mapping).
fn code_of_http(s: StatusCode) -> tonic::Code {
    match s.as_u16() {
        400 => tonic::Code::Internal,
        401 => tonic::Code::Unauthenticated,
        403 => tonic::Code::PermissionDenied,
        404 => tonic::Code::Unimplemented,
        429 | 502 | 503 | 504 => tonic::Code::Unavailable,
        _ => tonic::Code::Unknown,
    }
}

/// One outgoing call on the raw path: where it goes, until when, and how its errors and
/// bytes are attributed.
pub(crate) struct Call<'a> {
    /// The connection to the peer.
    pub channel: Channel,
    /// The method, e.g. `/tensorflow.WorkerService/RunGraph`.
    pub path: &'static str,
    /// When the call gives up (also sent to the peer as `grpc-timeout`).
    pub deadline: Instant,
    /// The call, the peer and its address: prefixes every error.
    pub what: &'a str,
    /// Counts the bytes each way.
    pub peer: &'a PeerBytes,
}

/// Makes the unary call `c` with a request encoded as `frames` (its gRPC prefix first,
/// tensor buffers as chunks of their own) and decodes the response from its DATA chunks,
/// returning the response headers too.
pub(crate) async fn unary<Resp: Message + Default>(
    c: Call<'_>,
    frames: Vec<Bytes>,
) -> Result<(Resp, HeaderMap), Status> {
    let (deadline, what, peer) = (c.deadline, c.what, c.peer);
    let (headers, body) = start(c, frames).await?;
    let (chunks, trailers) =
        read_body(body, MAX_MESSAGE_SIZE + 5, what).await.map_err(|e| past_deadline(e, deadline, what))?;
    peer.received(chunks.len());
    trailer_status(&trailers, what)?;
    Ok((chunks.into_message(what)?, headers))
}

/// Sends the call `c` with the body `frames` (gRPC-framed messages) and returns the
/// response headers and body once the headers say the call was accepted: a trailers-only
/// error response or a non-200 HTTP status is the call's error. The request's bytes are
/// counted as sent to the peer (the response's are the caller's to count).
pub(crate) async fn start(c: Call<'_>, frames: Vec<Bytes>) -> Result<(HeaderMap, Body), Status> {
    let Call { mut channel, path, deadline, what, peer } = c;
    peer.sent(frames.iter().map(Bytes::len).sum());
    // Rounded up, so the peer's deadline (which starts when the request arrives) is never
    // before ours: a peer giving up resets the stream, which must not beat our own timer.
    let millis = deadline.saturating_duration_since(Instant::now()).as_micros().div_ceil(1000).clamp(1, 99_999_999);
    let mut req = http::Request::new(Body::new(FrameList::new(frames, None)));
    *req.method_mut() = http::Method::POST;
    *req.uri_mut() = http::Uri::from_static(path);
    let h = req.headers_mut();
    h.insert(http::header::CONTENT_TYPE, HeaderValue::from_static("application/grpc"));
    h.insert(http::header::TE, HeaderValue::from_static("trailers"));
    if let Ok(v) = HeaderValue::from_str(&format!("{millis}m")) {
        h.insert("grpc-timeout", v);
    }
    let transport = |e: &dyn std::fmt::Display| {
        past_deadline(Status::unavailable(format!("{what}: transport error: {e}")), deadline, what)
    };
    std::future::poll_fn(|cx| channel.poll_ready(cx)).await.map_err(|e| transport(&e))?;
    let resp = channel.call(req).await.map_err(|e| transport(&e))?;
    if resp.status() != StatusCode::OK {
        let s = tonic::Status::new(code_of_http(resp.status()), format!("HTTP status {}", resp.status()));
        return Err(from_grpc(&s, what));
    }
    // A trailers-only response carries its status in the headers (and has no message).
    if let Some(s) = status_in(resp.headers()) {
        if s.code() == tonic::Code::Ok {
            return Err(Status::internal(format!("{what}: the response has no message")));
        }
        return Err(from_grpc(&s, what));
    }
    let (parts, body) = resp.into_parts();
    Ok((parts.headers, body))
}

/// A stream that fails once the deadline passed was ended by it (tonic's server resets a
/// stream whose grpc-timeout expired): that is a deadline, not a dead peer.
pub(crate) fn past_deadline(e: Status, deadline: Instant, what: &str) -> Status {
    if e.code == ferroflow_core::Code::Unavailable && Instant::now() >= deadline {
        Status::deadline_exceeded(format!("{what}: did not finish before its deadline ({})", e.message))
    } else {
        e
    }
}

/// The call's outcome from its trailers: Ok for `grpc-status: 0`.
pub(crate) fn trailer_status(trailers: &HeaderMap, what: &str) -> Result<(), Status> {
    match status_in(trailers) {
        None => Err(Status::internal(format!("{what}: the response ended without a grpc-status"))),
        Some(s) if s.code() != tonic::Code::Ok => Err(from_grpc(&s, what)),
        Some(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_statuses_map_as_grpc_says() {
        assert_eq!(code_of_http(StatusCode::NOT_FOUND), tonic::Code::Unimplemented);
        assert_eq!(code_of_http(StatusCode::SERVICE_UNAVAILABLE), tonic::Code::Unavailable);
        assert_eq!(code_of_http(StatusCode::IM_A_TEAPOT), tonic::Code::Unknown);
    }

    /// A body whose sender never sends anything.
    struct Stalled;

    impl http_body::Body for Stalled {
        type Data = Bytes;
        type Error = Infallible;

        fn poll_frame(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
            Poll::Pending
        }
    }

    #[tokio::test]
    async fn a_stalled_request_body_ends_at_its_bound() {
        let until = Instant::now() + std::time::Duration::from_millis(50);
        let e = read_request_body(Stalled, 100, "RecvTensorRequest", until).await.err().unwrap();
        assert_eq!(e.code, ferroflow_core::Code::DeadlineExceeded);
        assert!(e.message.contains("RecvTensorRequest: the request body did not arrive in time"), "{}", e.message);
    }

    #[tokio::test]
    async fn bodies_over_the_limit_are_refused() {
        let body = FrameList::new([Bytes::from_static(&[0; 64])], None);
        let e = read_body(body, 10, "RunStepRequest").await.err().unwrap();
        assert_eq!(e.code, ferroflow_core::Code::ResourceExhausted);
    }

    #[test]
    fn malformed_status_details_do_not_panic() {
        let mut h = HeaderMap::new();
        h.insert("grpc-status", HeaderValue::from_static("5"));
        h.insert("grpc-message", HeaderValue::from_static("no%20such%20key"));
        h.insert("grpc-status-details-bin", HeaderValue::from_static("!!!not base64!!!"));
        let s = status_in(&h).unwrap();
        assert_eq!(s.code(), tonic::Code::NotFound);
        assert_eq!(s.message(), "no such key");
        assert!(status_in(&HeaderMap::new()).is_none());
        let e = crate::rpc_util::from_grpc(&s, "");
        assert!(e.payload(ferroflow_core::status_payload::GRPC_PAYLOADS_LOST).is_some(), "{:?}", e.payloads);
    }

    #[test]
    fn status_details_carry_tensorflows_payloads_both_ways() {
        let st = ferroflow_core::Status::aborted("Graph handle is not found: g").possibly_restarted().with_node("n");
        let resp: http::Response<Body> = crate::rpc_util::to_grpc(st.clone()).into_http();
        assert!(resp.headers().contains_key("grpc-status-details-bin"));
        let back = crate::rpc_util::from_grpc(&status_in(resp.headers()).unwrap(), "");
        assert_eq!((back.code, &back.message, &back.payloads), (st.code, &st.message, &st.payloads));
        assert!(back.worker_possibly_restarted() && back.node() == Some("n"));
        // A status without payloads sends no details.
        let plain: http::Response<Body> = crate::rpc_util::to_grpc(ferroflow_core::Status::internal("x")).into_http();
        assert!(!plain.headers().contains_key("grpc-status-details-bin"));
    }
}
