//! `tf.data` dataset ops, with TensorFlow's definitions (inputs, attrs and defaults as
//! TensorFlow 2.21 registers them). Each outputs a `DT_VARIANT` scalar holding a dataset;
//! `ferroflow_runtime` runs them.

use ferroflow_core::NodeAttrs;

use crate::op_def::op;
use crate::registry::OpRegistry;
use crate::shape_fn::scalar;

/// One dataset op: name, inputs, attrs beyond the element's `output_types` and
/// `output_shapes` (which an op has when `typed`), and whether it is stateful.
type DatasetOp = (&'static str, &'static [&'static str], &'static [&'static str], bool, bool);

const OPS: &[DatasetOp] = &[
    (
        "GeneratorDataset",
        &[
            "init_func_other_args: Tinit_func_args",
            "next_func_other_args: Tnext_func_args",
            "finalize_func_other_args: Tfinalize_func_args",
        ],
        &[
            "init_func: func",
            "next_func: func",
            "finalize_func: func",
            "Tinit_func_args: list(type) >= 0",
            "Tnext_func_args: list(type) >= 0",
            "Tfinalize_func_args: list(type) >= 0",
            "metadata: string = ''",
        ],
        true,
        true,
    ),
    (
        "TensorDataset",
        &["components: Toutput_types"],
        &["Toutput_types: list(type) >= 1", "output_shapes: list(shape) >= 1", "metadata: string = ''"],
        false,
        true,
    ),
    (
        "TensorSliceDataset",
        &["components: Toutput_types"],
        &[
            "Toutput_types: list(type) >= 1",
            "output_shapes: list(shape) >= 1",
            "is_files: bool = false",
            "metadata: string = ''",
            "replicate_on_split: bool = false",
        ],
        false,
        true,
    ),
    (
        "RangeDataset",
        &["start: int64", "stop: int64", "step: int64"],
        &["metadata: string = ''", "replicate_on_split: bool = false"],
        true,
        true,
    ),
    (
        "MapDataset",
        &["input_dataset: variant", "other_arguments: Targuments"],
        &[
            "f: func",
            "Targuments: list(type) >= 0",
            "use_inter_op_parallelism: bool = true",
            "preserve_cardinality: bool = false",
            "force_synchronous: bool = false",
            "metadata: string = ''",
        ],
        true,
        false,
    ),
    (
        "ParallelMapDataset",
        &["input_dataset: variant", "other_arguments: Targuments", "num_parallel_calls: int32"],
        &[
            "f: func",
            "Targuments: list(type) >= 0",
            "use_inter_op_parallelism: bool = true",
            "sloppy: bool = false",
            "preserve_cardinality: bool = false",
            "metadata: string = ''",
        ],
        true,
        false,
    ),
    (
        "ParallelMapDatasetV2",
        &["input_dataset: variant", "other_arguments: Targuments", "num_parallel_calls: int64"],
        &[
            "f: func",
            "Targuments: list(type) >= 0",
            "use_inter_op_parallelism: bool = true",
            "deterministic: string = 'default'",
            "preserve_cardinality: bool = false",
            "use_unbounded_threadpool: bool = false",
            "metadata: string = ''",
        ],
        true,
        false,
    ),
    (
        "FilterDataset",
        &["input_dataset: variant", "other_arguments: Targuments"],
        &["predicate: func", "Targuments: list(type) >= 0", "metadata: string = ''"],
        true,
        false,
    ),
    (
        "FlatMapDataset",
        &["input_dataset: variant", "other_arguments: Targuments"],
        &["f: func", "Targuments: list(type) >= 0", "metadata: string = ''"],
        true,
        false,
    ),
    (
        "InterleaveDataset",
        &["input_dataset: variant", "other_arguments: Targuments", "cycle_length: int64", "block_length: int64"],
        &["f: func", "Targuments: list(type) >= 0", "metadata: string = ''"],
        true,
        false,
    ),
    (
        "ParallelInterleaveDatasetV2",
        &[
            "input_dataset: variant",
            "other_arguments: Targuments",
            "cycle_length: int64",
            "block_length: int64",
            "num_parallel_calls: int64",
        ],
        &["f: func", "Targuments: list(type) >= 0", "sloppy: bool = false", "metadata: string = ''"],
        true,
        false,
    ),
    (
        "ParallelInterleaveDatasetV3",
        &[
            "input_dataset: variant",
            "other_arguments: Targuments",
            "cycle_length: int64",
            "block_length: int64",
            "num_parallel_calls: int64",
        ],
        &["f: func", "deterministic: string = 'default'", "Targuments: list(type) >= 0", "metadata: string = ''"],
        true,
        false,
    ),
    (
        "ParallelInterleaveDatasetV4",
        &[
            "input_dataset: variant",
            "other_arguments: Targuments",
            "cycle_length: int64",
            "block_length: int64",
            "buffer_output_elements: int64",
            "prefetch_input_elements: int64",
            "num_parallel_calls: int64",
        ],
        &["f: func", "deterministic: string = 'default'", "Targuments: list(type) >= 0", "metadata: string = ''"],
        true,
        false,
    ),
    ("UnbatchDataset", &["input_dataset: variant"], &["metadata: string = ''"], true, false),
    (
        "WindowDataset",
        &["input_dataset: variant", "size: int64", "shift: int64", "stride: int64", "drop_remainder: bool"],
        &["metadata: string = ''"],
        true,
        false,
    ),
    ("CacheDataset", &["input_dataset: variant", "filename: string"], &["metadata: string = ''"], true, false),
    (
        "CacheDatasetV2",
        &["input_dataset: variant", "filename: string", "cache: resource"],
        &["metadata: string = ''"],
        true,
        true,
    ),
    ("BatchDataset", &["input_dataset: variant", "batch_size: int64"], &["metadata: string = ''"], true, false),
    (
        "BatchDatasetV2",
        &["input_dataset: variant", "batch_size: int64", "drop_remainder: bool"],
        &["parallel_copy: bool = false", "metadata: string = ''"],
        true,
        false,
    ),
    (
        "PaddedBatchDataset",
        &["input_dataset: variant", "batch_size: int64", "padded_shapes: N * int64", "padding_values: Toutput_types"],
        &["Toutput_types: list(type) >= 1", "output_shapes: list(shape) >= 1", "N: int >= 1", "metadata: string = ''"],
        false,
        false,
    ),
    (
        "PaddedBatchDatasetV2",
        &[
            "input_dataset: variant",
            "batch_size: int64",
            "padded_shapes: N * int64",
            "padding_values: Toutput_types",
            "drop_remainder: bool",
        ],
        &[
            "parallel_copy: bool = false",
            "Toutput_types: list(type) >= 1",
            "output_shapes: list(shape) >= 1",
            "N: int >= 1",
            "metadata: string = ''",
        ],
        false,
        false,
    ),
    ("RepeatDataset", &["input_dataset: variant", "count: int64"], &["metadata: string = ''"], true, false),
    ("TakeDataset", &["input_dataset: variant", "count: int64"], &["metadata: string = ''"], true, false),
    ("SkipDataset", &["input_dataset: variant", "count: int64"], &["metadata: string = ''"], true, false),
    ("ZipDataset", &["input_datasets: N * variant"], &["N: int >= 1", "metadata: string = ''"], true, false),
    (
        "ConcatenateDataset",
        &["input_dataset: variant", "another_dataset: variant"],
        &["metadata: string = ''"],
        true,
        false,
    ),
    (
        "ShuffleDataset",
        &["input_dataset: variant", "buffer_size: int64", "seed: int64", "seed2: int64"],
        &["reshuffle_each_iteration: bool = true", "metadata: string = ''"],
        true,
        false,
    ),
    (
        "PrefetchDataset",
        &["input_dataset: variant", "buffer_size: int64"],
        &["slack_period: int = 0", "legacy_autotune: bool = true", "buffer_size_min: int = 0", "metadata: string = ''"],
        true,
        false,
    ),
    (
        "TFRecordDataset",
        &["filenames: string", "compression_type: string", "buffer_size: int64"],
        &["metadata: string = ''"],
        false,
        true,
    ),
    (
        "TextLineDataset",
        &["filenames: string", "compression_type: string", "buffer_size: int64"],
        &["metadata: string = ''"],
        false,
        true,
    ),
    (
        "FixedLengthRecordDataset",
        &[
            "filenames: string",
            "header_bytes: int64",
            "record_bytes: int64",
            "footer_bytes: int64",
            "buffer_size: int64",
        ],
        &["metadata: string = ''"],
        false,
        true,
    ),
    (
        "FixedLengthRecordDatasetV2",
        &[
            "filenames: string",
            "header_bytes: int64",
            "record_bytes: int64",
            "footer_bytes: int64",
            "buffer_size: int64",
            "compression_type: string",
        ],
        &["metadata: string = ''"],
        false,
        true,
    ),
    (
        "ModelDataset",
        &["input_dataset: variant"],
        &["algorithm: int = 0", "cpu_budget: int = 0", "ram_budget: int = 0"],
        true,
        false,
    ),
    (
        "OptimizeDataset",
        &["input_dataset: variant", "optimizations: string"],
        &["optimization_configs: list(string) = []"],
        true,
        false,
    ),
    (
        "OptimizeDatasetV2",
        &[
            "input_dataset: variant",
            "optimizations_enabled: string",
            "optimizations_disabled: string",
            "optimizations_default: string",
        ],
        &["optimization_configs: list(string) = []"],
        true,
        false,
    ),
    (
        "OptionsDataset",
        &["input_dataset: variant"],
        &["serialized_options: string", "metadata: string = ''"],
        true,
        false,
    ),
];

pub(crate) fn register(r: &mut OpRegistry) {
    for &(name, inputs, attrs, typed, stateful) in OPS {
        let mut b = inputs.iter().fold(op(name), |b, i| b.input(i)).output("handle: variant");
        if typed {
            b = b.attr("output_types: list(type) >= 1").attr("output_shapes: list(shape) >= 1");
        }
        b = attrs.iter().fold(b, |b, a| b.attr(a));
        if stateful {
            b = b.stateful();
        }
        r.add(b.shape_fn(scalar).build());
    }
    // `Dataset.reduce`: the final state, not a dataset (stateful in TensorFlow).
    r.add(
        op("ReduceDataset")
            .input("input_dataset: variant")
            .input("initial_state: Tstate")
            .input("other_arguments: Targuments")
            .output("components: output_types")
            .attr("f: func")
            .attr("Tstate: list(type) >= 1")
            .attr("Targuments: list(type) >= 0")
            .attr("output_types: list(type) >= 1")
            .attr("output_shapes: list(shape) >= 1")
            .attr("use_inter_op_parallelism: bool = true")
            .attr("metadata: string = ''")
            .stateful()
            .shape_fn(|c| Ok(vec![None; c.node.attr_list_type("output_types").map_or(0, |t| t.len())]))
            .build(),
    );
    // A V2 cache's marker resource (the cache is the dataset's own).
    r.add(op("DummyMemoryCache").output("handle: resource").stateful().shape_fn(scalar).build());
    // The dataset's serialized `tf.data.Options`.
    r.add(
        op("GetOptions").input("input_dataset: variant").output("serialized_options: string").shape_fn(scalar).build(),
    );
    // The number of elements (-1 infinite, -2 unknown).
    r.add(
        op("DatasetCardinality")
            .input("input_dataset: variant")
            .output("cardinality: int64")
            .attr("cardinality_options: string = ''")
            .shape_fn(scalar)
            .build(),
    );
}
