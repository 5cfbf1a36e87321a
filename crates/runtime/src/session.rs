//! [`StepRunner`]: what savers, summaries and trainers need from a session (TensorFlow's
//! C++ `Session` interface), implemented by the in-process [`crate::DirectSession`], the
//! distributed `GrpcSession` and the facade's `Session`.

use ferroflow_core::proto::RunMetadata;
use ferroflow_core::{Status, Tensor};

use ferroflow_graph::{Operation, Output};

use crate::RunOptions;

/// Runs steps, with tensors (`node:idx`) and targets (node names) named as strings or given
/// as typed handles.
pub trait StepRunner {
    /// Runs one step: feeds replace tensors, fetches are returned in order, targets run;
    /// with the step's metadata (its trace and graphs, when `opts` asks for them).
    fn run_by_name_meta(&self, step: StepArgs<'_>) -> Result<(Vec<Tensor>, RunMetadata), Status>;

    /// [`StepRunner::run_by_name_meta`] without the metadata.
    fn run_by_name(
        &self,
        feeds: &[(String, Tensor)],
        fetches: &[String],
        targets: &[String],
        opts: &RunOptions,
    ) -> Result<Vec<Tensor>, Status> {
        self.run_by_name_meta(StepArgs { feeds, fetches, targets, opts }).map(|(t, _)| t)
    }

    /// Runs one step given typed handles: feeds replace tensors, fetches are returned in
    /// order, targets run.
    fn run(
        &self,
        feeds: &[(&Output, Tensor)],
        fetches: &[&Output],
        targets: &[&Operation],
    ) -> Result<Vec<Tensor>, Status> {
        let (f, x, t) = step_names(feeds, fetches, targets);
        self.run_by_name(&f, &x, &t, &RunOptions::default())
    }

    /// [`StepRunner::run`] with the step traced (every device's step stats).
    fn run_traced(
        &self,
        feeds: &[(&Output, Tensor)],
        fetches: &[&Output],
        targets: &[&Operation],
    ) -> Result<(Vec<Tensor>, RunMetadata), Status> {
        let (f, x, t) = step_names(feeds, fetches, targets);
        let opts = RunOptions { trace: true, ..Default::default() };
        self.run_by_name_meta(StepArgs { feeds: &f, fetches: &x, targets: &t, opts: &opts })
    }
}

/// One step's feeds, fetches and targets by name, and its options, as
/// [`StepRunner::run_by_name_meta`] takes them.
#[derive(Clone, Copy, Debug)]
pub struct StepArgs<'a> {
    /// Tensors (`node:idx`) replaced by values.
    pub feeds: &'a [(String, Tensor)],
    /// Tensors returned, in order.
    pub fetches: &'a [String],
    /// Nodes run for their effects.
    pub targets: &'a [String],
    /// Timeout and tracing.
    pub opts: &'a RunOptions,
}

/// Feeds, fetches and targets by name, as [`StepRunner::run_by_name`] takes them.
pub type NamedStep = (Vec<(String, Tensor)>, Vec<String>, Vec<String>);

/// Turns typed feeds, fetches and targets into names (`node:idx`, node names).
pub fn step_names(feeds: &[(&Output, Tensor)], fetches: &[&Output], targets: &[&Operation]) -> NamedStep {
    (
        feeds.iter().map(|(o, t)| (o.name(), t.clone())).collect(),
        fetches.iter().map(|o| o.name()).collect(),
        targets.iter().map(|o| o.name.clone()).collect(),
    )
}
