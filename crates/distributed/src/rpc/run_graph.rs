//! RunGraph's adapter: a `RunGraphRequest` decoded into a [`RunGraphCall`], the worker's
//! [`RunGraphReply`] encoded back, and the `store_errors_in_response_body` rule, once for
//! the tonic service and the raw HTTP/2 path. The raw path
//! (`/tensorflow.WorkerService/RunGraph`, the one a `Server` routes to) sends the tensors
//! a step returns as their own buffers (see `tensor_wire`) and decodes the fed ones from
//! the DATA chunks without gathering them first. Both add the header that tells a
//! ferroflow master this worker releases its steps itself.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ferroflow_core::proto::{RunGraphRequest, RunGraphResponse};
use ferroflow_core::Status;
use http::HeaderValue;
use tonic::body::Body;

use super::status_in_body::{encode_or_in_body, StatusInBody};
use crate::raw_grpc::{error_response, ok_response, read_request_body};
use crate::rpc_util::{header_deadline, to_grpc, MAX_MESSAGE_SIZE, RELEASES_STEPS};
use crate::tensor_wire::encode_run_graph;
use crate::worker::Worker;
use crate::worker_api::{RunGraphCall, RunGraphReply};

/// The gRPC path this module serves.
pub(crate) const PATH: &str = "/tensorflow.WorkerService/RunGraph";

/// How long a request (feeds may be large) without a `grpc-timeout` may take to arrive.
const REQUEST_WAIT: Duration = Duration::from_secs(600);

/// One RunGraph on `worker` until `deadline` (the caller's): the reply, or the error, in
/// the body when the caller asked for that, else as the call's status.
pub(crate) async fn answer(
    worker: &Worker,
    req: RunGraphRequest,
    deadline: Option<Instant>,
) -> Result<RunGraphResponse, Status> {
    let in_body = req.store_errors_in_response_body;
    let r = match RunGraphCall::from_proto(req, worker.task()) {
        Ok(call) => worker.run_graph(call, deadline).await.map(RunGraphReply::into_proto),
        Err(e) => Err(e),
    };
    RunGraphResponse::or_in_body(r, in_body)
}

/// Answers one RunGraph call below tonic's codec; every failure is a gRPC status (or a
/// status in the response body), never a panic.
pub(crate) async fn serve(worker: Arc<Worker>, req: http::Request<Body>) -> http::Response<Body> {
    let deadline = header_deadline(req.headers());
    let until = deadline.unwrap_or_else(|| Instant::now() + REQUEST_WAIT);
    let read = read_request_body(req.into_body(), MAX_MESSAGE_SIZE + 5, "RunGraphRequest", until).await;
    let req: RunGraphRequest = match read.and_then(|chunks| chunks.into_message("RunGraphRequest")) {
        Ok(r) => r,
        Err(e) => return error_response(to_grpc(e)),
    };
    let in_body = req.store_errors_in_response_body;
    match encode_or_in_body(answer(&worker, req, deadline).await, in_body, encode_run_graph) {
        Ok(parts) => {
            let mut resp = ok_response(parts);
            resp.headers_mut().insert(RELEASES_STEPS, HeaderValue::from_static("1"));
            resp
        }
        Err(e) => error_response(to_grpc(e)),
    }
}
