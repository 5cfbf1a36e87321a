//! The worker as a tonic `WorkerService` (paths `/tensorflow.WorkerService/*`).

use std::sync::Arc;

use ferroflow_core::proto::worker_service_server::WorkerService;
use ferroflow_core::proto::*;
use ferroflow_core::Status;
use tonic::{Request, Response};

use super::worker::Worker;
use crate::rpc_util::{request_deadline, to_grpc, RELEASES_STEPS};
use crate::status_in_body::StatusInBody;

type R<T> = Result<Response<T>, tonic::Status>;

/// The gRPC face of a [`Worker`].
#[derive(Clone)]
pub struct WorkerGrpc(pub Arc<Worker>);

fn ok<T>(r: Result<T, Status>) -> R<T> {
    r.map(Response::new).map_err(to_grpc)
}

fn unimplemented<T>(method: &str, why: &str) -> R<T> {
    Err(tonic::Status::unimplemented(format!("WorkerService.{method} is not implemented by ferroflow: {why}")))
}

/// Replies with the error in the body (gRPC OK) when the caller asked for it.
fn run_graph_reply(r: Result<RunGraphResponse, Status>, in_body: bool) -> R<RunGraphResponse> {
    match r {
        Ok(resp) => Ok(Response::new(resp)),
        Err(e) if in_body => Ok(Response::new(RunGraphResponse::from_status(e))),
        Err(e) => Err(to_grpc(e)),
    }
}

#[tonic::async_trait]
impl WorkerService for WorkerGrpc {
    async fn get_status(&self, _: Request<GetStatusRequest>) -> R<GetStatusResponse> {
        // The header tells a ferroflow master it talks to a ferroflow worker.
        let mut r = Response::new(self.0.get_status());
        r.metadata_mut().insert(RELEASES_STEPS, tonic::metadata::MetadataValue::from_static("1"));
        Ok(r)
    }

    async fn create_worker_session(&self, r: Request<CreateWorkerSessionRequest>) -> R<CreateWorkerSessionResponse> {
        ok(self.0.create_worker_session(r.get_ref()).map(|_| CreateWorkerSessionResponse {}))
    }

    async fn delete_worker_session(&self, r: Request<DeleteWorkerSessionRequest>) -> R<DeleteWorkerSessionResponse> {
        self.0.delete_worker_session(r.get_ref());
        Ok(Response::new(DeleteWorkerSessionResponse {}))
    }

    async fn register_graph(&self, r: Request<RegisterGraphRequest>) -> R<RegisterGraphResponse> {
        ok(self.0.register_graph(r.into_inner()))
    }

    async fn deregister_graph(&self, r: Request<DeregisterGraphRequest>) -> R<DeregisterGraphResponse> {
        ok(self.0.deregister_graph(r.get_ref()).map(|_| DeregisterGraphResponse {}))
    }

    async fn run_graph(&self, r: Request<RunGraphRequest>) -> R<RunGraphResponse> {
        let deadline = request_deadline(&r);
        let req = r.into_inner();
        let in_body = req.store_errors_in_response_body;
        let mut r = run_graph_reply(self.0.run_graph(req, deadline).await, in_body)?;
        r.metadata_mut().insert(RELEASES_STEPS, tonic::metadata::MetadataValue::from_static("1"));
        Ok(r)
    }

    async fn cleanup_graph(&self, r: Request<CleanupGraphRequest>) -> R<CleanupGraphResponse> {
        self.0.cleanup_graph(r.get_ref());
        Ok(Response::new(CleanupGraphResponse {}))
    }

    async fn cleanup_all(&self, r: Request<CleanupAllRequest>) -> R<CleanupAllResponse> {
        self.0.cleanup_all(r.get_ref());
        Ok(Response::new(CleanupAllResponse {}))
    }

    async fn recv_tensor(&self, r: Request<RecvTensorRequest>) -> R<RecvTensorResponse> {
        let deadline = request_deadline(&r);
        ok(self.0.recv_tensor(r.get_ref(), deadline).await)
    }

    async fn recv_buf(&self, _: Request<RecvBufRequest>) -> R<RecvBufResponse> {
        unimplemented("RecvBuf", "collective ops are not supported")
    }

    async fn logging(&self, _: Request<LoggingRequest>) -> R<LoggingResponse> {
        Ok(Response::new(LoggingResponse::default()))
    }

    async fn tracing(&self, _: Request<TracingRequest>) -> R<TracingResponse> {
        unimplemented("Tracing", "use RunOptions tracing instead (TensorFlow answers the same)")
    }

    async fn complete_group(&self, _: Request<CompleteGroupRequest>) -> R<CompleteGroupResponse> {
        unimplemented("CompleteGroup", "collective ops are not supported")
    }

    async fn complete_instance(&self, _: Request<CompleteInstanceRequest>) -> R<CompleteInstanceResponse> {
        unimplemented("CompleteInstance", "collective ops are not supported")
    }

    async fn get_step_sequence(&self, _: Request<GetStepSequenceRequest>) -> R<GetStepSequenceResponse> {
        unimplemented("GetStepSequence", "collective ops are not supported")
    }

    async fn mark_recv_finished(&self, _: Request<MarkRecvFinishedRequest>) -> R<MarkRecvFinishedResponse> {
        unimplemented("MarkRecvFinished", "RPC response caching (rpc_options.cache_rpc_response) is not supported")
    }
}
