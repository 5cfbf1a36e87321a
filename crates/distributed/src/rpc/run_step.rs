//! RunStep's adapter: a `RunStepRequest` decoded into a [`RunStepCall`], the master's
//! [`RunStepReply`] encoded back, and TensorFlow's `store_errors_in_response_body` rule,
//! once for the tonic service and the raw HTTP/2 path. The raw path
//! (`/tensorflow.MasterService/RunStep`, the one a `Server` routes to) sends the fetched
//! tensors' buffers to HTTP/2 as they are and reads the fed tensors from the DATA chunks
//! without gathering them first (see `tensor_wire`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use ferroflow_core::proto::{RunStepRequest, RunStepResponse};
use ferroflow_core::Status;
use tonic::body::Body;

use super::status_in_body::{encode_or_in_body, StatusInBody};
use crate::master::Master;
use crate::master_api::{RunStepCall, RunStepReply};
use crate::raw_grpc::{error_response, ok_response, read_request_body};
use crate::rpc_util::{header_deadline, to_grpc, MAX_MESSAGE_SIZE};
use crate::tensor_wire::encode_run_step;

/// The gRPC path this module serves.
pub(crate) const PATH: &str = "/tensorflow.MasterService/RunStep";

/// One RunStep on `master`: the reply, or the error, in the body when the caller asked
/// for that (TensorFlow's clients do), else as the call's status.
pub(crate) async fn answer(master: &Master, req: RunStepRequest) -> Result<RunStepResponse, Status> {
    let in_body = req.store_errors_in_response_body;
    let r = match RunStepCall::from_proto(req) {
        Ok(call) => master.run_step(call).await.map(RunStepReply::into_proto),
        Err(e) => Err(e),
    };
    RunStepResponse::or_in_body(r, in_body)
}

/// Answers one RunStep call below tonic's codec; every failure is a gRPC status (or a
/// status in the response body), never a panic.
pub(crate) async fn serve(master: Arc<Master>, req: http::Request<Body>) -> http::Response<Body> {
    let req = match read_request(req).await {
        Ok(r) => r,
        Err(e) => return error_response(to_grpc(e)),
    };
    let in_body = req.store_errors_in_response_body;
    match encode_or_in_body(answer(&master, req).await, in_body, encode_run_step) {
        Ok(parts) => ok_response(parts),
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
