//! Checkpoint ops (`SaveV2`, `RestoreV2`, `MergeV2Checkpoints`) and summary ops
//! (`ScalarSummary`, `HistogramSummary`, `MergeSummary`), with TensorFlow's signatures.

use ferroflow_core::{attr, DataType, NodeAttrs, Status};

use crate::op_def::op;
use crate::registry::OpRegistry;
use crate::scope::{Operation, Output, Scope};
use crate::shape_fn::{scalar, Dims, ShapeCtx};

/// TensorFlow's `realnumbertype`.
const REAL_TYPES: &str = "{float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64}";

/// Collection of summary ops (TensorFlow's `GraphKeys.SUMMARIES`).
pub const SUMMARIES: &str = "summaries";

fn no_outputs(_: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![])
}

fn restore_shapes(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![None; c.node.attr_list_type("dtypes")?.len()])
}

pub(crate) fn register(r: &mut OpRegistry) {
    r.add(
        op("SaveV2")
            .input("prefix: string")
            .input("tensor_names: string")
            .input("shape_and_slices: string")
            .input("tensors: dtypes")
            .attr("dtypes: list(type)")
            .stateful()
            .shape_fn(no_outputs)
            .build(),
    );
    r.add(
        op("RestoreV2")
            .input("prefix: string")
            .input("tensor_names: string")
            .input("shape_and_slices: string")
            .output("tensors: dtypes")
            .attr("dtypes: list(type)")
            .stateful()
            .shape_fn(restore_shapes)
            .build(),
    );
    r.add(
        op("MergeV2Checkpoints")
            .input("checkpoint_prefixes: string")
            .input("destination_prefix: string")
            .attr("delete_old_dirs: bool = true")
            .attr("allow_missing_files: bool = false")
            .stateful()
            .shape_fn(no_outputs)
            .build(),
    );
    r.add(
        op("ScalarSummary")
            .input("tags: string")
            .input("values: T")
            .output("summary: string")
            .attr(&format!("T: {REAL_TYPES}"))
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("HistogramSummary")
            .input("tag: string")
            .input("values: T")
            .output("summary: string")
            .attr(&format!("T: {REAL_TYPES} = DT_FLOAT"))
            .shape_fn(scalar)
            .build(),
    );
    let mut image = op("ImageSummary")
        .input("tag: string")
        .input("tensor: T")
        .output("summary: string")
        .attr("max_images: int >= 1 = 3")
        .attr("T: {uint8, float, half, double} = DT_FLOAT")
        .attr("bad_color: tensor")
        .shape_fn(scalar)
        .build();
    // Opaque red, TensorFlow's default.
    let red = ferroflow_core::Tensor::new(vec![4], vec![255u8, 0, 0, 255]);
    if let (Ok(red), Some(a)) = (red, image.attrs.iter_mut().find(|a| a.name == "bad_color")) {
        a.default = Some(attr::tensor(&red));
    }
    r.add(image);
    let audio = op("AudioSummaryV2").input("tag: string").input("tensor: float").input("sample_rate: float");
    r.add(audio.output("summary: string").attr("max_outputs: int >= 1 = 3").shape_fn(scalar).build());
    let audio = op("AudioSummary").input("tag: string").input("tensor: float").output("summary: string");
    r.add(audio.attr("sample_rate: float").attr("max_outputs: int >= 1 = 3").shape_fn(scalar).build());
    let print = op("Print").input("input: T").input("data: U").output("output: T").attr("T: type");
    let print = print.attr("U: list(type) >= 0").attr("message: string = ''").attr("first_n: int = -1");
    r.add(print.attr("summarize: int = 3").stateful().shape_fn(crate::shape_fn::unchanged).build());
    r.add(op("Timestamp").output("ts: float64").stateful().shape_fn(scalar).build());
    let tensor = op("TensorSummaryV2").input("tag: string").input("tensor: T");
    let tensor = tensor.input("serialized_summary_metadata: string").output("summary: string").attr("T: type");
    r.add(tensor.shape_fn(scalar).build());
    r.add(
        op("MergeSummary")
            .input("inputs: N * string")
            .output("summary: string")
            .attr("N: int >= 1")
            .shape_fn(scalar)
            .build(),
    );
}

/// `SaveV2`: writes `tensors` under `tensor_names` to the checkpoint at `prefix`.
pub fn save_v2(
    s: &Scope,
    prefix: Output,
    tensor_names: Output,
    shape_and_slices: Output,
    tensors: Vec<Output>,
) -> Operation {
    s.op("SaveV2").input(prefix).input(tensor_names).input(shape_and_slices).input_list(tensors).build()
}

/// `RestoreV2`: reads `tensor_names` (of `dtypes`) from the checkpoint at `prefix`.
pub fn restore_v2(
    s: &Scope,
    prefix: Output,
    tensor_names: Output,
    shape_and_slices: Output,
    dtypes: &[DataType],
) -> Vec<Output> {
    s.op("RestoreV2")
        .input(prefix)
        .input(tensor_names)
        .input(shape_and_slices)
        .attr("dtypes", attr::list_type(dtypes))
        .build()
        .outputs()
}

/// `MergeV2Checkpoints`: merges the checkpoints at `checkpoint_prefixes` into
/// `destination_prefix`.
pub fn merge_v2_checkpoints(
    s: &Scope,
    checkpoint_prefixes: Output,
    destination_prefix: Output,
    delete_old_dirs: bool,
) -> Operation {
    s.op("MergeV2Checkpoints")
        .input(checkpoint_prefixes)
        .input(destination_prefix)
        .attr("delete_old_dirs", attr::bool(delete_old_dirs))
        .build()
}

/// `ScalarSummary` (`tf.compat.v1.summary.scalar`): a serialized `Summary` with one simple
/// value per tag; added to the `summaries` collection.
pub fn scalar_summary(s: &Scope, tags: Output, values: Output) -> Output {
    let out = s.op("ScalarSummary").input(tags).input(values).build().output(0);
    s.graph().add_to_collection(SUMMARIES, &out.node);
    out
}

/// `HistogramSummary` (`tf.compat.v1.summary.histogram`); added to `summaries`.
pub fn histogram_summary(s: &Scope, tag: Output, values: Output) -> Output {
    let out = s.op("HistogramSummary").input(tag).input(values).build().output(0);
    s.graph().add_to_collection(SUMMARIES, &out.node);
    out
}

/// `MergeSummary`: the union of serialized summaries.
pub fn merge_summary(s: &Scope, inputs: Vec<Output>) -> Output {
    s.op("MergeSummary").input_list(inputs).build().output(0)
}
