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

/// [`MasterApi`] for [`RemoteMaster`]: each method under `forward` is the generated client's
/// method of the same name, called with the deadline, errors naming the call (`$what`) and
/// the target; the items after it are the methods written out.
macro_rules! master_api {
    (forward { $($method:ident($req:ty) -> $resp:ty, $what:literal;)* } $($item:tt)*) => {
        #[async_trait::async_trait]
        impl MasterApi for RemoteMaster {
            $(
                async fn $method(&self, req: $req, deadline: Instant) -> Result<$resp, Status> {
                    master_client(self.channel.clone())
                        .$method(request_with_deadline(req, deadline))
                        .await
                        .map(|r| r.into_inner())
                        .map_err(|e| from_grpc_call(&e, &self.what($what), deadline))
                }
            )*
            $($item)*
        }
    };
}

master_api! {
    forward {
        create_session(CreateSessionRequest) -> CreateSessionResponse, "CreateSession";
        extend_session(ExtendSessionRequest) -> ExtendSessionResponse, "ExtendSession";
        partial_run_setup(PartialRunSetupRequest) -> PartialRunSetupResponse, "PartialRunSetup";
        close_session(CloseSessionRequest) -> CloseSessionResponse, "CloseSession";
        list_devices(ListDevicesRequest) -> ListDevicesResponse, "ListDevices";
        reset(ResetRequest) -> ResetResponse, "Reset";
    }

    async fn run_step(&self, call: RunStepCall, deadline: Instant) -> Result<RunStepReply, Status> {
        let what = self.what("RunStep");
        let bytes = crate::metrics::peer(strip_scheme(&self.target));
        let req = call.into_proto();
        let c = raw_grpc::Call { channel: self.channel.clone(), path: RUN_STEP, deadline, what: &what, peer: &bytes };
        let (resp, _): (RunStepResponse, _) = raw_grpc::unary(c, vec![raw_grpc::framed(&req)]).await?;
        RunStepReply::from_proto(resp, &what)
    }
}
