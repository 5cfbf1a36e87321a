//! Reading TensorFlow's V1 checkpoints (`Restore`, `RestoreSlice`, and `RestoreV2` when
//! the prefix has no V2 index): every file matching a glob pattern is a table of
//! `SavedTensorSlices` records (see `checkpoint_v1_writer`); a tensor is assembled from the
//! stored slices, possibly spread over several files (a sharded save).

use std::collections::BTreeMap;

use ferroflow_core::proto::{Message, SavedTensorSlices};
use ferroflow_core::{DataType, Shape, Status, Storage, Tensor};

use super::checkpoint_v1_writer::decode_slice_values;
use super::sstable::read_table;
use super::tensor_slice::{copy_storage_overlap, overlap_len, Bounds, TensorSlice};

/// One tensor of a V1 checkpoint: full shape, dtype, and its slices with their files.
#[derive(Clone, Debug)]
pub struct V1Tensor {
    /// The full shape.
    pub shape: Vec<usize>,
    /// The dtype.
    pub dtype: DataType,
    /// Each stored slice and the index of the file that holds it.
    pub slices: Vec<(TensorSlice, usize)>,
}

/// One file's records by key.
type Records = BTreeMap<Vec<u8>, Vec<u8>>;

/// The files matching a pattern, read whole, and the tensors their metadata lists.
pub struct V1Reader {
    pattern: String,
    files: Vec<(String, Records)>,
    tensors: BTreeMap<String, V1Tensor>,
}

fn matching(pattern: &str) -> Result<Vec<String>, Status> {
    let paths = glob::glob(pattern)
        .map_err(|e| Status::invalid_argument(format!("file pattern '{pattern}' is not a valid glob: {e}")))?;
    let mut out: Vec<String> =
        paths.flatten().filter(|p| p.is_file()).map(|p| p.to_string_lossy().into_owned()).collect();
    out.sort();
    Ok(out)
}

impl V1Reader {
    /// Reads every file matching `pattern` (NOT_FOUND when none does, DATA_LOSS for a file
    /// that is not a V1 checkpoint).
    pub fn open(pattern: &str) -> Result<V1Reader, Status> {
        let names = matching(pattern)?;
        if names.is_empty() {
            return Err(Status::not_found(format!(
                "Unsuccessful TensorSliceReader constructor: Failed to find any matching files for {pattern}"
            )));
        }
        let mut r = V1Reader { pattern: pattern.to_string(), files: Vec::new(), tensors: BTreeMap::new() };
        for name in names {
            ferroflow_core::check_file_path(&name, "checkpoint file")?;
            let bytes = std::fs::read(&name)
                .map_err(|e| Status::not_found(format!("cannot read checkpoint file {name}: {e}")))?;
            let entries = read_table(&bytes, &name).map_err(|e| {
                Status::data_loss(format!(
                    "Unable to open table file {name}: {}: perhaps your file is in a different file format and \
                     you need to use a different restore operator?",
                    e.message
                ))
            })?;
            r.add_file(name, entries.into_iter().collect())?;
        }
        Ok(r)
    }

    fn add_file(&mut self, name: String, entries: Records) -> Result<(), Status> {
        let bad = |why: String| Status::data_loss(format!("V1 checkpoint file {name}: {why}"));
        let meta_bytes = entries.get(&b""[..]).ok_or_else(|| bad("no metadata record (empty key)".into()))?;
        let meta = SavedTensorSlices::decode(meta_bytes.as_slice())
            .map_err(|e| bad(format!("cannot parse the metadata record: {e}")))?
            .meta
            .ok_or_else(|| bad("the metadata record holds no metadata".into()))?;
        let file = self.files.len();
        for t in &meta.tensor {
            let shape = t
                .shape
                .as_ref()
                .map(Shape::from_proto)
                .transpose()?
                .ok_or_else(|| bad(format!("tensor '{}' has no shape", t.name)))?;
            let (dtype, _) = DataType::from_proto(t.r#type)?;
            let entry = self.tensors.entry(t.name.clone()).or_insert_with(|| V1Tensor {
                shape: shape.dims().to_vec(),
                dtype,
                slices: vec![],
            });
            if entry.shape != shape.dims() || entry.dtype != dtype {
                return Err(bad(format!(
                    "tensor '{}' is {dtype} {shape} here but {} {:?} in another file",
                    t.name, entry.dtype, entry.shape
                )));
            }
            for s in &t.slice {
                let s = TensorSlice::from_proto(s)?;
                s.bounds(&entry.shape).map_err(|e| bad(format!("tensor '{}': {}", t.name, e.message)))?;
                entry.slices.push((s, file));
            }
        }
        self.files.push((name, entries));
        Ok(())
    }

    /// The tensors and their metadata.
    pub fn tensors(&self) -> &BTreeMap<String, V1Tensor> {
        &self.tensors
    }

    /// Tensor `name`'s metadata (NOT_FOUND as TensorFlow words it).
    pub fn tensor(&self, name: &str) -> Result<&V1Tensor, Status> {
        self.tensors.get(name).ok_or_else(|| {
            Status::not_found(format!("Tensor name \"{name}\" not found in checkpoint files {}", self.pattern))
        })
    }

    /// `slice` of tensor `name` (the whole tensor for `None`), assembled from its stored slices.
    pub fn read(&self, name: &str, slice: Option<&TensorSlice>) -> Result<Tensor, Status> {
        let t = self.tensor(name)?;
        let full_slice = TensorSlice::full(t.shape.len());
        let slice = slice.unwrap_or(&full_slice);
        let want = slice.bounds(&t.shape).map_err(|e| e.context(format!("tensor '{name}'")))?;
        let lens: Vec<usize> = want.iter().map(|b| b.1).collect();
        let mut boxes: Vec<Bounds> = Vec::with_capacity(t.slices.len());
        for (s, _) in &t.slices {
            let b = s.bounds(&t.shape)?;
            if boxes.iter().any(|p| overlap_len(p, &b) > 0) {
                return Err(Status::data_loss(format!(
                    "tensor '{name}' in checkpoint files {}: stored slices overlap (at '{s}')",
                    self.pattern
                )));
            }
            boxes.push(b);
        }
        let n = lens.iter().fold(1usize, |a, &l| a.saturating_mul(l));
        let covered = boxes.iter().map(|b| overlap_len(b, &want)).fold(0, usize::saturating_add);
        if covered != n {
            let have: Vec<String> = t.slices.iter().map(|(s, _)| s.to_string()).collect();
            return Err(Status::not_found(format!(
                "Unable to read slice '{slice}' of tensor '{name}' from checkpoint files {}: the stored slices \
                 ({}) of shape {:?} do not cover it",
                self.pattern,
                have.join(", "),
                t.shape
            )));
        }
        crate::array::check_alloc(&lens, t.dtype)?;
        let mut out = Storage::zeros(t.dtype, n)?;
        for ((s, file), b) in t.slices.iter().zip(&boxes) {
            if overlap_len(b, &want) == 0 {
                continue;
            }
            let part = self.slice_values(name, s, *file, t.dtype, b)?;
            if *b == want {
                return Ok(part);
            }
            copy_storage_overlap(part.storage(), b, &mut out, &want)?;
        }
        Tensor::from_storage(Shape::new(lens), out)
    }

    /// The stored values of slice `s` of `name`, whose box is `b`.
    fn slice_values(
        &self,
        name: &str,
        s: &TensorSlice,
        file: usize,
        dt: DataType,
        b: &Bounds,
    ) -> Result<Tensor, Status> {
        let (path, entries) = &self.files[file];
        let bad =
            |why: String| Status::data_loss(format!("V1 checkpoint file {path}: tensor '{name}' slice '{s}': {why}"));
        let bytes = entries.get(&s.key(name)).ok_or_else(|| bad("listed in the metadata but not stored".into()))?;
        let rec = SavedTensorSlices::decode(bytes.as_slice()).map_err(|e| bad(format!("cannot parse: {e}")))?;
        let saved = rec.data.ok_or_else(|| bad("the record holds no data".into()))?;
        if saved.name != name {
            return Err(bad(format!("the record names tensor '{}'", saved.name)));
        }
        let data = saved.data.unwrap_or_default();
        let lens: Vec<usize> = b.iter().map(|x| x.1).collect();
        decode_slice_values(&data, dt, &lens).map_err(|e| bad(e.message))
    }
}
