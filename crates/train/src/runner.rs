//! Tracing one training step to a Chrome trace file, on any
//! [`StepRunner`](ferroflow_runtime::StepRunner) (the in-process `DirectSession` or a
//! cluster's `GrpcSession`), so one training loop serves both.

use std::path::PathBuf;

use ferroflow_core::{Status, Tensor};
use ferroflow_graph::{Operation, Output};
use ferroflow_runtime::StepRunner;

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
    sess: &(impl StepRunner + ?Sized),
    trace: Option<&TraceRequest>,
    step: usize,
    feeds: &[(&Output, Tensor)],
    fetches: &[&Output],
    targets: &[&Operation],
) -> Result<Vec<Tensor>, Status> {
    let Some(req) = trace.filter(|r| r.step == step) else {
        return sess.run(feeds, fetches, targets);
    };
    let (out, meta) = sess.run_traced(feeds, fetches, targets)?;
    write_trace(req, step, meta)?;
    Ok(out)
}

/// Writes the trace of training step `step` (its `RunMetadata`) to `req.path`.
pub fn write_trace(req: &TraceRequest, step: usize, meta: ferroflow_core::proto::RunMetadata) -> Result<(), Status> {
    let stats = meta.step_stats.unwrap_or_default();
    std::fs::write(&req.path, ferroflow_runtime::chrome_trace::chrome_trace(&stats)).map_err(|e| {
        Status::unavailable(format!("cannot write the trace of step {step} to {}: {e}", req.path.display()))
    })?;
    tracing::info!(step, path = %req.path.display(), devices = stats.dev_stats.len(), "wrote step trace");
    Ok(())
}
