//! Graph plumbing ops: Const, Placeholder, PlaceholderWithDefault, Identity, IdentityN,
//! NoOp, StopGradient, and the partition ops `_Send` / `_Recv`.

use ferroflow_core::{attr, DataType, NodeAttrs, Status, Tensor};

use crate::op_def::{op, OpDefBuilder};
use crate::registry::OpRegistry;
use crate::scope::{AsOpName, Operation, Output, Scope};
use crate::shape_fn::{scalar, unchanged, Dims, ShapeCtx};

fn const_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let t = c.node.attr_tensor("value")?;
    Ok(vec![Some(t.shape().to_i64())])
}

fn placeholder_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![c.node.attr_shape("shape")?])
}

fn identity_n_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(c.inputs.to_vec())
}

pub(crate) fn register(r: &mut OpRegistry) {
    r.add(op("Const").output("output: dtype").attr("value: tensor").attr("dtype: type").shape_fn(const_shape).build());
    r.add(
        op("Placeholder")
            .output("output: dtype")
            .attr("dtype: type")
            .attr("shape: shape = unknown")
            .shape_fn(placeholder_shape)
            .build(),
    );
    r.add(
        op("PlaceholderWithDefault")
            .input("input: dtype")
            .output("output: dtype")
            .attr("dtype: type")
            .attr("shape: shape")
            .shape_fn(placeholder_shape)
            .build(),
    );
    r.add(op("Identity").input("input: T").output("output: T").attr("T: type").shape_fn(unchanged).build());
    let guarantee = op("GuaranteeConst").input("input: T").output("output: T").attr("T: type");
    r.add(guarantee.stateful().shape_fn(unchanged).build());
    r.add(
        op("IdentityN").input("input: T").output("output: T").attr("T: list(type)").shape_fn(identity_n_shape).build(),
    );
    r.add(op("NoOp").build());
    r.add(
        op("Assert")
            .input("condition: bool")
            .input("data: T")
            .attr("T: list(type) >= 1")
            .attr("summarize: int = 3")
            .stateful()
            .build(),
    );
    // Whole files as strings (tf.io.read_file / write_file / matching_files).
    r.add(op("ReadFile").input("filename: string").output("contents: string").shape_fn(scalar).build());
    r.add(op("WriteFile").input("filename: string").input("contents: string").stateful().build());
    r.add(
        op("MatchingFiles")
            .input("pattern: string")
            .output("filenames: string")
            .shape_fn(|_| Ok(vec![Some(vec![-1])]))
            .build(),
    );
    for (send, recv) in [("_Send", "_Recv"), ("_HostSend", "_HostRecv")] {
        // Both ends name the rendezvous key's parts.
        let key_attrs = |b: OpDefBuilder| {
            ["tensor_name: string", "send_device: string", "send_device_incarnation: int", "recv_device: string"]
                .into_iter()
                .fold(b, OpDefBuilder::attr)
                .attr("client_terminated: bool = false")
                .stateful()
        };
        r.add(key_attrs(op(send).input("tensor: T").attr("T: type")).build());
        r.add(
            key_attrs(op(recv).output("tensor: tensor_type").attr("tensor_type: type"))
                .shape_fn(|_| Ok(vec![None]))
                .build(),
        );
    }
    r.add(op("StopGradient").input("input: T").output("output: T").attr("T: type").shape_fn(unchanged).build());
}

/// A `Const` node holding `value`.
pub fn constant(s: &Scope, value: impl Into<Tensor>) -> Output {
    let t: Tensor = value.into();
    s.op("Const").attr("value", attr::tensor(&t)).attr("dtype", attr::ty(t.dtype())).build().output(0)
}

/// A named `Const` node.
pub fn constant_named(s: &Scope, name: &str, value: impl Into<Tensor>) -> Output {
    let t: Tensor = value.into();
    s.op("Const").name(name).attr("value", attr::tensor(&t)).attr("dtype", attr::ty(t.dtype())).build().output(0)
}

/// A `Placeholder` of the given dtype and shape (`None` = unknown rank, -1 = unknown dim).
pub fn placeholder(s: &Scope, dtype: DataType, shape: Option<&[i64]>) -> Output {
    s.op("Placeholder").attr("dtype", attr::ty(dtype)).attr("shape", attr::shape(shape)).build().output(0)
}

/// A named `Placeholder`.
pub fn placeholder_named(s: &Scope, name: &str, dtype: DataType, shape: Option<&[i64]>) -> Output {
    s.op("Placeholder").name(name).attr("dtype", attr::ty(dtype)).attr("shape", attr::shape(shape)).build().output(0)
}

/// `PlaceholderWithDefault`: `input` unless fed.
pub fn placeholder_with_default(s: &Scope, input: Output, shape: Option<&[i64]>) -> Output {
    s.op("PlaceholderWithDefault").input(input).attr("shape", attr::shape(shape)).build().output(0)
}

/// `Identity`.
pub fn identity(s: &Scope, x: Output) -> Output {
    s.op("Identity").input(x).build().output(0)
}

/// `IdentityN`.
pub fn identity_n(s: &Scope, xs: Vec<Output>) -> Vec<Output> {
    s.op("IdentityN").input_list(xs).build().outputs()
}

/// `NoOp` that runs after `deps` (TensorFlow's `tf.group`).
pub fn group<T: AsOpName + ?Sized>(s: &Scope, deps: &[&T]) -> Operation {
    let mut b = s.op("NoOp");
    for d in deps {
        b = b.control_input(*d);
    }
    b.build()
}

/// A named `NoOp` that runs after `deps`.
pub fn group_named<T: AsOpName + ?Sized>(s: &Scope, name: &str, deps: &[&T]) -> Operation {
    let mut b = s.op("NoOp").name(name);
    for d in deps {
        b = b.control_input(*d);
    }
    b.build()
}

/// `StopGradient`.
pub fn stop_gradient(s: &Scope, x: Output) -> Output {
    s.op("StopGradient").input(x).build().output(0)
}
