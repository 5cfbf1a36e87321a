//! `/ferroflow.WorkerExt/RecvTensors`: ferroflow's batched RecvTensor, used only between
//! ferroflow tasks. One request body carries several gRPC-framed `RecvTensorRequest`s of
//! one step (the `_Recv`s a partition issues together); the response streams one
//! `RecvTensorResponse` per request as soon as that tensor is ready, in completion order,
//! each naming the request it answers in `transport_options` (an `Any` of type
//! [`INDEX_TYPE`] whose value is the request's index as a varint). A tensor that is ready
//! is never held back for one that is not, so a batch cannot deadlock a step that a set
//! of separate RecvTensor calls would finish.
//!
//! A TensorFlow server answers the path with UNIMPLEMENTED; the caller then falls back to
//! one RecvTensor per tensor for that peer. The first error ends the stream with its status.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Buf;
use bytes::Bytes;
use ferroflow_core::proto::{Any, RecvTensorRequest};
use ferroflow_core::Status;
use http::{HeaderMap, HeaderValue};
use http_body::Frame;
use tokio::sync::mpsc;
use tonic::body::Body;

use crate::pacing::PacedQueue;
use crate::raw_grpc::{error_response, read_request_body};
use crate::rpc_util::{header_deadline, to_grpc};
use crate::tensor_wire::encode_recv_tensor;
use crate::worker::Worker;

/// The gRPC path this module serves.
pub(crate) const PATH: &str = "/ferroflow.WorkerExt/RecvTensors";

/// `transport_options.type_url` of a response item: the value is the request's index.
pub(crate) const INDEX_TYPE: &str = "type.ferroflow.dev/RecvTensorsIndex";

/// At most this many tensors per call.
pub(crate) use crate::worker_api::MAX_RECV_BATCH as MAX_KEYS;

/// Requests are keys and flags: 16 MiB is far more than any real batch.
const MAX_REQUEST: usize = 16 << 20;

/// How long a request without a `grpc-timeout` may take to arrive.
const REQUEST_WAIT: Duration = Duration::from_secs(60);

/// Answers one batched call; every failure is a gRPC status, never a panic.
pub(crate) async fn serve(worker: Arc<Worker>, req: http::Request<Body>) -> http::Response<Body> {
    let deadline = header_deadline(req.headers());
    let until = deadline.unwrap_or_else(|| Instant::now() + REQUEST_WAIT);
    let requests = match read_requests(req, until).await {
        Ok(r) => r,
        Err(e) => return error_response(to_grpc(e)),
    };
    tracing::trace!(tensors = requests.len(), "serving a RecvTensors batch");
    worker.batches_served[0].fetch_add(1, Ordering::Relaxed);
    worker.batches_served[1].fetch_add(requests.len() as u64, Ordering::Relaxed);
    let (tx, rx) = mpsc::unbounded_channel();
    for (index, r) in requests.into_iter().enumerate() {
        let (worker, tx) = (worker.clone(), tx.clone());
        tokio::spawn(async move {
            let item = match worker.recv_tensor(&r, deadline).await {
                Ok(mut resp) => {
                    resp.transport_options = Some(index_any(index));
                    encode_recv_tensor(resp)
                }
                Err(e) => Err(e),
            };
            // The receiver is gone when the caller went away: nothing to do then.
            let _ = tx.send(item);
        });
    }
    let mut resp = http::Response::new(Body::new(Stream { rx, queue: PacedQueue::default(), ended: false }));
    resp.headers_mut().insert(http::header::CONTENT_TYPE, HeaderValue::from_static("application/grpc"));
    resp
}

async fn read_requests(req: http::Request<Body>, until: Instant) -> Result<Vec<RecvTensorRequest>, Status> {
    let mut body = read_request_body(req.into_body(), MAX_REQUEST, "RecvTensors request", until).await?;
    let mut out = Vec::new();
    while let Some(m) = body.take_message("RecvTensors request")? {
        if out.len() == MAX_KEYS {
            return Err(Status::invalid_argument(format!("RecvTensors: more than {MAX_KEYS} tensors in one call")));
        }
        out.push(m.into_message::<RecvTensorRequest>("RecvTensorRequest")?);
    }
    if body.remaining() != 0 {
        return Err(Status::invalid_argument(format!(
            "RecvTensors: the request ends with {} bytes that are not a whole gRPC message",
            body.remaining()
        )));
    }
    if out.is_empty() {
        return Err(Status::invalid_argument("RecvTensors: the request names no tensor"));
    }
    Ok(out)
}

/// `transport_options` naming request `index`.
pub(crate) fn index_any(index: usize) -> Any {
    let mut value = Vec::with_capacity(10);
    prost::encoding::encode_varint(index as u64, &mut value);
    Any { type_url: INDEX_TYPE.to_string(), value }
}

/// The request index a response item names, if it names one.
pub(crate) fn index_of(any: Option<&Any>) -> Option<usize> {
    let a = any?;
    if a.type_url != INDEX_TYPE {
        return None;
    }
    let mut v: &[u8] = &a.value;
    prost::encoding::decode_varint(&mut v).ok().map(|i| i as usize)
}

/// The response body: each finished tensor's frames as they come (paced, see
/// [`crate::pacing`]), then the status.
struct Stream {
    rx: mpsc::UnboundedReceiver<Result<Vec<Bytes>, Status>>,
    queue: PacedQueue,
    ended: bool,
}

impl http_body::Body for Stream {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        loop {
            match this.queue.poll_next(cx) {
                Poll::Ready(Some(b)) => return Poll::Ready(Some(Ok(Frame::data(b)))),
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => {}
            }
            if this.ended {
                return Poll::Ready(None);
            }
            match this.rx.poll_recv(cx) {
                Poll::Ready(Some(Ok(parts))) => this.queue.extend(parts),
                Poll::Ready(Some(Err(e))) => {
                    this.ended = true;
                    return Poll::Ready(Some(Ok(Frame::trailers(status_trailers(e)))));
                }
                Poll::Ready(None) => {
                    this.ended = true;
                    let mut t = HeaderMap::new();
                    t.insert("grpc-status", HeaderValue::from_static("0"));
                    return Poll::Ready(Some(Ok(Frame::trailers(t))));
                }
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

fn status_trailers(e: Status) -> HeaderMap {
    let mut t = error_response(to_grpc(e)).into_parts().0.headers;
    t.remove(http::header::CONTENT_TYPE);
    t
}
