//! Graph plumbing kernels (Const, Placeholder, Identity, NoOp …), `_Send`/`_Recv`, and
//! TensorFlow's V2 checkpoint format (tensor bundles in LevelDB-style tables) with the
//! `SaveV2`/`RestoreV2`/`MergeV2Checkpoints` kernels.

mod assert;
#[doc(hidden)]
pub mod bundle_codec;
#[doc(hidden)]
pub mod bundle_ops;
#[doc(hidden)]
pub mod bundle_reader;
#[doc(hidden)]
pub mod bundle_variant;
#[doc(hidden)]
pub mod bundle_writer;
mod control_flow;
pub mod crc;
mod debug_ops;
mod file_ops;
pub mod file_stream;
#[doc(hidden)]
pub mod ordered_code;
mod plumbing;
mod readers;
mod sendrecv;
#[doc(hidden)]
pub mod sstable;
#[doc(hidden)]
pub mod table_block;
pub mod tensor_codec;
pub mod tensor_slice;
pub mod tfrecord;
pub mod varint;

pub use bundle_ops::merge_checkpoints;
pub use bundle_reader::{BundleEntry, BundleReader};
pub use bundle_writer::{data_path, index_path, write_atomic, write_bundle, BundleWriter, BUNDLE_VERSION};
pub use plumbing::partial_shape_str;
pub use sendrecv::send_dead;
pub use sstable::{read_table, TableBuilder, TableOptions, FOOTER_LEN, TABLE_MAGIC};
pub use table_block::Entries;

use crate::KernelRegistry;

/// Registers this family's kernels (one `register` call per file).
pub(crate) fn register(r: &mut KernelRegistry) {
    ferroflow_core::register_modules! { r: plumbing, sendrecv, control_flow, bundle_ops, assert, tensor_codec, file_ops, readers, debug_ops }
}
