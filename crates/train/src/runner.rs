//! [`Runner`]: what the trainers need of a session, implemented by the in-process
//! `DirectSession` and the cluster `GrpcSession`, so one training loop serves both.

use ferroflow_core::{Status, Tensor};
use ferroflow_distributed::GrpcSession;
use ferroflow_graph::{Operation, Output};
use ferroflow_runtime::DirectSession;

/// Runs steps of a graph.
pub trait Runner {
    /// Runs one step: feeds replace tensors, fetches are returned in order, targets are run.
    fn run_step(
        &self,
        feeds: &[(&Output, Tensor)],
        fetches: &[&Output],
        targets: &[&Operation],
    ) -> Result<Vec<Tensor>, Status>;
}

impl Runner for DirectSession {
    fn run_step(
        &self,
        feeds: &[(&Output, Tensor)],
        fetches: &[&Output],
        targets: &[&Operation],
    ) -> Result<Vec<Tensor>, Status> {
        self.run(feeds, fetches, targets)
    }
}

impl Runner for GrpcSession {
    fn run_step(
        &self,
        feeds: &[(&Output, Tensor)],
        fetches: &[&Output],
        targets: &[&Operation],
    ) -> Result<Vec<Tensor>, Status> {
        self.run(feeds, fetches, targets)
    }
}
