//! Reads a V2 checkpoint written by ferroflow or TensorFlow (see `bundle_writer`). The
//! index is read whole at open (it holds only metadata); tensors are read from the data
//! shards on demand, with their checksums checked. A partitioned variable's tensor is
//! stored as slices (see `tensor_slice`); it can be read whole or in any slice, whatever
//! partitioning it was saved with.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;

use ferroflow_core::proto::{bundle_header_proto, BundleEntryProto, BundleHeaderProto, Message};
use ferroflow_core::{DataType, Shape, Status, Storage, Tensor};

use super::bundle_codec::decode;
use super::bundle_writer::{data_path, index_path, io_error, BUNDLE_VERSION};
use super::crc::unmask;
use super::sstable::read_table;
use super::tensor_slice::{copy_storage_overlap, overlap_len, Bounds, TensorSlice};

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
    entries: BTreeMap<Vec<u8>, BundleEntryProto>,
    /// Keys of stored slices (hidden from [`BundleReader::names`], as in TensorFlow).
    slice_keys: BTreeSet<Vec<u8>>,
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
        let mut slice_keys = BTreeSet::new();
        for (k, v) in it {
            let name = String::from_utf8_lossy(&k).into_owned();
            let e = BundleEntryProto::decode(v.as_slice())
                .map_err(|e| Status::data_loss(format!("{file}: bad entry for tensor '{name}': {e}")))?;
            for s in &e.slices {
                let s = TensorSlice::from_proto(s).map_err(|e| e.context(format!("{file}: tensor '{name}'")))?;
                slice_keys.insert(s.key(&name));
            }
            entries.insert(k, e);
        }
        Ok(BundleReader { prefix: prefix.to_string(), num_shards: header.num_shards, entries, slice_keys })
    }

    /// The checkpoint prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Tensor names in sorted order (a partitioned tensor once, by its full name).
    pub fn names(&self) -> Vec<String> {
        self.entries
            .keys()
            .filter(|k| !self.slice_keys.contains(*k))
            .map(|k| String::from_utf8_lossy(k).into_owned())
            .collect()
    }

    /// Whether the checkpoint holds `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.entries.contains_key(name.as_bytes())
    }

    /// Dtype and shape of `name`, validated.
    pub fn entry(&self, name: &str) -> Result<BundleEntry, Status> {
        self.entry_at(name.as_bytes(), name)
    }

    /// The entry under index key `key`; `what` names it in errors.
    fn entry_at(&self, key: &[u8], what: &str) -> Result<BundleEntry, Status> {
        let p = self
            .entries
            .get(key)
            .ok_or_else(|| Status::not_found(format!("Key {what} not found in checkpoint {}", self.prefix)))?;
        let name = what;
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

    /// Reads tensor `name` whole (a partitioned one is assembled from its slices).
    pub fn read(&self, name: &str) -> Result<Tensor, Status> {
        let e = self.entry(name)?;
        if !e.proto.slices.is_empty() {
            return self.read_slice(name, &TensorSlice::full(e.shape.rank()));
        }
        self.read_stored(name, &e)
    }

    /// The stored slices of `name` (empty when it is stored whole).
    pub fn stored_slices(&self, name: &str) -> Result<Vec<TensorSlice>, Status> {
        let e = self.entry(name)?;
        e.proto
            .slices
            .iter()
            .map(|s| TensorSlice::from_proto(s).map_err(|e| e.context(format!("tensor '{name}'"))))
            .collect()
    }

    /// Reads `slice` of tensor `name`, from whichever stored slices overlap it (or from
    /// the whole tensor). Errors when the stored slices do not cover it.
    pub fn read_slice(&self, name: &str, slice: &TensorSlice) -> Result<Tensor, Status> {
        let e = self.entry(name)?;
        let full = e.shape.dims().to_vec();
        let in_ckpt = || format!("tensor '{name}' in checkpoint {}", self.prefix);
        let want = slice.bounds(&full).map_err(|err| err.context(in_ckpt()))?;
        let lens: Vec<usize> = want.iter().map(|b| b.1).collect();
        if e.proto.slices.is_empty() {
            let whole = self.read_stored(name, &e)?;
            if slice.covers(&full) {
                return Ok(whole);
            }
            let all: Bounds = full.iter().map(|&d| (0, d)).collect();
            return self.assemble(&e, lens, &want, [(whole, all)]);
        }
        let stored = self.stored_slices(name)?;
        let mut boxes = Vec::with_capacity(stored.len());
        for s in &stored {
            let b = s
                .bounds(&full)
                .map_err(|err| Status::data_loss(format!("{}: stored slice: {}", in_ckpt(), err.message)))?;
            if let Some(prev) = boxes.iter().position(|p: &Bounds| overlap_len(p, &b) > 0) {
                return Err(Status::data_loss(format!(
                    "{}: stored slices '{}' and '{s}' overlap",
                    in_ckpt(),
                    stored[prev]
                )));
            }
            boxes.push(b);
        }
        let covered = boxes.iter().map(|b| overlap_len(b, &want)).fold(0, usize::saturating_add);
        if covered != lens.iter().fold(1usize, |a, &l| a.saturating_mul(l)) {
            let have: Vec<String> = stored.iter().map(|s| s.to_string()).collect();
            return Err(Status::invalid_argument(format!(
                "Does not have sufficient slices for partitioned tensor {name} to restore in slice_spec: {slice} \
                 (checkpoint {} holds slices {} of shape {full:?})",
                self.prefix,
                have.join(", ")
            )));
        }
        let mut parts = Vec::new();
        for (s, b) in stored.iter().zip(boxes) {
            if overlap_len(&b, &want) == 0 {
                continue;
            }
            let what = format!("{name} (slice {s})");
            let se = self.entry_at(&s.key(name), &what).map_err(|err| {
                Status::data_loss(format!(
                    "{}: the index lists slice {s} but has no entry for it: {}",
                    in_ckpt(),
                    err.message
                ))
            })?;
            let part_lens: Vec<usize> = b.iter().map(|x| x.1).collect();
            if se.dtype != e.dtype || se.shape.dims() != part_lens.as_slice() {
                return Err(Status::data_loss(format!(
                    "{}: slice {s} is stored as {} {}, expected {} {part_lens:?}",
                    in_ckpt(),
                    se.dtype,
                    se.shape,
                    e.dtype
                )));
            }
            let t = self.read_stored(&what, &se)?;
            if b == want {
                return Ok(t);
            }
            parts.push((t, b));
        }
        self.assemble(&e, lens, &want, parts)
    }

    /// A tensor of shape `lens` holding box `want`, copied from `parts` (tensor, its box).
    fn assemble(
        &self,
        e: &BundleEntry,
        lens: Vec<usize>,
        want: &[(usize, usize)],
        parts: impl IntoIterator<Item = (Tensor, Bounds)>,
    ) -> Result<Tensor, Status> {
        crate::array::check_alloc(&lens, e.dtype)?;
        let mut out = Storage::zeros(e.dtype, lens.iter().product())?;
        for (t, b) in parts {
            copy_storage_overlap(t.storage(), &b, &mut out, want)?;
        }
        Tensor::from_storage(Shape::new(lens), out)
    }

    /// Reads one stored entry (a whole tensor or one slice's bytes).
    fn read_stored(&self, what: &str, e: &BundleEntry) -> Result<Tensor, Status> {
        let bytes = self.read_raw(what, e)?;
        let file = data_path(&self.prefix, e.proto.shard_id, self.num_shards).display().to_string();
        decode(&bytes, e.dtype, e.shape.clone(), unmask(e.proto.crc32c), what, &file)
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
        let mut buf = ferroflow_core::alloc::zeroed::<u8>(&[size as usize])?;
        f.seek(SeekFrom::Start(off)).map_err(|err| io_error("cannot seek in", &path, err))?;
        f.read_exact(&mut buf).map_err(|err| io_error("cannot read", &path, err))?;
        Ok(buf)
    }
}
