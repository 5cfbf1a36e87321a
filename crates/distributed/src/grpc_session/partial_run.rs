//! Partial runs from the Rust client (TensorFlow's `Session.partial_run_setup` /
//! `partial_run`): one step fed and fetched over several calls.

use std::time::Instant;

use ferroflow_core::proto::{NamedTensorProto, PartialRunSetupRequest, RunStepRequest};
use ferroflow_core::{Status, Tensor};
use ferroflow_graph::{Operation, Output};

use super::{GrpcSession, DEFAULT_STEP, RPC_TIMEOUT, STEP_MARGIN};
use crate::client_runtime::block_on;
use crate::ids::new_request_id;
use crate::rpc_util::{from_grpc, request_with_deadline};

/// A partial run set up by [`GrpcSession::partial_run_setup`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartialRunHandle(String);

impl GrpcSession {
    /// Sets up a partial run that will feed `feeds`, fetch `fetches` and run `targets`,
    /// over any number of [`GrpcSession::partial_run`] calls.
    pub fn partial_run_setup(
        &self,
        feeds: &[&Output],
        fetches: &[&Output],
        targets: &[&Operation],
    ) -> Result<PartialRunHandle, Status> {
        let session_handle = self.sync_graph()?;
        let req = PartialRunSetupRequest {
            session_handle,
            feed: feeds.iter().map(|o| o.name()).collect(),
            fetch: fetches.iter().map(|o| o.name()).collect(),
            target: targets.iter().map(|o| o.name.clone()).collect(),
            request_id: new_request_id(),
        };
        let mut c = self.client.clone();
        let what = self.what("PartialRunSetup");
        let deadline = Instant::now() + RPC_TIMEOUT;
        let r = block_on(async move {
            c.partial_run_setup(request_with_deadline(req, deadline)).await.map_err(|e| from_grpc(&e, &what))
        })?;
        Ok(PartialRunHandle(r.into_inner().partial_run_handle))
    }

    /// Feeds some of the partial run's feeds and fetches some of its fetches; each may be
    /// given once. The call that completes them all ends the run.
    pub fn partial_run(
        &self,
        handle: &PartialRunHandle,
        feeds: &[(&Output, Tensor)],
        fetches: &[&Output],
    ) -> Result<Vec<Tensor>, Status> {
        let session_handle = self.sync_graph()?;
        let fetch: Vec<String> = fetches.iter().map(|o| o.name()).collect();
        let req = RunStepRequest {
            session_handle,
            feed: feeds.iter().map(|(o, t)| NamedTensorProto { name: o.name(), tensor: Some(t.to_proto()) }).collect(),
            fetch: fetch.clone(),
            partial_run_handle: handle.0.clone(),
            store_errors_in_response_body: true,
            request_id: new_request_id(),
            ..Default::default()
        };
        let mut c = self.client.clone();
        let what = self.what("RunStep (partial run)");
        let deadline = Instant::now() + DEFAULT_STEP + STEP_MARGIN;
        let resp = block_on(async move {
            c.run_step(request_with_deadline(req, deadline))
                .await
                .map(|r| r.into_inner())
                .map_err(|e| from_grpc(&e, &what))
        });
        self.finish_run_step(resp, None, &fetch).map(|(t, _)| t)
    }
}
