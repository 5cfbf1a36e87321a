//! TensorArray ops with TensorFlow's definitions (`TensorArrayV3`, `TensorArrayGradV3`,
//! `TensorArrayGradWithShape`, `TensorArray{Write,Read,Gather,Scatter,Concat,Split,Size,
//! Close}V3`) and the stack ops TensorFlow 1.x loop gradients use (`StackV2`,
//! `StackPushV2`, `StackPopV2`, `StackCloseV2`).

use ferroflow_core::{NodeAttrs, Status};

use crate::op_def::{op, OpDefBuilder};
use crate::registry::OpRegistry;
use crate::shape_fn::{scalar, Dims, ShapeCtx};

fn none(_: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![])
}

fn two_scalars(_: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![Some(vec![]), Some(vec![])])
}

fn unknown(_: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![None])
}

/// Gather: `[n] + element_shape` (n from the indices).
fn gather_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let n = match c.input(1) {
        Some(d) if d.len() == 1 => d[0],
        _ => -1,
    };
    Ok(vec![c.node.attr_shape("element_shape")?.map(|e| {
        let mut v = vec![n];
        v.extend(e);
        v
    })])
}

fn concat_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let rest = c.node.attr_shape("element_shape_except0")?;
    Ok(vec![
        rest.map(|e| {
            let mut v = vec![-1];
            v.extend(e);
            v
        }),
        Some(vec![-1]),
    ])
}

fn push_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![c.input(1)])
}

/// A write of `value` at `index` (`TensorArrayWriteV3`) or at each of `indices`
/// (`TensorArrayScatterV3`).
fn put(name: &str, index: &str) -> crate::op_def::OpDef {
    op(name)
        .input("handle: resource")
        .input(&format!("{index}: int32"))
        .input("value: T")
        .input("flow_in: float")
        .output("flow_out: float")
        .attr("T: type")
        .stateful()
        .shape_fn(scalar)
        .build()
}

pub(crate) fn register(r: &mut OpRegistry) {
    r.add(
        op("TensorArrayV3")
            .input("size: int32")
            .output("handle: resource")
            .output("flow: float")
            .attr("dtype: type")
            .attr("element_shape: shape = unknown")
            .attr("dynamic_size: bool = false")
            .attr("clear_after_read: bool = true")
            .attr("identical_element_shapes: bool = false")
            .attr("tensor_array_name: string = ''")
            .stateful()
            .shape_fn(two_scalars)
            .build(),
    );
    for (name, extra) in [("TensorArrayGradV3", None), ("TensorArrayGradWithShape", Some("shape_to_prepend: int32"))] {
        let b = op(name).input("handle: resource").input("flow_in: float");
        let b = extra.into_iter().fold(b, OpDefBuilder::input);
        let b = b.output("grad_handle: resource").output("flow_out: float").attr("source: string");
        r.add(b.stateful().shape_fn(two_scalars).build());
    }
    r.add(put("TensorArrayWriteV3", "index"));
    r.add(
        op("TensorArrayReadV3")
            .input("handle: resource")
            .input("index: int32")
            .input("flow_in: float")
            .output("value: dtype")
            .attr("dtype: type")
            .stateful()
            .shape_fn(unknown)
            .build(),
    );
    r.add(
        op("TensorArrayGatherV3")
            .input("handle: resource")
            .input("indices: int32")
            .input("flow_in: float")
            .output("value: dtype")
            .attr("dtype: type")
            .attr("element_shape: shape = unknown")
            .stateful()
            .shape_fn(gather_shape)
            .build(),
    );
    r.add(put("TensorArrayScatterV3", "indices"));
    r.add(
        op("TensorArrayConcatV3")
            .input("handle: resource")
            .input("flow_in: float")
            .output("value: dtype")
            .output("lengths: int64")
            .attr("dtype: type")
            .attr("element_shape_except0: shape = unknown")
            .stateful()
            .shape_fn(concat_shape)
            .build(),
    );
    r.add(
        op("TensorArraySplitV3")
            .input("handle: resource")
            .input("value: T")
            .input("lengths: int64")
            .input("flow_in: float")
            .output("flow_out: float")
            .attr("T: type")
            .stateful()
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("TensorArraySizeV3")
            .input("handle: resource")
            .input("flow_in: float")
            .output("size: int32")
            .stateful()
            .shape_fn(scalar)
            .build(),
    );
    r.add(op("TensorArrayCloseV3").input("handle: resource").stateful().shape_fn(none).build());
    r.add(
        op("StackV2")
            .input("max_size: int32")
            .output("handle: resource")
            .attr("elem_type: type")
            .attr("stack_name: string = ''")
            .stateful()
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("StackPushV2")
            .input("handle: resource")
            .input("elem: T")
            .output("output: T")
            .attr("T: type")
            .attr("swap_memory: bool = false")
            .stateful()
            .shape_fn(push_shape)
            .build(),
    );
    r.add(
        op("StackPopV2")
            .input("handle: resource")
            .output("elem: elem_type")
            .attr("elem_type: type")
            .stateful()
            .shape_fn(unknown)
            .build(),
    );
    r.add(op("StackCloseV2").input("handle: resource").stateful().shape_fn(none).build());
    // TensorFlow 1's stacks: a Ref(string) handle, no max size. (TensorFlow marks only
    // `Stack` stateful; the others take the ref handle, and stay unmerged here as stateful.)
    let v1 = op("Stack").handle_output("handle", true).attr("elem_type: type").attr("stack_name: string = ''");
    r.add(v1.stateful().build());
    let push = op("StackPush").input("handle: Ref(string)").input("elem: T").output("output: T").attr("T: type");
    r.add(push.attr("swap_memory: bool = false").stateful().shape_fn(push_shape).build());
    let pop = op("StackPop").input("handle: Ref(string)").output("elem: elem_type").attr("elem_type: type");
    r.add(pop.stateful().shape_fn(unknown).build());
    r.add(op("StackClose").input("handle: Ref(string)").stateful().shape_fn(none).build());
}
