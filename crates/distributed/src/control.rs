//! ferroflow's control service (`/ferroflow.Control/*`): Shutdown (so a parameter server
//! can be told to exit over RPC; TensorFlow has no way to do this) and ServerInfo.

use std::sync::Arc;

use tonic::{Request, Response};

/// Generated messages and stubs of package `ferroflow`.
pub mod proto {
    #![allow(clippy::all, clippy::pedantic, missing_docs)]
    include!(concat!(env!("OUT_DIR"), "/ferroflow.rs"));
}

pub use proto::control_client::ControlClient;
use proto::control_server::Control;
use proto::{ServerInfoRequest, ServerInfoResponse, ShutdownRequest, ShutdownResponse};

use crate::server::ServerShared;

/// The control service of a server.
#[derive(Clone)]
pub(crate) struct ControlService(pub(crate) Arc<ServerShared>);

#[tonic::async_trait]
impl Control for ControlService {
    async fn shutdown(&self, r: Request<ShutdownRequest>) -> Result<Response<ShutdownResponse>, tonic::Status> {
        // The dispatcher admitted the caller (a control RPC); this names it in the log.
        let peer = r.remote_addr().map(|a| a.to_string()).unwrap_or_else(|| "?".into());
        tracing::info!(task = %self.0.task, reason = %r.get_ref().reason, %peer, "shutdown requested over RPC");
        // Reply first; the server stops right after (graceful: in-flight calls finish).
        let shared = self.0.clone();
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            shared.request_shutdown();
        });
        Ok(Response::new(ShutdownResponse {}))
    }

    async fn server_info(&self, _: Request<ServerInfoRequest>) -> Result<Response<ServerInfoResponse>, tonic::Status> {
        Ok(Response::new(self.0.info()))
    }
}
