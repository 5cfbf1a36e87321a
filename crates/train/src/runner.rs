//! [`Runner`]: typed steps (`Output`/`Operation` handles) on any runtime
//! [`Session`](ferroflow_runtime::Session) — the in-process `DirectSession` or a cluster's
//! `GrpcSession` — so one training loop serves both.

use std::path::PathBuf;

use ferroflow_core::proto::RunMetadata;
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

    /// [`Runner::run_typed`] with the step traced (every device's step stats).
    fn run_typed_traced(
        &self,
        feeds: &[(&Output, Tensor)],
        fetches: &[&Output],
        targets: &[&Operation],
    ) -> Result<(Vec<Tensor>, RunMetadata), Status>;
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

    fn run_typed_traced(
        &self,
        feeds: &[(&Output, Tensor)],
        fetches: &[&Output],
        targets: &[&Operation],
    ) -> Result<(Vec<Tensor>, RunMetadata), Status> {
        let (f, x, t) = ferroflow_runtime::step_names(feeds, fetches, targets);
        self.run_step_meta(&f, &x, &t, &RunOptions { trace: true, ..Default::default() })
    }
}

/// Which training step to trace, and the Chrome trace file to write it to
/// (`ferroflow train --trace_step N --trace_file F`).
#[derive(Clone, Debug)]
pub struct TraceRequest {
    /// The step (1-based, counted by the process that trains) to trace.
    pub step: usize,
    pub path: PathBuf,
}

/// Runs a training step, traced and written to the trace file when it is the step `trace`
/// names.
pub fn run_step_maybe_traced(
    sess: &(impl Runner + ?Sized),
    trace: Option<&TraceRequest>,
    step: usize,
    feeds: &[(&Output, Tensor)],
    fetches: &[&Output],
    targets: &[&Operation],
) -> Result<Vec<Tensor>, Status> {
    let Some(req) = trace.filter(|r| r.step == step) else {
        return sess.run_typed(feeds, fetches, targets);
    };
    let (out, meta) = sess.run_typed_traced(feeds, fetches, targets)?;
    let stats = meta.step_stats.unwrap_or_default();
    std::fs::write(&req.path, ferroflow_runtime::chrome_trace::chrome_trace(&stats)).map_err(|e| {
        Status::unavailable(format!("cannot write the trace of step {step} to {}: {e}", req.path.display()))
    })?;
    tracing::info!(step, path = %req.path.display(), devices = stats.dev_stats.len(), "wrote step trace");
    Ok(out)
}
