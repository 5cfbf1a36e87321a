//! `/tensorflow.MasterService/RunStep` served below tonic's codec: the fetched tensors'
//! buffers go to HTTP/2 as they are and the fed tensors are read from the DATA chunks
//! without gathering them first (see `tensor_wire`). Semantics are those of the tonic
//! service it replaces, including `store_errors_in_response_body`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ferroflow_core::proto::{RunStepRequest, RunStepResponse};
use ferroflow_core::Status;
use tonic::body::Body;

use super::master::Master;
use crate::raw_grpc::{error_response, ok_response, read_request_body};
use crate::rpc_util::{header_deadline, to_grpc, MAX_MESSAGE_SIZE};
use crate::status_in_body::StatusInBody;
use crate::tensor_wire::encode_run_step;

/// The gRPC path this module serves.
pub(crate) const PATH: &str = "/tensorflow.MasterService/RunStep";

/// Answers one RunStep call; every failure is a gRPC status (or, when the client asked for
/// it, a status in the response body), never a panic.
pub(crate) async fn serve(master: Arc<Master>, req: http::Request<Body>) -> http::Response<Body> {
    let req = match read_request(req).await {
        Ok(r) => r,
        Err(e) => return error_response(to_grpc(e)),
    };
    let in_body = req.store_errors_in_response_body;
    let encoded = master.run_step(req).await.and_then(encode_run_step);
    match encoded {
        Ok(parts) => ok_response(parts),
        Err(e) if in_body => match encode_run_step(RunStepResponse::from_status(e)) {
            Ok(parts) => ok_response(parts),
            Err(e) => error_response(to_grpc(e)),
        },
        Err(e) => error_response(to_grpc(e)),
    }
}

/// How long a request (feeds may be large) without a `grpc-timeout` may take to arrive.
const REQUEST_WAIT: Duration = Duration::from_secs(600);

async fn read_request(req: http::Request<Body>) -> Result<RunStepRequest, Status> {
    let until = header_deadline(req.headers()).unwrap_or_else(|| Instant::now() + REQUEST_WAIT);
    let chunks = read_request_body(req.into_body(), MAX_MESSAGE_SIZE + 5, "RunStepRequest", until).await?;
    chunks.into_message("RunStepRequest")
}
