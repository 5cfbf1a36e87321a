//! TensorFlow 2's summary-writer ops (`tf.summary.create_file_writer` and the writes under
//! it), with TensorFlow's signatures: `SummaryWriter` makes the handle, `CreateSummaryFileWriter`
//! (or `CreateSummaryDbWriter`) the writer, `Write*Summary` / `ImportEvent` append events,
//! `FlushSummaryWriter` / `CloseSummaryWriter` flush and close. All stateful, no outputs
//! but the handle.

use ferroflow_core::Status;

use crate::op_def::op;
use crate::registry::OpRegistry;
use crate::shape_fn::{Dims, ShapeCtx};

/// TensorFlow's `realnumbertype`.
const REAL_TYPES: &str = "{float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64}";

fn none(_: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![])
}

pub(crate) fn register(r: &mut OpRegistry) {
    let handle = op("SummaryWriter").handle_output("writer", false);
    r.add(handle.attr("shared_name: string = ''").attr("container: string = ''").stateful().build());
    let w = |name: &str| op(name).input("writer: resource");
    let step = |name: &str| w(name).input("step: int64");
    let file = w("CreateSummaryFileWriter").input("logdir: string").input("max_queue: int32");
    let file = file.input("flush_millis: int32").input("filename_suffix: string");
    let db = w("CreateSummaryDbWriter").input("db_uri: string").input("experiment_name: string");
    let db = db.input("run_name: string").input("user_name: string");
    let scalar = step("WriteScalarSummary").input("tag: string").input("value: T");
    let scalar = scalar.attr(&format!("T: {REAL_TYPES}"));
    let histo_types = REAL_TYPES.replace('}', ", bool}");
    let histo = step("WriteHistogramSummary").input("tag: string").input("values: T");
    let histo = histo.attr(&format!("T: {histo_types} = DT_FLOAT"));
    let image = step("WriteImageSummary").input("tag: string").input("tensor: T").input("bad_color: uint8");
    let image = image.attr("max_images: int >= 1 = 3").attr("T: {uint8, double, float, half} = DT_FLOAT");
    let audio = step("WriteAudioSummary").input("tag: string").input("tensor: float").input("sample_rate: float");
    let audio = audio.attr("max_outputs: int >= 1 = 3");
    let tensor = step("WriteSummary").input("tensor: T").input("tag: string").input("summary_metadata: string");
    let all = [
        file,
        db,
        scalar,
        histo,
        image,
        audio,
        tensor.attr("T: type"),
        step("WriteRawProtoSummary").input("tensor: string"),
        step("WriteGraphSummary").input("tensor: string"),
        w("ImportEvent").input("event: string"),
        w("FlushSummaryWriter"),
        w("CloseSummaryWriter"),
    ];
    for b in all {
        r.add(b.stateful().shape_fn(none).build());
    }
}
