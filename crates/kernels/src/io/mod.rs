//! Graph plumbing kernels (Const, Placeholder, Identity, NoOp …), `_Send`/`_Recv`, and
//! TensorFlow's V2 checkpoint format (tensor bundles in LevelDB-style tables) with the
//! `SaveV2`/`RestoreV2`/`MergeV2Checkpoints` kernels.

mod assert;
hidden_mods! {
    bundle_codec, bundle_ops, bundle_reader, bundle_variant, bundle_writer, ordered_code, sstable, table_block,
}
mod checkpoint_v1_ops;
pub mod checkpoint_v1_reader;
pub mod checkpoint_v1_writer;
mod control_flow;
pub mod crc;
mod debug_ops;
mod file_ops;
pub mod file_stream;
mod plumbing;
mod readers;
mod sendrecv;
pub mod tensor_codec;
pub mod tensor_slice;
pub mod tfrecord;
pub mod varint;

pub use bundle_ops::merge_checkpoints;
pub use bundle_reader::{BundleEntry, BundleReader};
pub use bundle_writer::{data_path, index_path, write_atomic, write_bundle, BundleWriter, BUNDLE_VERSION};
pub use checkpoint_v1_reader::V1Reader;
pub use checkpoint_v1_writer::V1Writer;
pub use plumbing::partial_shape_str;
pub use sendrecv::send_dead;
pub use sstable::{read_table, TableBuilder, TableOptions, FOOTER_LEN, TABLE_MAGIC};
pub use table_block::Entries;

use crate::KernelRegistry;

/// Registers this family's kernels (one `register` call per file).
pub(crate) fn register(r: &mut KernelRegistry) {
    ferroflow_core::register_modules! { r: plumbing, sendrecv, control_flow, bundle_ops, checkpoint_v1_ops, assert, tensor_codec, file_ops, readers, debug_ops }
}
