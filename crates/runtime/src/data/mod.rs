//! `tf.data` in graphs: the dataset ops a TensorFlow 1.x input pipeline builds
//! (`TensorSliceDataset`, `MapDataset`, `BatchDatasetV2`, `TFRecordDataset`, …) and the
//! iterator ops that read them (`IteratorV2`, `MakeIterator`, `OneShotIterator`,
//! `IteratorGetNext`, string handles).
//!
//! A dataset op's output is a `DT_VARIANT` scalar holding an immutable dataset; an iterator
//! resource holds one pass over it. Element production runs on data threads (see
//! [`pool`]), never on the compute pool: a stage may block on a user function (run as a
//! sub-step on the compute pool, like `If`'s branches) or on a prefetching thread. Datasets
//! live in the process that made them: a dataset variant cannot be sent to another task,
//! so a pipeline and its iterator must be on one device (TensorFlow's Python client puts
//! them together).

mod batch;
mod cache;
mod dataset;
mod file_cache;
mod func;
mod generator;
mod interleave;
mod iterator;
mod map;
mod multi_device;
mod pool;
mod prefetch;
mod readers;
mod reduce;
mod shuffle;
mod simple;
mod sources;
mod tensor_util;
#[cfg(test)]
mod tests;
mod unbatch;
mod window;

use std::sync::Arc;

use ferroflow_core::proto::{FunctionDefLibrary, NodeDef};
use ferroflow_core::{DataType, Status};
use ferroflow_kernels::{OpContext, OpKernel};

use dataset::{dataset_input, dataset_tensor, declared, Dataset, DatasetRef, Shapes};

/// Builds a node's dataset from its inputs (at each run: inputs may change).
pub(crate) type BuildFn = Box<dyn Fn(&mut OpContext) -> Result<Arc<dyn Dataset>, Status> + Send + Sync>;

/// The ops this module runs.
pub(crate) const DATA_OPS: &[&str] = &[
    "TensorDataset",
    "TensorSliceDataset",
    "RangeDataset",
    "MapDataset",
    "ParallelMapDataset",
    "ParallelMapDatasetV2",
    "FilterDataset",
    "FlatMapDataset",
    "InterleaveDataset",
    "ParallelInterleaveDatasetV2",
    "ParallelInterleaveDatasetV3",
    "ParallelInterleaveDatasetV4",
    "UnbatchDataset",
    "WindowDataset",
    "ReduceDataset",
    "CacheDataset",
    "CacheDatasetV2",
    "DummyMemoryCache",
    "BatchDataset",
    "BatchDatasetV2",
    "PaddedBatchDataset",
    "PaddedBatchDatasetV2",
    "RepeatDataset",
    "TakeDataset",
    "SkipDataset",
    "ZipDataset",
    "ConcatenateDataset",
    "ShuffleDataset",
    "PrefetchDataset",
    "TFRecordDataset",
    "TextLineDataset",
    "FixedLengthRecordDataset",
    "FixedLengthRecordDatasetV2",
    "ModelDataset",
    "OptimizeDataset",
    "OptimizeDatasetV2",
    "OptionsDataset",
    "Iterator",
    "IteratorV2",
    "AnonymousIterator",
    "AnonymousIteratorV2",
    "AnonymousIteratorV3",
    "MakeIterator",
    "OneShotIterator",
    "IteratorGetNext",
    "IteratorGetNextSync",
    "IteratorGetNextAsOptional",
    "IteratorToStringHandle",
    "IteratorFromStringHandle",
    "IteratorFromStringHandleV2",
    "DeleteIterator",
    "DatasetCardinality",
    "GetOptions",
    "GeneratorDataset",
    "AnonymousMultiDeviceIteratorV3",
    "AnonymousMultiDeviceIterator",
    "MultiDeviceIterator",
    "MultiDeviceIteratorInit",
    "MultiDeviceIteratorGetNextFromShard",
    "MultiDeviceIteratorToStringHandle",
    "MultiDeviceIteratorFromStringHandle",
    "DeleteMultiDeviceIterator",
];

/// The kernel of a dataset-producing node: builds the dataset and outputs its variant.
struct DatasetKernel {
    build: BuildFn,
    types: Vec<DataType>,
    shapes: Shapes,
    /// `OptionsDataset`'s serialized options.
    own_options: Vec<u8>,
}

impl OpKernel for DatasetKernel {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let ds = (self.build)(ctx)?;
        let node = ctx.node().name.clone();
        let mut options = Vec::new();
        for i in 0..ctx.num_inputs() {
            if ctx.input(i)?.dtype() == DataType::Variant {
                if let Ok(d) = dataset_input(ctx, i) {
                    options.extend_from_slice(&d.options);
                }
            }
        }
        options.extend_from_slice(&self.own_options);
        let d = DatasetRef { ds, types: self.types.clone(), shapes: self.shapes.clone(), node, options };
        ctx.set_output(0, dataset_tensor(d))
    }
    fn is_expensive(&self) -> bool {
        false
    }
}

/// `GetOptions`: a dataset's serialized `tf.data.Options`.
struct GetOptions;

impl OpKernel for GetOptions {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let options = dataset_input(ctx, 0)?.options.clone();
        ctx.set_output(0, ferroflow_core::Tensor::scalar(options))
    }
    fn is_expensive(&self) -> bool {
        false
    }
}

/// `DatasetCardinality`: the number of elements (-1 infinite, -2 unknown).
struct Cardinality;

impl OpKernel for Cardinality {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let n = dataset_input(ctx, 0)?.cardinality();
        ctx.set_output(0, ferroflow_core::Tensor::scalar(n))
    }
    fn is_expensive(&self) -> bool {
        false
    }
}

/// Stages that change nothing in ferroflow (TensorFlow's tuning and options wrappers).
fn pass_through(_: &NodeDef) -> Result<BuildFn, Status> {
    Ok(Box::new(|ctx| Ok(dataset_input(ctx, 0)?.ds.clone())))
}

/// Builds the kernel of a `tf.data` node (`n` has its defaults filled).
pub(crate) fn data_kernel(
    n: &NodeDef,
    lib: Option<&FunctionDefLibrary>,
    depth: usize,
) -> Result<Box<dyn OpKernel>, Status> {
    let build = match n.op.as_str() {
        "TensorDataset" => sources::tensors(n, false)?,
        "TensorSliceDataset" => sources::tensors(n, true)?,
        "RangeDataset" => sources::range(n)?,
        "MapDataset" | "ParallelMapDataset" | "ParallelMapDatasetV2" | "FilterDataset" | "FlatMapDataset" => {
            map::fn_stage(n, lib, depth)?
        }
        "BatchDataset" | "BatchDatasetV2" | "PaddedBatchDataset" | "PaddedBatchDatasetV2" => batch::batch(n)?,
        "RepeatDataset" | "TakeDataset" | "SkipDataset" | "ZipDataset" | "ConcatenateDataset" => simple::simple(n)?,
        "ShuffleDataset" => shuffle::shuffle(n)?,
        "InterleaveDataset"
        | "ParallelInterleaveDatasetV2"
        | "ParallelInterleaveDatasetV3"
        | "ParallelInterleaveDatasetV4" => interleave::interleave(n, lib, depth)?,
        "UnbatchDataset" => unbatch::unbatch(n)?,
        "WindowDataset" => window::window(n)?,
        "CacheDataset" | "CacheDatasetV2" => cache::cache(n)?,
        "DummyMemoryCache" => return Ok(Box::new(cache::DummyMemoryCache)),
        "ReduceDataset" => return reduce::kernel(n, lib, depth),
        "GeneratorDataset" => generator::generator(n, lib, depth)?,
        "PrefetchDataset" => prefetch::prefetch(n)?,
        "TFRecordDataset" | "TextLineDataset" | "FixedLengthRecordDataset" | "FixedLengthRecordDatasetV2" => {
            readers::files(n)?
        }
        "ModelDataset" | "OptimizeDataset" | "OptimizeDatasetV2" | "OptionsDataset" => pass_through(n)?,
        "DatasetCardinality" => return Ok(Box::new(Cardinality)),
        "GetOptions" => return Ok(Box::new(GetOptions)),
        o if o.contains("MultiDeviceIterator") => return multi_device::kernel(n),
        _ => return iterator::kernel(n, lib, depth),
    };
    let (types, shapes) = match n.op.as_str() {
        // Readers produce one string scalar per element.
        "TFRecordDataset" | "TextLineDataset" | "FixedLengthRecordDataset" | "FixedLengthRecordDatasetV2" => {
            (vec![DataType::String], vec![Some(vec![])])
        }
        _ => declared(n)?,
    };
    let own_options = match (n.op.as_str(), n.attr.get("serialized_options").and_then(|v| v.value.as_ref())) {
        ("OptionsDataset", Some(ferroflow_core::proto::attr_value::Value::S(b))) => b.to_vec(),
        _ => Vec::new(),
    };
    Ok(Box::new(DatasetKernel { build, types, shapes, own_options }))
}
