//! Partial runs from the Rust client (TensorFlow's `Session.partial_run_setup` /
//! `partial_run`): one step fed and fetched over several calls.

use std::time::Instant;

use ferroflow_core::proto::{PartialRunSetupRequest, RunStepRequest};
use ferroflow_core::{Status, Tensor};
use ferroflow_graph::{Operation, Output};

use super::{GrpcSession, DEFAULT_STEP, RPC_TIMEOUT, STEP_MARGIN};
use crate::ids::new_request_id;
use crate::master_api::RunStepCall;

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
        let r = self
            .rpc("PartialRunSetup", RPC_TIMEOUT, |m, d| Box::pin(async move { m.partial_run_setup(req, d).await }))?;
        Ok(PartialRunHandle(r.partial_run_handle))
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
            fetch: fetch.clone(),
            partial_run_handle: handle.0.clone(),
            store_errors_in_response_body: true,
            request_id: new_request_id(),
            ..Default::default()
        };
        let call = RunStepCall { req, feeds: feeds.iter().map(|(o, t)| (o.name(), t.clone())).collect() };
        let deadline = Instant::now() + DEFAULT_STEP + STEP_MARGIN;
        let what = self.what("RunStep (partial run)");
        let reply = self.call(what, deadline, "no reply within the step deadline", None, |m| {
            Box::pin(async move { m.run_step(call, deadline).await })
        })?;
        self.in_fetch_order(reply.tensors, &fetch)
    }
}
