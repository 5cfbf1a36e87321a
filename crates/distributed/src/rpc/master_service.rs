//! The master as a tonic `MasterService` (paths `/tensorflow.MasterService/*`) for the
//! RPCs that carry no tensors. RunStep is served below tonic (`run_step`: `Dispatch`
//! routes it there), so its handler here is never reached and says so.

use std::sync::Arc;

use ferroflow_core::proto::master_service_server::MasterService;
use ferroflow_core::proto::*;
use ferroflow_core::Status;
use tonic::{Request, Response};

use crate::master::Master;
use crate::rpc_util::to_grpc;

type R<T> = Result<Response<T>, tonic::Status>;

/// The gRPC face of a [`Master`].
#[derive(Clone)]
pub(crate) struct MasterGrpc(pub(crate) Arc<Master>);

fn ok<T>(r: Result<T, Status>) -> R<T> {
    r.map(Response::new).map_err(to_grpc)
}

#[tonic::async_trait]
impl MasterService for MasterGrpc {
    async fn create_session(&self, r: Request<CreateSessionRequest>) -> R<CreateSessionResponse> {
        ok(self.0.create_session(r.into_inner()).await)
    }

    async fn extend_session(&self, r: Request<ExtendSessionRequest>) -> R<ExtendSessionResponse> {
        ok(self.0.extend_session(r.into_inner()))
    }

    async fn partial_run_setup(&self, r: Request<PartialRunSetupRequest>) -> R<PartialRunSetupResponse> {
        ok(self.0.partial_run_setup(r.into_inner()).await)
    }

    async fn run_step(&self, _: Request<RunStepRequest>) -> R<RunStepResponse> {
        Err(super::served_raw("MasterService.RunStep"))
    }

    async fn close_session(&self, r: Request<CloseSessionRequest>) -> R<CloseSessionResponse> {
        ok(self.0.close_session(r.into_inner()).await)
    }

    async fn list_devices(&self, r: Request<ListDevicesRequest>) -> R<ListDevicesResponse> {
        ok(self.0.list_devices(r.into_inner()).await)
    }

    async fn reset(&self, r: Request<ResetRequest>) -> R<ResetResponse> {
        ok(self.0.reset(r.into_inner()).await)
    }

    async fn make_callable(&self, r: Request<MakeCallableRequest>) -> R<MakeCallableResponse> {
        ok(self.0.make_callable(r.into_inner()).await)
    }

    async fn run_callable(&self, r: Request<RunCallableRequest>) -> R<RunCallableResponse> {
        ok(self.0.run_callable(r.into_inner()).await)
    }

    async fn release_callable(&self, r: Request<ReleaseCallableRequest>) -> R<ReleaseCallableResponse> {
        ok(self.0.release_callable(r.into_inner()))
    }
}
