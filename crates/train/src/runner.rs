//! Tracing one training step to a Chrome trace file: the training loop runs the step
//! traced (FULL_TRACE) and writes its step stats here.

use std::path::PathBuf;

use ferroflow_core::Status;

/// Which training step to trace, and the Chrome trace file to write it to
/// (`ferroflow train --trace_step N --trace_file F`).
#[derive(Clone, Debug)]
pub struct TraceRequest {
    /// The step (1-based, counted by the process that trains) to trace.
    pub step: usize,
    pub path: PathBuf,
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
