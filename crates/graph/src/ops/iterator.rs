//! `tf.data` iterator ops, with TensorFlow's definitions: `IteratorV2`, `MakeIterator`,
//! `OneShotIterator`, `IteratorGetNext`, string handles; `ferroflow_runtime` runs them.

use ferroflow_core::proto::attr_value::Value as AV;
use ferroflow_core::{shape_proto_dims, NodeAttrs, Status};

use crate::op_def::op;
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
        r.add(
            op(name)
                .input("iterator: resource")
                .output("components: output_types")
                .attr("output_types: list(type) >= 1")
                .attr("output_shapes: list(shape) >= 1")
                .stateful()
                .shape_fn(get_next_shapes)
                .build(),
        );
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
}
