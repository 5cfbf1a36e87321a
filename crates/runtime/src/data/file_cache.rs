//! `Dataset.cache(filename)`: the first pass that reads the input to its end writes the
//! elements to a tensor bundle at `filename` (TensorFlow's checkpoint format, the files
//! `filename.index` and `filename.data-00000-of-00001`), and every later pass, in this or
//! another process, reads them from there instead of the input. The files are TensorFlow's:
//! element `i`'s component `j` is the tensor keyed `"%7d_%Nd"` (right-aligned with spaces, N
//! the digits of the last component index), so a cache written by TensorFlow reads here and
//! the other way round.
//! While a pass writes, the lock file `filename_0.lockfile` (TensorFlow's) keeps a second
//! writer out; a pass that stops early leaves no cache behind (TensorFlow's rule: a cache
//! that was cut short would silently truncate the dataset).

use std::path::PathBuf;
use std::sync::Arc;

use ferroflow_core::{Code, Status};
use ferroflow_kernels::io::bundle_reader::BundleReader;
use ferroflow_kernels::io::bundle_writer::{index_path, BundleWriter};

use super::dataset::{Dataset, DatasetIter, DatasetRef, Element, IterCtx};

/// TensorFlow's limit on the elements of one cache file.
const MAX_ITEMS: usize = 10_000_000;

pub(super) struct FileCache {
    pub(super) input: Arc<DatasetRef>,
    pub(super) prefix: String,
    pub(super) components: usize,
    pub(super) node: String,
}

impl FileCache {
    /// The bundle key of element `item`'s component `j`.
    fn key(&self, item: usize, j: usize) -> String {
        let width = (self.components.max(1) - 1).to_string().len();
        format!("{item:>7}_{j:>width$}")
    }

    fn lockfile(&self) -> PathBuf {
        PathBuf::from(format!("{}_0.lockfile", self.prefix))
    }
}

enum FileCacheIter {
    Read { ds: Arc<FileCache>, reader: BundleReader, next: usize },
    Write(Writer),
}

/// A pass writing the cache; dropped before the end it removes what it wrote.
struct Writer {
    ds: Arc<FileCache>,
    input: Box<dyn DatasetIter>,
    /// Created with the lock file at the first element.
    bundle: Option<BundleWriter>,
    next: usize,
    finished: bool,
}

impl Dataset for FileCache {
    fn make_iter(self: Arc<Self>, ctx: &IterCtx) -> Result<Box<dyn DatasetIter>, Status> {
        if index_path(&self.prefix).exists() {
            let reader = BundleReader::open(&self.prefix)
                .map_err(|e| Status::new(e.code, format!("{}: reading the cache: {}", self.node, e.message)))?;
            return Ok(Box::new(FileCacheIter::Read { ds: self, reader, next: 0 }));
        }
        let input = self.input.iter(ctx)?;
        Ok(Box::new(FileCacheIter::Write(Writer { ds: self, input, bundle: None, next: 0, finished: false })))
    }

    fn cardinality(&self) -> i64 {
        self.input.cardinality()
    }
}

impl Writer {
    /// Takes the lock and opens the bundle (TensorFlow's checks and messages).
    fn start(&mut self) -> Result<(), Status> {
        let ds = &self.ds;
        let shard = format!("{}_0", ds.prefix);
        if index_path(&shard).exists() {
            return Err(Status::new(
                Code::AlreadyExists,
                format!(
                    "{}: Existing cache files found: \n{}\nTo continue delete the above files.",
                    ds.node,
                    index_path(&shard).display()
                ),
            ));
        }
        let lock = ds.lockfile();
        if let Ok(contents) = std::fs::read_to_string(&lock) {
            return Err(Status::new(
                Code::AlreadyExists,
                format!(
                    "{}: There appears to be a concurrent caching iterator running - cache lockfile already exists \
                     ('{}'). If you are sure no other running TF computations are using this cache prefix, delete \
                     the lockfile and re-initialize the iterator. Lockfile contents: {}",
                    ds.node,
                    lock.display(),
                    contents.chars().take(150).collect::<String>()
                ),
            ));
        }
        if let Some(dir) = lock.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| Status::unknown(format!("{}: cannot create {}: {e}", ds.node, dir.display())))?;
        }
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        std::fs::write(&lock, format!("Created at: {now}"))
            .map_err(|e| Status::unknown(format!("{}: cannot create {}: {e}", ds.node, lock.display())))?;
        self.bundle = Some(BundleWriter::new(&ds.prefix)?);
        Ok(())
    }

    fn next(&mut self, ctx: &IterCtx) -> Result<Option<Element>, Status> {
        if self.finished {
            return Ok(None);
        }
        if self.bundle.is_none() {
            self.start()?;
        }
        if self.next >= MAX_ITEMS {
            return Err(Status::invalid_argument(format!(
                "{}: Upstream iterator is producing more than {MAX_ITEMS} items, which is more than the cache limit.",
                self.ds.node
            )));
        }
        let Some(e) = self.input.next(ctx)? else {
            self.finished = true;
            if let Some(b) = self.bundle.take() {
                b.finish()?;
            }
            let _ = std::fs::remove_file(self.ds.lockfile());
            return Ok(None);
        };
        if e.len() != self.ds.components {
            return Err(Status::internal(format!(
                "{}: Upstream iterator returned invalid number of tensors. Expected {} got: {}",
                self.ds.node,
                self.ds.components,
                e.len()
            )));
        }
        let bundle = self.bundle.as_mut().ok_or_else(|| Status::internal("cache writer without a bundle"))?;
        for (j, t) in e.iter().enumerate() {
            bundle.add(&self.ds.key(self.next, j), t)?;
        }
        self.next += 1;
        Ok(Some(e))
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // An unfinished pass: the bundle's temporary file goes with it; so does the lock.
        if !self.finished && self.bundle.take().is_some() {
            tracing::warn!(
                node = %self.ds.node,
                "The calling iterator did not fully read the dataset being cached. In order to avoid unexpected \
                 truncation of the dataset, the partially cached contents of the dataset will be discarded."
            );
            let _ = std::fs::remove_file(self.ds.lockfile());
        }
    }
}

impl DatasetIter for FileCacheIter {
    fn next(&mut self, ctx: &IterCtx) -> Result<Option<Element>, Status> {
        match self {
            FileCacheIter::Write(w) => w.next(ctx),
            FileCacheIter::Read { ds, reader, next } => {
                if !reader.contains(&ds.key(*next, 0)) {
                    return Ok(None);
                }
                let mut e = Vec::with_capacity(ds.components);
                for j in 0..ds.components {
                    let key = ds.key(*next, j);
                    let t = reader.read(&key).map_err(|err| {
                        Status::new(
                            if err.code == Code::NotFound { Code::DataLoss } else { err.code },
                            format!("{}: cache '{}', element {}: {}", ds.node, ds.prefix, *next, err.message),
                        )
                    })?;
                    e.push(t);
                }
                *next += 1;
                Ok(Some(e))
            }
        }
    }
}
