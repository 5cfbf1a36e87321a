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
use crate::worker_api::{CollectiveReply, CollectiveRpc};

type R<T> = Result<Response<T>, tonic::Status>;

/// The gRPC face of a [`Worker`].
#[derive(Clone)]
pub(crate) struct WorkerGrpc(pub(crate) Arc<Worker>);

fn ok<T>(r: Result<T, Status>) -> R<T> {
    r.map(Response::new).map_err(to_grpc)
}

/// When a call ends: its `grpc-timeout`, capped by the worker's longest wait (a
/// TensorFlow client sends CompleteGroup with none: it waits for the group).
fn deadline_of<T>(r: &Request<T>, w: &Worker) -> std::time::Instant {
    let most = w.opts.max_recv_wait;
    let t = r
        .metadata()
        .get("grpc-timeout")
        .and_then(|v| v.to_str().ok())
        .and_then(crate::rpc_util::parse_grpc_timeout)
        .map_or(most, |t| t.min(most));
    std::time::Instant::now() + t
}

/// Serves the collective RPC `$kind` of request `$r` (deadline from its `grpc-timeout`):
/// the reply must be of the same kind and is answered as is or mapped by `$reply`.
macro_rules! serve_collective {
    ($self:ident, $r:ident, $kind:ident) => {
        serve_collective!($self, $r, $kind, |x| x)
    };
    ($self:ident, $r:ident, $kind:ident, $reply:expr) => {{
        let deadline = deadline_of(&$r, &$self.0);
        match $self.0.collectives.serve(CollectiveRpc::$kind($r.into_inner()), $self.0.incarnation, deadline).await {
            Ok(CollectiveReply::$kind(x)) => Ok(Response::new(($reply)(x))),
            Ok(_) => Err(tonic::Status::internal(concat!(stringify!($kind), ": wrong reply kind"))),
            Err(e) => Err(to_grpc(e)),
        }
    }};
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

    async fn recv_buf(&self, r: Request<RecvBufRequest>) -> R<RecvBufResponse> {
        let piece = self.0.collectives.recv_piece();
        serve_collective!(self, r, RecvBuf, |b| super::convert::recv_buf_response(b, piece))
    }

    async fn logging(&self, _: Request<LoggingRequest>) -> R<LoggingResponse> {
        Ok(Response::new(LoggingResponse::default()))
    }

    async fn tracing(&self, _: Request<TracingRequest>) -> R<TracingResponse> {
        unimplemented("Tracing", "use RunOptions tracing instead (TensorFlow answers the same)")
    }

    async fn complete_group(&self, r: Request<CompleteGroupRequest>) -> R<CompleteGroupResponse> {
        serve_collective!(self, r, CompleteGroup)
    }

    async fn complete_instance(&self, r: Request<CompleteInstanceRequest>) -> R<CompleteInstanceResponse> {
        serve_collective!(self, r, CompleteInstance)
    }

    async fn get_step_sequence(&self, r: Request<GetStepSequenceRequest>) -> R<GetStepSequenceResponse> {
        serve_collective!(self, r, GetStepSequence)
    }

    async fn mark_recv_finished(&self, _: Request<MarkRecvFinishedRequest>) -> R<MarkRecvFinishedResponse> {
        unimplemented("MarkRecvFinished", "RPC response caching (rpc_options.cache_rpc_response) is not supported")
    }
}
