//! The eager service as tonic's `EagerService` (paths `/tensorflow.eager.EagerService/*`).
//! StreamingEnqueue answers each request of the stream in order, one response each, and
//! ends the stream with the first error (TensorFlow's server does the same).

use std::pin::Pin;
use std::sync::Arc;

use ferroflow_core::proto::eager::eager_service_server::EagerService as EagerApi;
use ferroflow_core::proto::eager::*;
use tokio_stream::{Stream, StreamExt};
use tonic::{Request, Response, Streaming};

use crate::eager::EagerService;
use crate::rpc_util::{request_deadline, to_grpc};

type R<T> = Result<Response<T>, tonic::Status>;

/// The gRPC face of a task's [`EagerService`].
#[derive(Clone)]
pub(crate) struct EagerGrpc(pub(crate) Arc<EagerService>);

type EnqueueStream = Pin<Box<dyn Stream<Item = Result<EnqueueResponse, tonic::Status>> + Send>>;

#[tonic::async_trait]
impl EagerApi for EagerGrpc {
    async fn create_context(&self, r: Request<CreateContextRequest>) -> R<CreateContextResponse> {
        self.0.create_context(r.into_inner()).map(Response::new).map_err(to_grpc)
    }

    async fn update_context(&self, r: Request<UpdateContextRequest>) -> R<UpdateContextResponse> {
        self.0.update_context(r.into_inner()).map(Response::new).map_err(to_grpc)
    }

    async fn enqueue(&self, r: Request<EnqueueRequest>) -> R<EnqueueResponse> {
        let deadline = request_deadline(&r);
        self.0.enqueue(r.into_inner(), deadline).await.map(Response::new).map_err(to_grpc)
    }

    type StreamingEnqueueStream = EnqueueStream;

    async fn streaming_enqueue(&self, r: Request<Streaming<EnqueueRequest>>) -> R<EnqueueStream> {
        let service = self.0.clone();
        let mut incoming = r.into_inner();
        let (tx, rx) = tokio::sync::mpsc::channel(16);
        tokio::spawn(async move {
            while let Some(next) = incoming.next().await {
                let reply = match next {
                    Ok(req) => service.enqueue(req, None).await.map_err(to_grpc),
                    Err(e) => Err(e),
                };
                let failed = reply.is_err();
                if tx.send(reply).await.is_err() || failed {
                    return;
                }
            }
        });
        Ok(Response::new(Box::pin(tokio_stream::wrappers::ReceiverStream::new(rx))))
    }

    async fn wait_queue_done(&self, r: Request<WaitQueueDoneRequest>) -> R<WaitQueueDoneResponse> {
        self.0.wait_queue_done(r.get_ref()).map(|_| Response::new(WaitQueueDoneResponse {})).map_err(to_grpc)
    }

    async fn run_component_function(&self, r: Request<RunComponentFunctionRequest>) -> R<RunComponentFunctionResponse> {
        let deadline = request_deadline(&r);
        self.0.run_component_function(r.into_inner(), deadline).await.map(Response::new).map_err(to_grpc)
    }

    async fn keep_alive(&self, r: Request<KeepAliveRequest>) -> R<KeepAliveResponse> {
        self.0.keep_alive(r.get_ref()).map(Response::new).map_err(to_grpc)
    }

    async fn close_context(&self, r: Request<CloseContextRequest>) -> R<CloseContextResponse> {
        self.0.close_context(r.get_ref());
        Ok(Response::new(CloseContextResponse {}))
    }
}
