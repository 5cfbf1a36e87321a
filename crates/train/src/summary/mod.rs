//! Summaries for TensorBoard: op helpers (`scalar`, `histogram`, [`merge_all`]) and the
//! event [`FileWriter`] (the kernels crate's, which the summary-writer ops use too).
//!
//! ```
//! use ferroflow_graph::{ops, Scope};
//! use ferroflow_runtime::{DirectSession, StepRunner};
//! use ferroflow_train::summary::{merge_all, scalar, FileWriter};
//! let s = Scope::new_root();
//! scalar(&s, "loss", ops::constant(&s, 0.25f32));
//! let merged = merge_all(&s).unwrap();
//! let sess = DirectSession::new(s.graph());
//! let out = sess.run(&[], &[&merged], &[]).unwrap();
//! let dir = std::env::temp_dir().join(format!("ferroflow-summary-doc-{}", std::process::id()));
//! let mut w = FileWriter::new(&dir).unwrap();
//! w.add_summary(&out[0].scalar_value::<Vec<u8>>().unwrap(), 1).unwrap();
//! w.close().unwrap();
//! # std::fs::remove_dir_all(dir).unwrap();
//! ```

pub use ferroflow_kernels::io::tfrecord::{read_records, write_record};
pub use ferroflow_kernels::summary::{FileWriter, FILE_VERSION};

use ferroflow_core::Tensor;
use ferroflow_graph::ops::{self, SUMMARIES};
use ferroflow_graph::{Output, Scope};

/// A `ScalarSummary` of `value` under `tag` (`tf.compat.v1.summary.scalar`), named after
/// the tag and added to the `summaries` collection.
pub fn scalar(s: &Scope, tag: &str, value: Output) -> Output {
    let ns = s.sub(tag);
    let t = ops::constant_named(&ns, "tags", Tensor::scalar(tag.as_bytes().to_vec()));
    ops::scalar_summary(&ns, t, value)
}

/// A `HistogramSummary` of `values` under `tag` (`tf.compat.v1.summary.histogram`),
/// added to the `summaries` collection.
pub fn histogram(s: &Scope, tag: &str, values: Output) -> Output {
    let ns = s.sub(tag);
    let t = ops::constant_named(&ns, "tag", Tensor::scalar(tag.as_bytes().to_vec()));
    ops::histogram_summary(&ns, t, values)
}

/// One `MergeSummary` of every summary in the graph's `summaries` collection
/// (`tf.compat.v1.summary.merge_all`); `None` if there is none.
pub fn merge_all(s: &Scope) -> Option<Output> {
    let g = s.graph();
    let inputs: Vec<Output> =
        g.collection(SUMMARIES).iter().filter_map(|n| g.output_by_name(&format!("{n}:0")).ok()).collect();
    if inputs.is_empty() {
        return None;
    }
    Some(ops::merge_summary(&s.root().sub("Merge"), inputs))
}

#[cfg(test)]
mod tests;
