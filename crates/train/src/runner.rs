//! [`Runner`]: typed steps (`Output`/`Operation` handles) on any runtime
//! [`Session`](ferroflow_runtime::Session) — the in-process `DirectSession` or a cluster's
//! `GrpcSession` — so one training loop serves both.

use ferroflow_core::{Status, Tensor};
use ferroflow_graph::{Operation, Output};
use ferroflow_runtime::{RunOptions, Session};

/// Runs steps of a graph with typed handles.
pub trait Runner {
    /// Runs one step: feeds replace tensors, fetches are returned in order, targets are run.
    fn run_typed(
        &self,
        feeds: &[(&Output, Tensor)],
        fetches: &[&Output],
        targets: &[&Operation],
    ) -> Result<Vec<Tensor>, Status>;
}

impl<S: Session + ?Sized> Runner for S {
    fn run_typed(
        &self,
        feeds: &[(&Output, Tensor)],
        fetches: &[&Output],
        targets: &[&Operation],
    ) -> Result<Vec<Tensor>, Status> {
        let (f, x, t) = ferroflow_runtime::step_names(feeds, fetches, targets);
        self.run_step(&f, &x, &t, &RunOptions::default())
    }
}
