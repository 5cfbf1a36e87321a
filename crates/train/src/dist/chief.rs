//! What the chief of a between-graph trainer records: the summaries of the training loss,
//! accuracy and logits (written by the monitored session's summary hook every
//! `--summary_steps`), the saver it checkpoints and restores with (pinned to the chief's
//! task, the last five checkpoints kept), and the final test accuracy.

use std::path::Path;

use ferroflow_core::Status;
use ferroflow_graph::{Output, Scope};

use crate::saver::{Saver, SaverOptions};
use crate::summary::{self, FileWriter};

/// Adds the summaries to `s` and returns the chief's saver over `root`'s variables.
pub(crate) fn build_nodes(
    root: &Scope,
    s: &Scope,
    loss: &Output,
    accuracy: &Output,
    logits: &Output,
) -> Result<Saver, Status> {
    summary::scalar(s, "loss", loss.clone());
    summary::scalar(s, "accuracy", accuracy.clone());
    summary::histogram(s, "logits", logits.clone());
    Saver::with_options(
        root,
        SaverOptions { device: "/job:worker/task:0".into(), max_to_keep: 5, ..Default::default() },
    )
}

/// Records the test accuracy reached at `step` in `logdir`'s events (TensorBoard's
/// `test_accuracy` scalar).
pub(crate) fn record_accuracy(logdir: &Path, accuracy: f64, step: i64) -> Result<(), Status> {
    let mut w = FileWriter::new(logdir)?;
    w.add_scalar("test_accuracy", accuracy as f32, step)?;
    w.close()
}
