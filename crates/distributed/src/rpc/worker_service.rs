//! The worker as a tonic `WorkerService` (paths `/tensorflow.WorkerService/*`) for the
//! RPCs that carry no tensors. RunGraph and RecvTensor are served below tonic
//! (`run_graph`, `recv_tensor`: `Dispatch` routes them there), so their handlers here are
//! never reached and say so.

use std::sync::Arc;

use ferroflow_core::proto::worker_service_server::WorkerService;
use ferroflow_core::proto::*;
use ferroflow_core::Status;
use tonic::{Request, Response};

use crate::rpc_util::{to_grpc, RELEASES_STEPS};
use crate::worker::Worker;

type R<T> = Result<Response<T>, tonic::Status>;

/// The gRPC face of a [`Worker`].
#[derive(Clone)]
pub(crate) struct WorkerGrpc(pub(crate) Arc<Worker>);

fn ok<T>(r: Result<T, Status>) -> R<T> {
    r.map(Response::new).map_err(to_grpc)
}

fn unimplemented<T>(method: &str, why: &str) -> R<T> {
    Err(tonic::Status::unimplemented(format!("WorkerService.{method} is not implemented by ferroflow: {why}")))
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

    async fn run_graph(&self, _: Request<RunGraphRequest>) -> R<RunGraphResponse> {
        Err(super::served_raw("WorkerService.RunGraph"))
    }

    async fn cleanup_graph(&self, r: Request<CleanupGraphRequest>) -> R<CleanupGraphResponse> {
        self.0.cleanup_graph(r.get_ref());
        Ok(Response::new(CleanupGraphResponse {}))
    }

    async fn cleanup_all(&self, r: Request<CleanupAllRequest>) -> R<CleanupAllResponse> {
        self.0.cleanup_all(r.get_ref());
        Ok(Response::new(CleanupAllResponse {}))
    }

    async fn recv_tensor(&self, _: Request<RecvTensorRequest>) -> R<RecvTensorResponse> {
        Err(super::served_raw("WorkerService.RecvTensor"))
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
