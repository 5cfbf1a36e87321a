//! [`Session`]: what savers, summaries and trainers need from a session, implemented by
//! the in-process [`crate::DirectSession`] and by the distributed `GrpcSession`.

use ferroflow_core::{Status, Tensor};

use ferroflow_graph::{Operation, Output};

use crate::RunOptions;

/// Runs steps with tensors (`node:idx`) and targets (node names) named as strings.
pub trait Session {
    /// Runs one step: feeds replace tensors, fetches are returned in order, targets run.
    fn run_step(
        &self,
        feeds: &[(String, Tensor)],
        fetches: &[String],
        targets: &[String],
        opts: &RunOptions,
    ) -> Result<Vec<Tensor>, Status>;
}

impl Session for crate::DirectSession {
    fn run_step(
        &self,
        feeds: &[(String, Tensor)],
        fetches: &[String],
        targets: &[String],
        opts: &RunOptions,
    ) -> Result<Vec<Tensor>, Status> {
        self.run_by_name(feeds, fetches, targets, opts)
    }
}

/// Feeds, fetches and targets given by typed handles, as the names [`Session::run_step`]
/// and the `run_by_name` methods take.
pub type NamedStep = (Vec<(String, Tensor)>, Vec<String>, Vec<String>);

/// Turns typed feeds, fetches and targets into names (`node:idx`, node names).
pub fn step_names(feeds: &[(&Output, Tensor)], fetches: &[&Output], targets: &[&Operation]) -> NamedStep {
    (
        feeds.iter().map(|(o, t)| (o.name(), t.clone())).collect(),
        fetches.iter().map(|o| o.name()).collect(),
        targets.iter().map(|o| o.name.clone()).collect(),
    )
}
