//! `/tensorflow.WorkerService/RunGraph` served below tonic's codec: the tensors a step
//! returns (`recv`, e.g. a variable fetched at its source for a client) go to HTTP/2 as
//! their own buffers (see `tensor_wire`) instead of being encoded into a copy, and the
//! tensors fed in (`send`) are decoded from the DATA chunks without gathering them first.
//! Semantics are those of the tonic service it replaces: deadlines,
//! `store_errors_in_response_body`, and the header that tells a ferroflow master this
//! worker releases its steps itself.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ferroflow_core::proto::{RunGraphRequest, RunGraphResponse};
use http::HeaderValue;
use tonic::body::Body;

use super::worker::Worker;
use crate::raw_grpc::{error_response, ok_response, read_request_body};
use crate::rpc_util::{header_deadline, to_grpc, MAX_MESSAGE_SIZE, RELEASES_STEPS};
use crate::status_in_body::StatusInBody;
use crate::tensor_wire::encode_run_graph;

/// The gRPC path this module serves.
pub(crate) const PATH: &str = "/tensorflow.WorkerService/RunGraph";

/// How long a request (feeds may be large) without a `grpc-timeout` may take to arrive.
const REQUEST_WAIT: Duration = Duration::from_secs(600);

/// Answers one RunGraph call; every failure is a gRPC status (or, when the caller asked
/// for it, a status in the response body), never a panic.
pub(crate) async fn serve(worker: Arc<Worker>, req: http::Request<Body>) -> http::Response<Body> {
    let deadline = header_deadline(req.headers());
    let until = deadline.unwrap_or_else(|| Instant::now() + REQUEST_WAIT);
    let req: RunGraphRequest =
        match read_request_body(req.into_body(), MAX_MESSAGE_SIZE + 5, "RunGraphRequest", until).await {
            Ok(chunks) => match chunks.into_message("RunGraphRequest") {
                Ok(r) => r,
                Err(e) => return error_response(to_grpc(e)),
            },
            Err(e) => return error_response(to_grpc(e)),
        };
    let in_body = req.store_errors_in_response_body;
    let encoded = worker.run_graph(req, deadline).await.and_then(encode_run_graph);
    let parts = match encoded {
        Ok(parts) => parts,
        Err(e) if in_body => match encode_run_graph(RunGraphResponse::from_status(e)) {
            Ok(parts) => parts,
            Err(e) => return error_response(to_grpc(e)),
        },
        Err(e) => return error_response(to_grpc(e)),
    };
    let mut resp = ok_response(parts);
    resp.headers_mut().insert(RELEASES_STEPS, HeaderValue::from_static("1"));
    resp
}
