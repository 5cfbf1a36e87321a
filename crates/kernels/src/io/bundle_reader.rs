//! Reads a V2 checkpoint written by ferroflow or TensorFlow (see `bundle_writer`). The
//! index is read whole at open (it holds only metadata); tensors are read from the data
//! shards on demand, with their checksums checked.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;

use ferroflow_core::proto::{bundle_header_proto, BundleEntryProto, BundleHeaderProto, Message};
use ferroflow_core::{DataType, Shape, Status, Tensor};

use super::bundle_codec::decode;
use super::bundle_writer::{data_path, index_path, io_error, BUNDLE_VERSION};
use super::crc::unmask;
use super::sstable::read_table;

/// What the index says about one tensor.
#[derive(Clone, Debug, PartialEq)]
pub struct BundleEntry {
    /// Element type.
    pub dtype: DataType,
    /// Full shape.
    pub shape: Shape,
    /// The raw index entry.
    pub proto: BundleEntryProto,
}

/// An open checkpoint.
#[derive(Debug)]
pub struct BundleReader {
    prefix: String,
    num_shards: i32,
    entries: BTreeMap<String, BundleEntryProto>,
}

impl BundleReader {
    /// Opens the checkpoint at `prefix` (reads and checks `<prefix>.index`).
    pub fn open(prefix: &str) -> Result<BundleReader, Status> {
        let path = index_path(prefix);
        let file = path.display().to_string();
        let bytes = std::fs::read(&path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Status::not_found(format!(
                "Unsuccessful TensorSliceReader constructor: failed to find any matching files for {prefix} \
                 ({file} does not exist)"
            )),
            _ => io_error("cannot read", &path, e),
        })?;
        let table = read_table(&bytes, &file)?;
        let mut it = table.into_iter();
        let header = match it.next() {
            Some((k, v)) if k.is_empty() => BundleHeaderProto::decode(v.as_slice())
                .map_err(|e| Status::data_loss(format!("{file}: bad bundle header: {e}")))?,
            _ => return Err(Status::data_loss(format!("{file}: the index has no bundle header (key \"\")"))),
        };
        if header.endianness != bundle_header_proto::Endianness::Little as i32 {
            return Err(Status::unimplemented(format!("{file}: big-endian checkpoints are not supported")));
        }
        if let Some(v) = &header.version {
            if v.min_consumer > BUNDLE_VERSION || v.bad_consumers.contains(&BUNDLE_VERSION) {
                return Err(Status::invalid_argument(format!(
                    "{file}: checkpoint format version {} needs a newer reader (min consumer {})",
                    v.producer, v.min_consumer
                )));
            }
        }
        if header.num_shards < 1 {
            return Err(Status::data_loss(format!("{file}: bundle header has {} shards", header.num_shards)));
        }
        let mut entries = BTreeMap::new();
        for (k, v) in it {
            let name = String::from_utf8(k).map_err(|_| Status::data_loss(format!("{file}: a key is not UTF-8")))?;
            let e = BundleEntryProto::decode(v.as_slice())
                .map_err(|e| Status::data_loss(format!("{file}: bad entry for tensor '{name}': {e}")))?;
            entries.insert(name, e);
        }
        Ok(BundleReader { prefix: prefix.to_string(), num_shards: header.num_shards, entries })
    }

    /// The checkpoint prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Tensor names in sorted order.
    pub fn names(&self) -> Vec<String> {
        self.entries.keys().cloned().collect()
    }

    /// Whether the checkpoint holds `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.entries.contains_key(name)
    }

    /// Dtype and shape of `name`, validated.
    pub fn entry(&self, name: &str) -> Result<BundleEntry, Status> {
        let p = self
            .entries
            .get(name)
            .ok_or_else(|| Status::not_found(format!("Key {name} not found in checkpoint {}", self.prefix)))?;
        let what = format!("{}: tensor '{name}'", index_path(&self.prefix).display());
        let dtype = DataType::from_i32(p.dtype).map_err(|e| Status::data_loss(format!("{what}: {}", e.message)))?;
        let shape = p
            .shape
            .as_ref()
            .map(Shape::from_proto)
            .transpose()
            .map_err(|e| Status::data_loss(format!("{what}: bad shape: {}", e.message)))?
            .unwrap_or_else(Shape::scalar);
        if p.shard_id < 0 || p.shard_id >= self.num_shards || p.offset < 0 || p.size < 0 {
            return Err(Status::data_loss(format!(
                "{what}: bad location (shard {} of {}, offset {}, size {})",
                p.shard_id, self.num_shards, p.offset, p.size
            )));
        }
        Ok(BundleEntry { dtype, shape, proto: p.clone() })
    }

    /// Reads tensor `name`.
    pub fn read(&self, name: &str) -> Result<Tensor, Status> {
        let e = self.entry(name)?;
        if !e.proto.slices.is_empty() {
            return Err(Status::unimplemented(format!(
                "tensor '{name}' in checkpoint {} is stored as slices (a partitioned variable); \
                 ferroflow does not read sliced checkpoints yet",
                self.prefix
            )));
        }
        let bytes = self.read_raw(name, &e)?;
        let file = data_path(&self.prefix, e.proto.shard_id, self.num_shards).display().to_string();
        decode(&bytes, e.dtype, e.shape, unmask(e.proto.crc32c), name, &file)
    }

    /// The stored bytes of `name` (unchecked); used to merge checkpoints.
    pub(crate) fn read_raw(&self, name: &str, e: &BundleEntry) -> Result<Vec<u8>, Status> {
        let path: PathBuf = data_path(&self.prefix, e.proto.shard_id, self.num_shards);
        let mut f = File::open(&path).map_err(|err| io_error("cannot open checkpoint data file", &path, err))?;
        let len = f.metadata().map_err(|err| io_error("cannot stat", &path, err))?.len();
        let (off, size) = (e.proto.offset as u64, e.proto.size as u64);
        if off.checked_add(size).is_none_or(|end| end > len) {
            return Err(Status::data_loss(format!(
                "{}: tensor '{name}' at offset {off} size {size} lies past the end of the file ({len} bytes)",
                path.display()
            )));
        }
        let mut buf = vec![0u8; size as usize];
        f.seek(SeekFrom::Start(off)).map_err(|err| io_error("cannot seek in", &path, err))?;
        f.read_exact(&mut buf).map_err(|err| io_error("cannot read", &path, err))?;
        Ok(buf)
    }
}
