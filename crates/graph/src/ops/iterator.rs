//! `tf.data` iterator ops, with TensorFlow's definitions: `IteratorV2`, `MakeIterator`,
//! `OneShotIterator`, `IteratorGetNext`, string handles; `ferroflow_runtime` runs them.

use ferroflow_core::proto::attr_value::Value as AV;
use ferroflow_core::{shape_proto_dims, NodeAttrs, Status};

use crate::op_def::{op, OpDef, OpDefBuilder};
use crate::registry::OpRegistry;
use crate::shape_fn::{scalar, Dims, ShapeCtx};

fn none(_: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![])
}

fn two_scalars(_: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![Some(vec![]), Some(vec![])])
}

/// `IteratorGetNext`: the declared `output_shapes`.
fn get_next_shapes(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let n = c.node.attr_list_type("output_types")?.len();
    let given: Vec<Dims> = match c.node.attr.get("output_shapes").and_then(|v| v.value.as_ref()) {
        Some(AV::List(l)) => l.shape.iter().map(shape_proto_dims).collect(),
        _ => vec![],
    };
    Ok(if given.len() == n { given } else { vec![None; n] })
}

/// A get-next op from its inputs: one output per element component, typed and shaped by
/// the `output_types` and `output_shapes` attrs.
fn get_next(b: OpDefBuilder) -> OpDef {
    b.output("components: output_types")
        .attr("output_types: list(type) >= 1")
        .attr("output_shapes: list(shape) >= 1")
        .stateful()
        .shape_fn(get_next_shapes)
        .build()
}

pub(crate) fn register(r: &mut OpRegistry) {
    for name in ["Iterator", "IteratorV2"] {
        r.add(
            op(name)
                .output("handle: resource")
                .attr("shared_name: string")
                .attr("container: string")
                .attr("output_types: list(type) >= 1")
                .attr("output_shapes: list(shape) >= 1")
                .stateful()
                .shape_fn(scalar)
                .build(),
        );
    }
    for name in ["AnonymousIterator", "AnonymousIteratorV3"] {
        r.add(
            op(name)
                .output("handle: resource")
                .attr("output_types: list(type) >= 1")
                .attr("output_shapes: list(shape) >= 1")
                .stateful()
                .shape_fn(scalar)
                .build(),
        );
    }
    r.add(
        op("AnonymousIteratorV2")
            .output("handle: resource")
            .output("deleter: variant")
            .attr("output_types: list(type) >= 1")
            .attr("output_shapes: list(shape) >= 1")
            .stateful()
            .shape_fn(two_scalars)
            .build(),
    );
    r.add(
        op("OneShotIterator")
            .output("handle: resource")
            .attr("dataset_factory: func")
            .attr("output_types: list(type) >= 1")
            .attr("output_shapes: list(shape) >= 1")
            .attr("container: string = ''")
            .attr("shared_name: string = ''")
            .stateful()
            .shape_fn(scalar)
            .build(),
    );
    for name in ["IteratorGetNext", "IteratorGetNextSync"] {
        r.add(get_next(op(name).input("iterator: resource")));
    }
    r.add(
        op("IteratorToStringHandle")
            .input("resource_handle: resource")
            .output("string_handle: string")
            .stateful()
            .shape_fn(scalar)
            .build(),
    );
    for name in ["IteratorFromStringHandle", "IteratorFromStringHandleV2"] {
        r.add(
            op(name)
                .input("string_handle: string")
                .output("resource_handle: resource")
                .attr("output_types: list(type) >= 0 = []")
                .attr("output_shapes: list(shape) >= 0 = []")
                .stateful()
                .shape_fn(scalar)
                .build(),
        );
    }
    r.add(op("MakeIterator").input("dataset: variant").input("iterator: resource").stateful().shape_fn(none).build());
    r.add(op("DeleteIterator").input("handle: resource").input("deleter: variant").stateful().shape_fn(none).build());
    r.add(
        op("IteratorGetNextAsOptional")
            .input("iterator: resource")
            .output("optional: variant")
            .attr("output_types: list(type) >= 1")
            .attr("output_shapes: list(shape) >= 1")
            .stateful()
            .shape_fn(scalar)
            .build(),
    );
    register_multi_device(r);
}

/// The multi-device iterator (`tf.distribute`'s per-worker datasets): one pass over a
/// dataset dealt round-robin to the shards of its devices.
fn register_multi_device(r: &mut OpRegistry) {
    let typed = |b: OpDefBuilder| {
        b.attr("devices: list(string) >= 1")
            .attr("output_types: list(type) >= 1")
            .attr("output_shapes: list(shape) >= 1")
            .stateful()
    };
    r.add(typed(op("AnonymousMultiDeviceIteratorV3").output("handle: resource")).shape_fn(scalar).build());
    r.add(
        typed(op("AnonymousMultiDeviceIterator").output("handle: resource").output("deleter: variant"))
            .shape_fn(two_scalars)
            .build(),
    );
    r.add(
        typed(op("MultiDeviceIterator").output("handle: resource"))
            .attr("shared_name: string")
            .attr("container: string")
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("MultiDeviceIteratorInit")
            .input("dataset: variant")
            .input("multi_device_iterator: resource")
            .input("max_buffer_size: int64")
            .output("incarnation_id: int64")
            .stateful()
            .shape_fn(scalar)
            .build(),
    );
    r.add(get_next(
        op("MultiDeviceIteratorGetNextFromShard")
            .input("multi_device_iterator: resource")
            .input("shard_num: int32")
            .input("incarnation_id: int64"),
    ));
    r.add(
        op("MultiDeviceIteratorToStringHandle")
            .input("multi_device_iterator: resource")
            .output("string_handle: string")
            .stateful()
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("MultiDeviceIteratorFromStringHandle")
            .input("string_handle: string")
            .output("multi_device_iterator: resource")
            .attr("output_types: list(type) >= 0 = []")
            .attr("output_shapes: list(shape) >= 0 = []")
            .stateful()
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("DeleteMultiDeviceIterator")
            .input("multi_device_iterator: resource")
            .input("iterators: N * resource")
            .input("deleter: variant")
            .attr("N: int >= 0")
            .stateful()
            .shape_fn(none)
            .build(),
    );
}
