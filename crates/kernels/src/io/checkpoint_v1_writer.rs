//! Writing TensorFlow's V1 checkpoints (`Save`, `SaveSlices`): one table file whose entry
//! under the empty key is a `SavedTensorSlices` holding the metadata (every tensor's name,
//! full shape, dtype and stored slices, and the format versions), and whose other entries,
//! keyed by [`TensorSlice::key`], each hold one slice's values in a `TensorProto`'s typed
//! fields (no dtype, no shape: the metadata has them).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use ferroflow_core::proto::{
    Message, SavedSlice, SavedSliceMeta, SavedTensorSliceMeta, SavedTensorSlices, TensorProto, VersionDef,
};
use ferroflow_core::{DataType, Shape, Status, Tensor};

use super::bundle_writer::write_atomic;
use super::sstable::{TableBuilder, TableOptions};
use super::tensor_slice::TensorSlice;

/// The checkpoint format version a V1 file records (TensorFlow's `TF_CHECKPOINT_VERSION`).
pub const V1_PRODUCER: i32 = 1;
/// The oldest reader version that can read it (`TF_CHECKPOINT_VERSION_MIN_CONSUMER`).
pub const V1_MIN_CONSUMER: i32 = 0;
/// A protocol buffer cannot exceed 2 GB: TensorFlow refuses a slice whose values could.
const MAX_RECORD_BYTES: u64 = (1 << 31) - 1;

/// Whether TensorFlow's V1 writer can store `dt`, and its error when it cannot: its
/// `SaveTypeTraits` lack some types (UNIMPLEMENTED), and uint32/uint64 have no slice
/// serialization (INVALID_ARGUMENT).
pub fn check_v1_dtype(dt: DataType) -> Result<(), Status> {
    use DataType::*;
    match dt {
        Float | Double | Int32 | UInt8 | Int16 | UInt16 | Int8 | Complex64 | Complex128 | Int64 | Bool | QInt8
        | QUInt8 | QInt32 | String | Half => Ok(()),
        UInt32 | UInt64 => Err(Status::invalid_argument(format!(
            "Tensor slice serialization not implemented for dtype {}",
            dt.as_i32()
        ))),
        _ => Err(Status::unimplemented(format!("Saving data type {} not yet supported", dt.tf_name()))),
    }
}

/// Builds one V1 checkpoint file in memory; [`V1Writer::finish`] writes it.
pub struct V1Writer {
    path: String,
    meta: SavedTensorSliceMeta,
    index: HashMap<String, usize>,
    records: BTreeMap<Vec<u8>, Vec<u8>>,
}

impl V1Writer {
    /// A writer of the file at `path`.
    pub fn new(path: &str) -> V1Writer {
        let versions = VersionDef { producer: V1_PRODUCER, min_consumer: V1_MIN_CONSUMER, bad_consumers: vec![] };
        V1Writer {
            path: path.to_string(),
            meta: SavedTensorSliceMeta { tensor: vec![], versions: Some(versions) },
            index: HashMap::new(),
            records: BTreeMap::new(),
        }
    }

    /// Adds `t`, the values of `slice` of tensor `name` whose full shape is `full`.
    pub fn add(&mut self, name: &str, full: &[usize], slice: &TensorSlice, t: &Tensor) -> Result<(), Status> {
        let dt = t.dtype();
        check_v1_dtype(dt)?;
        let bounds = slice.bounds(full).map_err(|e| e.context(format!("tensor '{name}'")))?;
        let lens: Vec<usize> = bounds.iter().map(|b| b.1).collect();
        if t.dims() != lens.as_slice() {
            return Err(Status::invalid_argument(format!(
                "Slice in shape_and_slice specification does not match the shape of the tensor to save: \
                 tensor '{name}' has shape {}, slice '{slice}' of {full:?} has shape {lens:?}",
                t.shape()
            )));
        }
        let full_shape = Shape::new(full.to_vec()).to_proto();
        let idx = match self.index.get(name) {
            Some(&i) => {
                let m = &self.meta.tensor[i];
                if m.r#type != dt.as_i32() || m.shape.as_ref() != Some(&full_shape) {
                    return Err(Status::invalid_argument(format!(
                        "tensor '{name}' is saved twice with different shapes or dtypes: {dt} {full:?} after an \
                         earlier slice of another"
                    )));
                }
                i
            }
            None => {
                self.meta.tensor.push(SavedSliceMeta {
                    name: name.to_string(),
                    shape: Some(full_shape),
                    r#type: dt.as_i32(),
                    slice: vec![],
                });
                self.index.insert(name.to_string(), self.meta.tensor.len() - 1);
                self.meta.tensor.len() - 1
            }
        };
        let key = slice.key(name);
        if self.records.contains_key(&key) {
            return Err(Status::invalid_argument(format!("slice '{slice}' of tensor '{name}' is saved twice")));
        }
        let bound = dt.byte_size().unwrap_or(8).max(8) as u64 * t.num_elements() as u64;
        if bound > MAX_RECORD_BYTES && dt != DataType::String {
            return Err(Status::invalid_argument(format!(
                "tensor slice '{name}' ({slice}) is too large to serialize (about {bound} bytes; a V1 checkpoint \
                 record must stay under 2 GB): save it partitioned or use the V2 format"
            )));
        }
        let mut data = t.to_proto_field();
        data.dtype = 0;
        data.tensor_shape = None;
        let record = SavedTensorSlices {
            meta: None,
            data: Some(SavedSlice { name: name.to_string(), slice: Some(slice.to_proto()), data: Some(data) }),
        };
        let bytes = record.encode_to_vec();
        if bytes.len() as u64 > MAX_RECORD_BYTES {
            return Err(Status::invalid_argument(format!(
                "tensor slice '{name}' ({slice}) is too large to serialize ({} bytes)",
                bytes.len()
            )));
        }
        self.meta.tensor[idx].slice.push(slice.to_proto());
        self.records.insert(key, bytes);
        Ok(())
    }

    /// The file's bytes: the metadata under the empty key, then the slices in key order.
    pub fn to_bytes(&self) -> Result<Vec<u8>, Status> {
        let mut b = TableBuilder::new(TableOptions::default());
        let meta = SavedTensorSlices { meta: Some(self.meta.clone()), data: None };
        b.add(b"", &meta.encode_to_vec())?;
        for (k, v) in &self.records {
            b.add(k, v)?;
        }
        Ok(b.finish())
    }

    /// Writes the file (through a temporary file renamed into place).
    pub fn finish(self) -> Result<(), Status> {
        let bytes = self.to_bytes()?;
        let path = Path::new(&self.path);
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            if !dir.is_dir() {
                return Err(Status::not_found(format!(
                    "{}: cannot write the checkpoint, its directory {} does not exist",
                    self.path,
                    dir.display()
                )));
            }
        }
        write_atomic(path, &bytes)
    }
}

/// A slice's values as stored: `data`'s typed fields read as `dt` of shape `lens`.
pub fn decode_slice_values(data: &TensorProto, dt: DataType, lens: &[usize]) -> Result<Tensor, Status> {
    let mut p = data.clone();
    p.dtype = dt.as_i32();
    p.tensor_shape = Some(Shape::new(lens.to_vec()).to_proto());
    p.tensor_content = Default::default();
    let n: usize = lens.iter().product();
    let have = stored_count(&p, dt);
    if have != n {
        return Err(Status::data_loss(format!("a stored slice holds {have} values of {dt}, expected {n}")));
    }
    Tensor::from_proto(&p)
}

/// Number of values in the typed field that holds `dt`.
fn stored_count(p: &TensorProto, dt: DataType) -> usize {
    use DataType::*;
    match dt {
        Float => p.float_val.len(),
        Double => p.double_val.len(),
        Int64 => p.int64_val.len(),
        Bool => p.bool_val.len(),
        String => p.string_val.len(),
        Half | BFloat16 => p.half_val.len(),
        Complex64 => p.scomplex_val.len() / 2,
        Complex128 => p.dcomplex_val.len() / 2,
        _ => p.int_val.len(),
    }
}
