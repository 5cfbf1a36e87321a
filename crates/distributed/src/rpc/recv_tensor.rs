//! `/tensorflow.WorkerService/RecvTensor` served below tonic's codec: the response's tensor
//! buffer goes to HTTP/2 as it is (see `tensor_wire`), instead of being encoded into a copy.
//! The tonic service's RecvTensor answers through the same [`answer`].

use std::sync::Arc;
use std::time::{Duration, Instant};

use ferroflow_core::proto::{RecvTensorRequest, RecvTensorResponse};
use ferroflow_core::Status;
use tonic::body::Body;

use crate::raw_grpc::{error_response, ok_response, read_request_body};
use crate::rpc_util::{header_deadline, to_grpc};
use crate::tensor_wire::encode_recv_tensor;
use crate::worker::Worker;

/// The gRPC path this module serves.
pub(crate) const PATH: &str = "/tensorflow.WorkerService/RecvTensor";

/// A RecvTensorRequest is a step id, a key and a few flags: anything over 1 MiB is not one.
const MAX_REQUEST: usize = 1 << 20;

/// How long a request without a `grpc-timeout` may take to arrive.
const REQUEST_WAIT: Duration = Duration::from_secs(60);

/// Answers one RecvTensor call; every failure is a gRPC status, never a panic.
pub(crate) async fn serve(worker: Arc<Worker>, req: http::Request<Body>) -> http::Response<Body> {
    match handle(&worker, req).await {
        Ok(r) => r,
        Err(e) => error_response(to_grpc(e)),
    }
}

async fn handle(worker: &Worker, req: http::Request<Body>) -> Result<http::Response<Body>, Status> {
    let deadline = header_deadline(req.headers());
    let until = deadline.unwrap_or_else(|| Instant::now() + REQUEST_WAIT);
    let chunks = read_request_body(req.into_body(), MAX_REQUEST, "RecvTensorRequest", until).await?;
    let r: RecvTensorRequest = chunks.into_message("RecvTensorRequest")?;
    let resp = answer(worker, &r, deadline).await?;
    Ok(ok_response(encode_recv_tensor(resp)?))
}

/// One RecvTensor on `worker`, counted.
pub(crate) async fn answer(
    worker: &Worker,
    req: &RecvTensorRequest,
    deadline: Option<Instant>,
) -> Result<RecvTensorResponse, Status> {
    worker.recv_tensor_served.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    worker.recv_tensor(req, deadline).await
}
