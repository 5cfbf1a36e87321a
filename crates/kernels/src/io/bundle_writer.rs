//! Writes a V2 checkpoint (a "tensor bundle"): `<prefix>.data-00000-of-00001` holds the
//! tensors' bytes back to back, `<prefix>.index` is a table mapping `""` to a
//! `BundleHeaderProto` and each tensor name to a `BundleEntryProto`.
//!
//! A partitioned variable is added slice by slice ([`BundleWriter::add_slice`]): its full
//! name's entry has dtype, full shape and the list of slices; each slice's bytes are an
//! ordinary entry under the slice's key (as TensorFlow's `BundleWriter::AddSlice` does).
//!
//! Both files are written under temporary names and renamed only by
//! [`BundleWriter::finish`] (data first, index last), so an interrupted save never leaves a
//! half-written checkpoint under the final names.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use ferroflow_core::proto::{bundle_header_proto, BundleEntryProto, BundleHeaderProto, Message, VersionDef};
use ferroflow_core::{Status, Tensor};

use super::bundle_codec::encode;
use super::crc::mask;
use super::sstable::{TableBuilder, TableOptions};
use super::tensor_slice::{overlap_len, TensorSlice};

/// Version of the bundle format we write (TensorFlow's current one).
pub const BUNDLE_VERSION: i32 = 1;

/// `<prefix>.index`.
pub fn index_path(prefix: &str) -> PathBuf {
    PathBuf::from(format!("{prefix}.index"))
}

/// `<prefix>.data-<shard>-of-<num_shards>` (5 digits each).
pub fn data_path(prefix: &str, shard: i32, num_shards: i32) -> PathBuf {
    PathBuf::from(format!("{prefix}.data-{shard:05}-of-{num_shards:05}"))
}

pub(crate) fn io_error(what: &str, path: &Path, e: std::io::Error) -> Status {
    let msg = format!("{what} {}: {e}", path.display());
    match e.kind() {
        std::io::ErrorKind::NotFound => Status::not_found(msg),
        std::io::ErrorKind::PermissionDenied => Status::new(ferroflow_core::Code::PermissionDenied, msg),
        _ => Status::unknown(msg),
    }
}

pub(crate) fn temp_path(path: &Path) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut s = path.as_os_str().to_owned();
    s.push(format!(".tempstate{}_{nanos}_{n}", std::process::id()));
    PathBuf::from(s)
}

/// Writes one checkpoint; tensors may be added in any order.
pub struct BundleWriter {
    prefix: String,
    data_tmp: PathBuf,
    data: Option<BufWriter<File>>,
    offset: u64,
    entries: BTreeMap<Vec<u8>, BundleEntryProto>,
}

impl BundleWriter {
    /// Starts a checkpoint at `prefix` (its directory is created if missing).
    pub fn new(prefix: &str) -> Result<BundleWriter, Status> {
        if prefix.is_empty() {
            return Err(Status::invalid_argument("checkpoint prefix must not be empty"));
        }
        let final_data = data_path(prefix, 0, 1);
        if let Some(dir) = final_data.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| io_error("cannot create checkpoint directory", dir, e))?;
        }
        let data_tmp = temp_path(&final_data);
        let f = File::create(&data_tmp).map_err(|e| io_error("cannot create", &data_tmp, e))?;
        Ok(BundleWriter {
            prefix: prefix.to_string(),
            data_tmp,
            data: Some(BufWriter::new(f)),
            offset: 0,
            entries: BTreeMap::new(),
        })
    }

    /// Appends a tensor under `name` (non-empty and unique).
    pub fn add(&mut self, name: &str, t: &Tensor) -> Result<(), Status> {
        if name.is_empty() {
            return Err(Status::invalid_argument("checkpoint tensor names must not be empty"));
        }
        self.add_at(name.as_bytes().to_vec(), name, t)
    }

    /// Appends `t` as `slice` of the tensor `name` of shape `full` (a part of a partitioned
    /// variable). Slices of one tensor must agree on dtype and shape and must not overlap.
    /// A slice that is the whole tensor is added as by [`BundleWriter::add`].
    pub fn add_slice(&mut self, name: &str, full: &[usize], slice: &TensorSlice, t: &Tensor) -> Result<(), Status> {
        if name.is_empty() {
            return Err(Status::invalid_argument("checkpoint tensor names must not be empty"));
        }
        if slice.covers(full) {
            if t.dims() != full {
                return Err(Status::invalid_argument(format!(
                    "tensor '{name}': slice '{slice}' is all of shape {full:?} but the tensor has shape {}",
                    t.shape()
                )));
            }
            return self.add(name, t);
        }
        let what = || format!("tensor '{name}' slice '{slice}' in checkpoint {}", self.prefix);
        let b = slice.bounds(full).map_err(|e| e.context(what()))?;
        let lens: Vec<usize> = b.iter().map(|x| x.1).collect();
        if t.dims() != lens.as_slice() {
            return Err(Status::invalid_argument(format!(
                "{}: the slice has shape {lens:?}, the tensor {}",
                what(),
                t.shape()
            )));
        }
        let full_shape = ferroflow_core::Shape::new(full.to_vec());
        if let Some(e) = self.entries.get(name.as_bytes()) {
            if e.slices.is_empty() {
                return Err(Status::invalid_argument(format!("{}: '{name}' was already added whole", what())));
            }
            if e.dtype != t.dtype().as_i32() || e.shape.as_ref() != Some(&full_shape.to_proto()) {
                return Err(Status::invalid_argument(format!(
                    "{}: earlier slices of '{name}' are {:?} of shape {:?}, this one {} of full shape {full:?}",
                    what(),
                    ferroflow_core::DataType::from_i32(e.dtype).map(|d| d.name()).unwrap_or("?"),
                    e.shape.as_ref().map(|s| s.dim.iter().map(|d| d.size).collect::<Vec<_>>()),
                    t.dtype()
                )));
            }
            for p in &e.slices {
                let prev = TensorSlice::from_proto(p)?;
                if overlap_len(&prev.bounds(full)?, &b) > 0 {
                    return Err(Status::invalid_argument(format!("{}: overlaps slice '{prev}'", what())));
                }
            }
        }
        self.add_at(slice.key(name), &format!("{name} (slice {slice})"), t)?;
        let e = self.entries.entry(name.as_bytes().to_vec()).or_insert_with(|| BundleEntryProto {
            dtype: t.dtype().as_i32(),
            shape: Some(full_shape.to_proto()),
            ..Default::default()
        });
        e.slices.push(slice.to_proto());
        Ok(())
    }

    /// Appends `t`'s bytes under index key `key`; `name` names it in errors.
    fn add_at(&mut self, key: Vec<u8>, name: &str, t: &Tensor) -> Result<(), Status> {
        if self.entries.contains_key(&key) {
            return Err(Status::invalid_argument(format!(
                "tensor '{name}' is added twice to checkpoint {}",
                self.prefix
            )));
        }
        let (bytes, crc) = encode(t, name)?;
        let out = self.data.as_mut().ok_or_else(|| Status::failed_precondition("bundle writer is finished"))?;
        out.write_all(&bytes).map_err(|e| io_error("cannot write", &self.data_tmp, e))?;
        let entry = BundleEntryProto {
            dtype: t.dtype().as_i32(),
            shape: Some(t.shape().to_proto()),
            shard_id: 0,
            offset: self.offset as i64,
            size: bytes.len() as i64,
            crc32c: mask(crc),
            slices: vec![],
        };
        self.offset += bytes.len() as u64;
        self.entries.insert(key, entry);
        Ok(())
    }

    /// Writes the index and renames both files to their final names.
    pub fn finish(mut self) -> Result<(), Status> {
        let out = self.data.take().ok_or_else(|| Status::failed_precondition("bundle writer is finished"))?;
        let f = out.into_inner().map_err(|e| io_error("cannot flush", &self.data_tmp, e.into_error()))?;
        f.sync_all().map_err(|e| io_error("cannot sync", &self.data_tmp, e))?;
        drop(f);
        let header = BundleHeaderProto {
            num_shards: 1,
            endianness: bundle_header_proto::Endianness::Little as i32,
            version: Some(VersionDef { producer: BUNDLE_VERSION, min_consumer: 0, bad_consumers: vec![] }),
        };
        let mut table = TableBuilder::new(TableOptions::default());
        table.add(b"", &header.encode_to_vec())?;
        for (key, e) in &self.entries {
            table.add(key, &e.encode_to_vec())?;
        }
        let index = table.finish();
        let index_final = index_path(&self.prefix);
        let index_tmp = temp_path(&index_final);
        write_synced(&index_tmp, &index)?;
        let data_final = data_path(&self.prefix, 0, 1);
        std::fs::rename(&self.data_tmp, &data_final).map_err(|e| io_error("cannot rename into", &data_final, e))?;
        std::fs::rename(&index_tmp, &index_final).map_err(|e| io_error("cannot rename into", &index_final, e))?;
        Ok(())
    }
}

impl Drop for BundleWriter {
    fn drop(&mut self) {
        // Not finished: remove the temporary data file (best effort).
        if self.data.take().is_some() {
            let _ = std::fs::remove_file(&self.data_tmp);
        }
    }
}

/// Writes `bytes` to `path` and syncs it.
pub(crate) fn write_synced(path: &Path, bytes: &[u8]) -> Result<(), Status> {
    let mut f = File::create(path).map_err(|e| io_error("cannot create", path, e))?;
    f.write_all(bytes).map_err(|e| io_error("cannot write", path, e))?;
    f.sync_all().map_err(|e| io_error("cannot sync", path, e))
}

/// Writes `bytes` to `path` atomically: a temporary file in the same directory, then a
/// rename over the target.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Status> {
    let tmp = temp_path(path);
    write_synced(&tmp, bytes)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io_error("cannot rename into", path, e)
    })
}

/// Writes a whole checkpoint of named tensors at `prefix`.
pub fn write_bundle(prefix: &str, tensors: &[(String, Tensor)]) -> Result<(), Status> {
    let mut w = BundleWriter::new(prefix)?;
    for (n, t) in tensors {
        w.add(n, t)?;
    }
    w.finish()
}
