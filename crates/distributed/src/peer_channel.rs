//! [`PeerChannel`]: a channel to a peer whose responses' gRPC messages go through
//! [`crate::message_gate`] before tonic's decoder sees them, so a peer's declared length
//! cannot make this side reserve more than the task's budget or twice what arrived (as a
//! server's requests, see `dispatch.rs`). The generated clients ferroflow uses run over it.

use std::sync::Arc;
use std::task::{Context, Poll};

use tonic::body::Body;
use tonic::codegen::{BoxFuture, Service};
use tonic::transport::Channel;

use crate::message_gate::Gated;

/// A [`Channel`] whose response bodies are gated (see the module's doc).
#[derive(Clone, Debug)]
pub struct PeerChannel(Channel);

impl PeerChannel {
    /// Gates the responses of `channel`.
    pub fn new(channel: Channel) -> PeerChannel {
        PeerChannel(channel)
    }
}

impl Service<http::Request<Body>> for PeerChannel {
    type Response = http::Response<Body>;
    type Error = tonic::transport::Error;
    type Future = BoxFuture<Self::Response, Self::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<Body>) -> Self::Future {
        let what: Arc<str> = Arc::from(format!("a response of {}", req.uri().path()));
        let call = self.0.call(req);
        Box::pin(async move { Ok(call.await?.map(|b| Body::new(Gated::new(b, what)))) })
    }
}
