//! TensorFlow 1.x's queue-based input pipeline, with TensorFlow's definitions: the other
//! queue kinds (`PaddingFIFOQueue`, `RandomShuffleQueue`, `PriorityQueue`, each `[V2]`),
//! `QueueDequeueUpTo[V2]`, `QueueIsClosed[V2]`, the readers (`TFRecordReader`,
//! `TextLineReader`, `WholeFileReader`, `FixedLengthRecordReader`, `IdentityReader`, each
//! `V2`) with `ReaderRead[UpTo]V2` and their counters, and `[Resource]CountUpTo` (the epoch
//! limit of `string_input_producer`).

use ferroflow_core::{NodeAttrs, Status};

use crate::op_def::op;
use crate::registry::OpRegistry;
use crate::shape_fn::{scalar, Dims, ShapeCtx};

fn none(_: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![])
}

/// Dequeue outputs: the queue's component shapes are not visible from here, so unknown.
fn dequeue_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let n = c.node.attr_list_type("component_types")?.len();
    Ok(vec![None; n])
}

fn two_scalars(_: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![Some(vec![]), Some(vec![])])
}

fn two_vectors(_: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![Some(vec![-1]), Some(vec![-1])])
}

fn count_up_to_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![if c.node.op == "CountUpTo" { c.input(0) } else { Some(vec![]) }])
}

fn queues(r: &mut OpRegistry) {
    for (name, ref_form) in [("PaddingFIFOQueue", true), ("RandomShuffleQueue", true), ("PriorityQueue", true)] {
        for (name, ref_form) in [(name.to_string(), ref_form), (format!("{name}V2"), false)] {
            let b = op(&name).handle_output("handle", ref_form);
            let b = if name.starts_with("Priority") {
                b.attr("component_types: list(type) >= 0 = []").attr("shapes: list(shape) >= 0")
            } else {
                b.attr("component_types: list(type) >= 1").attr("shapes: list(shape) >= 0 = []")
            };
            let b = b.attr("capacity: int = -1");
            let b = if name.starts_with("RandomShuffle") {
                b.attr("min_after_dequeue: int = 0").attr("seed: int = 0").attr("seed2: int = 0")
            } else {
                b
            };
            r.add(b.attr("container: string = ''").attr("shared_name: string = ''").stateful().build());
        }
    }
    for (suffix, h, stateful) in [("", "handle: Ref(string)", false), ("V2", "handle: resource", true)] {
        let up_to = op(&format!("QueueDequeueUpTo{suffix}")).input(h).input("n: int32");
        let up_to = up_to.output("components: component_types").attr("component_types: list(type) >= 1");
        r.add(up_to.attr("timeout_ms: int = -1").stateful().shape_fn(dequeue_shape).build());
        let closed = op(&format!("QueueIsClosed{suffix}")).input(h).output("is_closed: bool").shape_fn(scalar);
        r.add(if stateful { closed.stateful() } else { closed }.build());
    }
}

fn readers(r: &mut OpRegistry) {
    let make = |name: &str, attrs: &[&str]| {
        let b = attrs.iter().fold(op(name).handle_output("reader_handle", false), |b, a| b.attr(a));
        b.attr("container: string = ''").attr("shared_name: string = ''").stateful().build()
    };
    r.add(make("TFRecordReaderV2", &["compression_type: string = ''"]));
    r.add(make("TextLineReaderV2", &["skip_header_lines: int = 0"]));
    r.add(make("WholeFileReaderV2", &[]));
    r.add(make("IdentityReaderV2", &[]));
    r.add(make(
        "FixedLengthRecordReaderV2",
        &[
            "header_bytes: int = 0",
            "record_bytes: int",
            "footer_bytes: int = 0",
            "hop_bytes: int = 0",
            "encoding: string = ''",
        ],
    ));
    let h = "reader_handle: resource";
    let read = op("ReaderReadV2").input(h).input("queue_handle: resource");
    r.add(read.output("key: string").output("value: string").stateful().shape_fn(two_scalars).build());
    let up_to = op("ReaderReadUpToV2").input(h).input("queue_handle: resource").input("num_records: int64");
    r.add(up_to.output("keys: string").output("values: string").stateful().shape_fn(two_vectors).build());
    let produced = op("ReaderNumRecordsProducedV2").input(h).output("records_produced: int64");
    r.add(produced.stateful().shape_fn(scalar).build());
    let completed = op("ReaderNumWorkUnitsCompletedV2").input(h).output("units_completed: int64");
    r.add(completed.stateful().shape_fn(scalar).build());
    r.add(op("ReaderResetV2").input(h).stateful().shape_fn(none).build());
    r.add(op("ReaderSerializeStateV2").input(h).output("state: string").stateful().shape_fn(scalar).build());
    r.add(op("ReaderRestoreStateV2").input(h).input("state: string").stateful().shape_fn(none).build());
}

pub(crate) fn register(r: &mut OpRegistry) {
    queues(r);
    readers(r);
    let limit = |b: crate::op_def::OpDefBuilder| b.attr("limit: int").attr("T: {int32, int64}");
    r.add(limit(op("CountUpTo").input("ref: Ref(T)").output("output: T")).shape_fn(count_up_to_shape).build());
    let res = op("ResourceCountUpTo").input("resource: resource").output("output: T");
    r.add(limit(res).stateful().shape_fn(count_up_to_shape).build());
}
