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
        let f: Vec<(String, Tensor)> = feeds.iter().map(|(o, t)| (o.name(), t.clone())).collect();
        let x: Vec<String> = fetches.iter().map(|o| o.name()).collect();
        let t: Vec<String> = targets.iter().map(|o| o.name.clone()).collect();
        self.run_step(&f, &x, &t, &RunOptions::default())
    }
}
