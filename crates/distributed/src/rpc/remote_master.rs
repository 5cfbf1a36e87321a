//! A master in another process (or reached by address) over gRPC: [`MasterApi`] as calls
//! on a channel, each with its deadline, errors naming the call and the target. RunStep
//! goes below tonic's codec (fed tensors go out and fetched ones come in as their own
//! buffers); the other methods through the generated client.

use std::time::Instant;

use ferroflow_core::proto::*;
use ferroflow_core::Status;
use tonic::transport::Channel;

use super::run_step::PATH as RUN_STEP;
use crate::channels::{master_client, strip_scheme};
use crate::master_api::{MasterApi, RunStepCall, RunStepReply};
use crate::raw_grpc;
use crate::rpc_util::{from_grpc_call, request_with_deadline};

/// The master at a target.
pub(crate) struct RemoteMaster {
    target: String,
    channel: Channel,
}

/// A call through the generated client with the deadline, errors naming the target.
macro_rules! call {
    ($self:ident, $method:ident, $req:expr, $deadline:expr, $what:expr) => {{
        let mut c = master_client($self.channel.clone());
        let deadline = $deadline;
        c.$method(request_with_deadline($req, deadline))
            .await
            .map(|r| r.into_inner())
            .map_err(|e| from_grpc_call(&e, &$self.what($what), deadline))
    }};
}

impl RemoteMaster {
    /// The master at `target` (`grpc://host:port`), over `channel`.
    pub(crate) fn new(target: String, channel: Channel) -> RemoteMaster {
        RemoteMaster { target, channel }
    }

    /// "`method` on `target`".
    pub(crate) fn what(&self, method: &str) -> String {
        format!("{method} on {}", self.target)
    }
}

#[async_trait::async_trait]
impl MasterApi for RemoteMaster {
    async fn create_session(
        &self,
        req: CreateSessionRequest,
        deadline: Instant,
    ) -> Result<CreateSessionResponse, Status> {
        call!(self, create_session, req, deadline, "CreateSession")
    }

    async fn extend_session(
        &self,
        req: ExtendSessionRequest,
        deadline: Instant,
    ) -> Result<ExtendSessionResponse, Status> {
        call!(self, extend_session, req, deadline, "ExtendSession")
    }

    async fn partial_run_setup(
        &self,
        req: PartialRunSetupRequest,
        deadline: Instant,
    ) -> Result<PartialRunSetupResponse, Status> {
        call!(self, partial_run_setup, req, deadline, "PartialRunSetup")
    }

    async fn run_step(&self, call: RunStepCall, deadline: Instant) -> Result<RunStepReply, Status> {
        let what = self.what("RunStep");
        let bytes = crate::metrics::peer(strip_scheme(&self.target));
        let req = call.into_proto();
        let c = raw_grpc::Call { channel: self.channel.clone(), path: RUN_STEP, deadline, what: &what, peer: &bytes };
        let (resp, _): (RunStepResponse, _) = raw_grpc::unary(c, vec![raw_grpc::framed(&req)]).await?;
        RunStepReply::from_proto(resp, &what)
    }

    async fn close_session(&self, req: CloseSessionRequest, deadline: Instant) -> Result<CloseSessionResponse, Status> {
        call!(self, close_session, req, deadline, "CloseSession")
    }

    async fn list_devices(&self, req: ListDevicesRequest, deadline: Instant) -> Result<ListDevicesResponse, Status> {
        call!(self, list_devices, req, deadline, "ListDevices")
    }

    async fn reset(&self, req: ResetRequest, deadline: Instant) -> Result<ResetResponse, Status> {
        call!(self, reset, req, deadline, "Reset")
    }
}
