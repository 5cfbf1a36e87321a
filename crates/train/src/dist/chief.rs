//! What only the chief worker does with `--logdir`: restore the latest checkpoint when the
//! ps tasks lost the model, save checkpoints every `save_secs` and at the end (values are
//! pulled from the ps tasks to the chief, so no shared filesystem is needed), and write
//! TensorBoard summaries and the graph.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use ferroflow_core::proto::GraphDef;
use ferroflow_core::{Status, Tensor};
use ferroflow_graph::{Output, Scope};
use ferroflow_runtime::StepRunner;

use crate::saver::{latest_checkpoint, Saver, SaverOptions};
use crate::summary::{self, FileWriter};

/// The checkpoint and summary nodes every worker adds to its graph (only the chief runs
/// them), so all workers build the same graph.
pub(crate) struct ChiefNodes {
    pub saver: Saver,
    pub summary: Option<Output>,
}

/// Adds the saver (ops on the chief's device) and the loss/accuracy/logits summaries.
pub(crate) fn build_nodes(
    root: &Scope,
    s: &Scope,
    loss: &Output,
    accuracy: &Output,
    logits: &Output,
) -> Result<ChiefNodes, Status> {
    summary::scalar(s, "loss", loss.clone());
    summary::scalar(s, "accuracy", accuracy.clone());
    summary::histogram(s, "logits", logits.clone());
    let summary = summary::merge_all(s);
    let saver = Saver::with_options(
        root,
        SaverOptions { device: "/job:worker/task:0".into(), max_to_keep: 5, ..Default::default() },
    )?;
    Ok(ChiefNodes { saver, summary })
}

/// The chief's checkpointing and summary writing.
pub(crate) struct Chief {
    logdir: PathBuf,
    writer: FileWriter,
    save_every: Duration,
    last_save: Instant,
    pub summary_every: usize,
}

impl Chief {
    pub fn new(logdir: PathBuf, save_every: Duration, summary_every: usize, graph: &GraphDef) -> Result<Chief, Status> {
        let mut writer = FileWriter::new(&logdir)?;
        writer.add_graph(graph)?;
        writer.flush()?;
        Ok(Chief { logdir, writer, save_every, last_save: Instant::now(), summary_every: summary_every.max(1) })
    }

    fn prefix(&self) -> String {
        self.logdir.join("model.ckpt").display().to_string()
    }

    /// Restores the latest checkpoint of the logdir, if there is one.
    pub fn restore_latest(&self, sess: &dyn StepRunner, nodes: &ChiefNodes) -> Result<Option<String>, Status> {
        match latest_checkpoint(&self.logdir)? {
            Some(p) => {
                nodes.saver.restore(sess, &p)?;
                Ok(Some(p))
            }
            None => Ok(None),
        }
    }

    /// Writes a merged summary fetched with a training step.
    pub fn add_summary(&mut self, summary: &Tensor, step: i64) -> Result<(), Status> {
        let bytes = summary.scalar_value::<Vec<u8>>()?;
        self.writer.add_summary(&bytes, step)?;
        self.writer.flush()
    }

    /// Saves a checkpoint when `save_every` has passed (or `force`); returns its path.
    pub fn maybe_save(
        &mut self,
        sess: &dyn StepRunner,
        nodes: &ChiefNodes,
        step: i64,
        force: bool,
    ) -> Result<Option<String>, Status> {
        if !force && self.last_save.elapsed() < self.save_every {
            return Ok(None);
        }
        let p = nodes.saver.save(sess, &self.prefix(), Some(step))?;
        self.last_save = Instant::now();
        Ok(Some(p))
    }

    /// Writes the final test accuracy as a scalar and closes the event file.
    pub fn finish(&mut self, test_accuracy: f64, step: i64) -> Result<(), Status> {
        self.writer.add_scalar("test_accuracy", test_accuracy as f32, step)?;
        self.writer.close()
    }
}
