//! `tf.data` dataset ops, with TensorFlow's definitions (inputs, attrs and defaults as
//! TensorFlow 2.21 registers them). Each outputs a `DT_VARIANT` scalar holding a dataset;
//! `ferroflow_runtime` runs them.

use crate::op_def::op;
use crate::registry::OpRegistry;
use crate::shape_fn::scalar;

pub(crate) fn register(r: &mut OpRegistry) {
    r.add(
        op("TensorDataset")
            .input("components: Toutput_types")
            .output("handle: variant")
            .attr("Toutput_types: list(type) >= 1")
            .attr("output_shapes: list(shape) >= 1")
            .attr("metadata: string = ''")
            .stateful()
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("TensorSliceDataset")
            .input("components: Toutput_types")
            .output("handle: variant")
            .attr("Toutput_types: list(type) >= 1")
            .attr("output_shapes: list(shape) >= 1")
            .attr("is_files: bool = false")
            .attr("metadata: string = ''")
            .attr("replicate_on_split: bool = false")
            .stateful()
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("RangeDataset")
            .input("start: int64")
            .input("stop: int64")
            .input("step: int64")
            .output("handle: variant")
            .attr("output_types: list(type) >= 1")
            .attr("output_shapes: list(shape) >= 1")
            .attr("metadata: string = ''")
            .attr("replicate_on_split: bool = false")
            .stateful()
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("MapDataset")
            .input("input_dataset: variant")
            .input("other_arguments: Targuments")
            .output("handle: variant")
            .attr("f: func")
            .attr("Targuments: list(type) >= 0")
            .attr("output_types: list(type) >= 1")
            .attr("output_shapes: list(shape) >= 1")
            .attr("use_inter_op_parallelism: bool = true")
            .attr("preserve_cardinality: bool = false")
            .attr("force_synchronous: bool = false")
            .attr("metadata: string = ''")
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("ParallelMapDataset")
            .input("input_dataset: variant")
            .input("other_arguments: Targuments")
            .input("num_parallel_calls: int32")
            .output("handle: variant")
            .attr("f: func")
            .attr("Targuments: list(type) >= 0")
            .attr("output_types: list(type) >= 1")
            .attr("output_shapes: list(shape) >= 1")
            .attr("use_inter_op_parallelism: bool = true")
            .attr("sloppy: bool = false")
            .attr("preserve_cardinality: bool = false")
            .attr("metadata: string = ''")
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("ParallelMapDatasetV2")
            .input("input_dataset: variant")
            .input("other_arguments: Targuments")
            .input("num_parallel_calls: int64")
            .output("handle: variant")
            .attr("f: func")
            .attr("Targuments: list(type) >= 0")
            .attr("output_types: list(type) >= 1")
            .attr("output_shapes: list(shape) >= 1")
            .attr("use_inter_op_parallelism: bool = true")
            .attr("deterministic: string = 'default'")
            .attr("preserve_cardinality: bool = false")
            .attr("use_unbounded_threadpool: bool = false")
            .attr("metadata: string = ''")
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("FilterDataset")
            .input("input_dataset: variant")
            .input("other_arguments: Targuments")
            .output("handle: variant")
            .attr("predicate: func")
            .attr("Targuments: list(type) >= 0")
            .attr("output_types: list(type) >= 1")
            .attr("output_shapes: list(shape) >= 1")
            .attr("metadata: string = ''")
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("FlatMapDataset")
            .input("input_dataset: variant")
            .input("other_arguments: Targuments")
            .output("handle: variant")
            .attr("f: func")
            .attr("Targuments: list(type) >= 0")
            .attr("output_types: list(type) >= 1")
            .attr("output_shapes: list(shape) >= 1")
            .attr("metadata: string = ''")
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("BatchDataset")
            .input("input_dataset: variant")
            .input("batch_size: int64")
            .output("handle: variant")
            .attr("output_types: list(type) >= 1")
            .attr("output_shapes: list(shape) >= 1")
            .attr("metadata: string = ''")
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("BatchDatasetV2")
            .input("input_dataset: variant")
            .input("batch_size: int64")
            .input("drop_remainder: bool")
            .output("handle: variant")
            .attr("parallel_copy: bool = false")
            .attr("output_types: list(type) >= 1")
            .attr("output_shapes: list(shape) >= 1")
            .attr("metadata: string = ''")
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("PaddedBatchDataset")
            .input("input_dataset: variant")
            .input("batch_size: int64")
            .input("padded_shapes: N * int64")
            .input("padding_values: Toutput_types")
            .output("handle: variant")
            .attr("Toutput_types: list(type) >= 1")
            .attr("output_shapes: list(shape) >= 1")
            .attr("N: int >= 1")
            .attr("metadata: string = ''")
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("PaddedBatchDatasetV2")
            .input("input_dataset: variant")
            .input("batch_size: int64")
            .input("padded_shapes: N * int64")
            .input("padding_values: Toutput_types")
            .input("drop_remainder: bool")
            .output("handle: variant")
            .attr("parallel_copy: bool = false")
            .attr("Toutput_types: list(type) >= 1")
            .attr("output_shapes: list(shape) >= 1")
            .attr("N: int >= 1")
            .attr("metadata: string = ''")
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("RepeatDataset")
            .input("input_dataset: variant")
            .input("count: int64")
            .output("handle: variant")
            .attr("output_types: list(type) >= 1")
            .attr("output_shapes: list(shape) >= 1")
            .attr("metadata: string = ''")
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("TakeDataset")
            .input("input_dataset: variant")
            .input("count: int64")
            .output("handle: variant")
            .attr("output_types: list(type) >= 1")
            .attr("output_shapes: list(shape) >= 1")
            .attr("metadata: string = ''")
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("SkipDataset")
            .input("input_dataset: variant")
            .input("count: int64")
            .output("handle: variant")
            .attr("output_types: list(type) >= 1")
            .attr("output_shapes: list(shape) >= 1")
            .attr("metadata: string = ''")
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("ZipDataset")
            .input("input_datasets: N * variant")
            .output("handle: variant")
            .attr("output_types: list(type) >= 1")
            .attr("output_shapes: list(shape) >= 1")
            .attr("N: int >= 1")
            .attr("metadata: string = ''")
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("ConcatenateDataset")
            .input("input_dataset: variant")
            .input("another_dataset: variant")
            .output("handle: variant")
            .attr("output_types: list(type) >= 1")
            .attr("output_shapes: list(shape) >= 1")
            .attr("metadata: string = ''")
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("ShuffleDataset")
            .input("input_dataset: variant")
            .input("buffer_size: int64")
            .input("seed: int64")
            .input("seed2: int64")
            .output("handle: variant")
            .attr("reshuffle_each_iteration: bool = true")
            .attr("output_types: list(type) >= 1")
            .attr("output_shapes: list(shape) >= 1")
            .attr("metadata: string = ''")
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("PrefetchDataset")
            .input("input_dataset: variant")
            .input("buffer_size: int64")
            .output("handle: variant")
            .attr("output_types: list(type) >= 1")
            .attr("output_shapes: list(shape) >= 1")
            .attr("slack_period: int = 0")
            .attr("legacy_autotune: bool = true")
            .attr("buffer_size_min: int = 0")
            .attr("metadata: string = ''")
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("TFRecordDataset")
            .input("filenames: string")
            .input("compression_type: string")
            .input("buffer_size: int64")
            .output("handle: variant")
            .attr("metadata: string = ''")
            .stateful()
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("TextLineDataset")
            .input("filenames: string")
            .input("compression_type: string")
            .input("buffer_size: int64")
            .output("handle: variant")
            .attr("metadata: string = ''")
            .stateful()
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("FixedLengthRecordDataset")
            .input("filenames: string")
            .input("header_bytes: int64")
            .input("record_bytes: int64")
            .input("footer_bytes: int64")
            .input("buffer_size: int64")
            .output("handle: variant")
            .attr("metadata: string = ''")
            .stateful()
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("FixedLengthRecordDatasetV2")
            .input("filenames: string")
            .input("header_bytes: int64")
            .input("record_bytes: int64")
            .input("footer_bytes: int64")
            .input("buffer_size: int64")
            .input("compression_type: string")
            .output("handle: variant")
            .attr("metadata: string = ''")
            .stateful()
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("ModelDataset")
            .input("input_dataset: variant")
            .output("handle: variant")
            .attr("algorithm: int = 0")
            .attr("cpu_budget: int = 0")
            .attr("ram_budget: int = 0")
            .attr("output_types: list(type) >= 1")
            .attr("output_shapes: list(shape) >= 1")
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("OptimizeDataset")
            .input("input_dataset: variant")
            .input("optimizations: string")
            .output("handle: variant")
            .attr("output_types: list(type) >= 1")
            .attr("output_shapes: list(shape) >= 1")
            .attr("optimization_configs: list(string) = []")
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("OptimizeDatasetV2")
            .input("input_dataset: variant")
            .input("optimizations_enabled: string")
            .input("optimizations_disabled: string")
            .input("optimizations_default: string")
            .output("handle: variant")
            .attr("output_types: list(type) >= 1")
            .attr("output_shapes: list(shape) >= 1")
            .attr("optimization_configs: list(string) = []")
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("OptionsDataset")
            .input("input_dataset: variant")
            .output("handle: variant")
            .attr("serialized_options: string")
            .attr("output_types: list(type) >= 1")
            .attr("output_shapes: list(shape) >= 1")
            .attr("metadata: string = ''")
            .shape_fn(scalar)
            .build(),
    );
}
