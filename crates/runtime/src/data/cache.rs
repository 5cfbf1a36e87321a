//! `CacheDataset`/`CacheDatasetV2` (`Dataset.cache()`): the first pass that reads the input
//! to its end keeps the elements in memory, and every later pass (a `repeat`, a new
//! iterator) reads them from there. A pass that stops early keeps nothing (TensorFlow
//! discards a partial cache too, so a cached dataset is never silently cut short). V2's
//! `DummyMemoryCache` resource is TensorFlow's marker for "a cache owned by the dataset",
//! which is what each dataset here has. A non-empty `filename` caches to files
//! ([`super::file_cache`]).

use std::sync::{Arc, Mutex};

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{ResourceHandle, Status, Tensor};
use ferroflow_kernels::{OpContext, OpKernel};

use super::dataset::{dataset_input, Dataset, DatasetIter, DatasetRef, Element, IterCtx};
use super::sources::Elements;
use super::BuildFn;

struct Cache {
    input: Arc<DatasetRef>,
    /// The elements of a completed pass.
    done: Mutex<Option<Arc<Elements>>>,
}

/// A pass reading the input and keeping what it gives.
struct CacheWrite {
    ds: Arc<Cache>,
    input: Box<dyn DatasetIter>,
    kept: Vec<Element>,
}

impl Dataset for Cache {
    fn make_iter(self: Arc<Self>, ctx: &IterCtx) -> Result<Box<dyn DatasetIter>, Status> {
        let done = self.done.lock().unwrap_or_else(|e| e.into_inner()).clone();
        match done {
            Some(elements) => elements.make_iter(ctx),
            None => Ok(Box::new(CacheWrite { input: self.input.iter(ctx)?, ds: self, kept: Vec::new() })),
        }
    }

    fn cardinality(&self) -> i64 {
        self.input.cardinality()
    }
}

impl DatasetIter for CacheWrite {
    fn next(&mut self, ctx: &IterCtx) -> Result<Option<Element>, Status> {
        match self.input.next(ctx)? {
            Some(e) => {
                self.kept.push(e.clone());
                Ok(Some(e))
            }
            None => {
                let elements = Arc::new(Elements(std::mem::take(&mut self.kept)));
                self.ds.done.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(elements);
                Ok(None)
            }
        }
    }
}

/// `CacheDataset`, `CacheDatasetV2`.
pub(super) fn cache(n: &NodeDef) -> Result<BuildFn, Status> {
    let node = n.name.clone();
    let types_len = ferroflow_core::NodeAttrs::attr_list_type(n, "output_types")?.len();
    Ok(Box::new(move |ctx| {
        let input = dataset_input(ctx, 0)?;
        let filename = ctx.input(1)?;
        let filename = filename.scalar_value::<Vec<u8>>().map_err(|e| ctx.error(e.message))?;
        if !filename.is_empty() {
            let prefix = String::from_utf8(filename)
                .map_err(|_| ctx.error("the cache filename is not valid UTF-8".to_string()))?;
            let components = types_len;
            let ds = super::file_cache::FileCache { input, prefix, components, node: node.clone() };
            return Ok(Arc::new(ds) as Arc<dyn Dataset>);
        }
        Ok(Arc::new(Cache { input, done: Mutex::new(None) }) as Arc<dyn Dataset>)
    }))
}

/// `DummyMemoryCache`: a handle that only marks a V2 cache as the dataset's own.
pub(super) struct DummyMemoryCache;

impl OpKernel for DummyMemoryCache {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let h = ResourceHandle::new(ctx.device(), "", "dummy_memory_cache", "MemoryCache");
        ctx.set_output(0, Tensor::scalar(h))
    }
    fn is_expensive(&self) -> bool {
        false
    }
}
