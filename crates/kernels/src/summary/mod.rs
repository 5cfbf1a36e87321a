//! Summary kernels: `ScalarSummary`, `HistogramSummary`, `MergeSummary` (each outputs a
//! serialized `tensorflow.Summary` as a scalar string, as TensorFlow does), TensorFlow 2's
//! summary-writer ops (`SummaryWriter`, `CreateSummaryFileWriter`, `Write*Summary`), and the
//! event-file [`FileWriter`] they and `ferroflow_train` write with.

mod event_file;
#[doc(hidden)]
pub mod histogram;
mod media;
mod merge;
mod scalar;
mod tensor;
mod writer;
mod writer_ops;

pub use event_file::{wall_time, FileWriter, FILE_VERSION};
pub use histogram::{default_bucket_limits, Histogram};

use ferroflow_core::proto::{summary, Message, Summary};

use crate::KernelRegistry;

/// Registers this family's kernels.
pub(crate) fn register(r: &mut KernelRegistry) {
    ferroflow_core::register_modules! { r: scalar, histogram, merge, media, tensor, writer_ops }
}

/// The tag string of a summary input.
pub(crate) fn utf8(ctx: &crate::OpContext, b: &[u8], what: &str) -> Result<String, ferroflow_core::Status> {
    String::from_utf8(b.to_vec()).map_err(|_| ctx.error(format!("{what} is not valid UTF-8")))
}

/// A summary value of `tag`.
fn tagged(tag: String, value: summary::value::Value) -> summary::Value {
    summary::Value { tag, value: Some(value), ..Default::default() }
}

/// Sets output 0 to the summary of `values`, serialized (a scalar string).
fn output(ctx: &mut crate::OpContext, values: Vec<summary::Value>) -> Result<(), ferroflow_core::Status> {
    ctx.set_output(0, ferroflow_core::Tensor::scalar(Summary { value: values }.encode_to_vec()))
}
