//! What a client asks of a master, without a transport: TensorFlow's MasterInterface.
//! [`Master`] answers it in-process; `rpc::RemoteMaster` over gRPC. RunStep's request and
//! reply carry [`Tensor`]s, so a client whose master is in its own process (the
//! between-graph trainer's case) never encodes or decodes a fed or fetched tensor; the
//! proto conversions live once, in `rpc/`.

use std::time::Instant;

use ferroflow_core::proto::{
    CloseSessionRequest, CloseSessionResponse, CreateSessionRequest, CreateSessionResponse, ExtendSessionRequest,
    ExtendSessionResponse, ListDevicesRequest, ListDevicesResponse, PartialRunSetupRequest, PartialRunSetupResponse,
    ResetRequest, ResetResponse, RunMetadata, RunStepRequest,
};
use ferroflow_core::{Status, Tensor};

use crate::master::Master;

/// A RunStep request: the wire request's fields, with the fed tensors (by the names the
/// client used) as tensors; `req.feed` is left empty.
#[derive(Debug, Default)]
pub struct RunStepCall {
    /// Session, fetches, targets, options, partial-run handle, request id.
    pub req: RunStepRequest,
    /// The fed tensors, by tensor name (`node:idx`).
    pub feeds: Vec<(String, Tensor)>,
}

/// A RunStep reply: the fetched tensors in the order and under the names of the
/// request's fetches, and the step's metadata when asked for (traces, partition graphs).
#[derive(Debug, Default)]
pub struct RunStepReply {
    /// The fetched tensors, by the names the request used.
    pub tensors: Vec<(String, Tensor)>,
    /// Step stats and partition graphs, when the request's options asked for them.
    pub metadata: Option<RunMetadata>,
}

/// A master as a client sees it. `deadline` bounds the call as the client sees it; the
/// master bounds the work itself (step deadlines, discovery waits).
#[async_trait::async_trait]
pub trait MasterApi: Send + Sync {
    /// CreateSession.
    async fn create_session(
        &self,
        req: CreateSessionRequest,
        deadline: Instant,
    ) -> Result<CreateSessionResponse, Status>;

    /// ExtendSession: adds nodes to the session's graph.
    async fn extend_session(
        &self,
        req: ExtendSessionRequest,
        deadline: Instant,
    ) -> Result<ExtendSessionResponse, Status>;

    /// PartialRunSetup.
    async fn partial_run_setup(
        &self,
        req: PartialRunSetupRequest,
        deadline: Instant,
    ) -> Result<PartialRunSetupResponse, Status>;

    /// RunStep (a whole step, or one call of a partial run).
    async fn run_step(&self, call: RunStepCall, deadline: Instant) -> Result<RunStepReply, Status>;

    /// CloseSession.
    async fn close_session(&self, req: CloseSessionRequest, deadline: Instant) -> Result<CloseSessionResponse, Status>;

    /// ListDevices.
    async fn list_devices(&self, req: ListDevicesRequest, deadline: Instant) -> Result<ListDevicesResponse, Status>;

    /// Reset: closes every session and clears resource containers.
    async fn reset(&self, req: ResetRequest, deadline: Instant) -> Result<ResetResponse, Status>;
}

/// A master in this process, called directly.
#[async_trait::async_trait]
impl MasterApi for Master {
    async fn create_session(&self, req: CreateSessionRequest, _: Instant) -> Result<CreateSessionResponse, Status> {
        Master::create_session(self, req).await
    }

    async fn extend_session(&self, req: ExtendSessionRequest, _: Instant) -> Result<ExtendSessionResponse, Status> {
        Master::extend_session(self, req)
    }

    async fn partial_run_setup(
        &self,
        req: PartialRunSetupRequest,
        _: Instant,
    ) -> Result<PartialRunSetupResponse, Status> {
        Master::partial_run_setup(self, req).await
    }

    async fn run_step(&self, call: RunStepCall, _: Instant) -> Result<RunStepReply, Status> {
        Master::run_step(self, call).await
    }

    async fn close_session(&self, req: CloseSessionRequest, _: Instant) -> Result<CloseSessionResponse, Status> {
        Master::close_session(self, req).await
    }

    async fn list_devices(&self, req: ListDevicesRequest, _: Instant) -> Result<ListDevicesResponse, Status> {
        Master::list_devices(self, req).await
    }

    async fn reset(&self, req: ResetRequest, _: Instant) -> Result<ResetResponse, Status> {
        Master::reset(self, req).await
    }
}
