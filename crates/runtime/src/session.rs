//! [`Session`]: what savers, summaries and trainers need from a session, implemented by
//! the in-process [`crate::DirectSession`] and by the distributed `GrpcSession`.

use ferroflow_core::{Status, Tensor};

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
