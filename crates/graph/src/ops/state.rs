//! Variable ops. Resource variables: `VarHandleOp`, `ReadVariableOp`, `AssignVariableOp`,
//! `AssignAddVariableOp`, `AssignSubVariableOp`, `VarIsInitializedOp`, `DestroyResourceOp`.
//! Reference variables: `VariableV2`, `Assign`, `AssignAdd`, `AssignSub`,
//! `IsVariableInitialized`. See [`crate::Variable`] for the `tf.Variable`-like helper.

use ferroflow_core::proto::{attr_value, AttrValue};
use ferroflow_core::{attr, shape_proto_dims, DataType, NodeAttrs, Status};

use crate::op_def::op;
use crate::ops::op_output;
use crate::registry::OpRegistry;
use crate::scope::{Operation, Output, Scope};
use crate::shape_fn::{scalar, Dims, ShapeCtx};

/// TensorFlow's `numbertype` (without the quantized types ferroflow does not know).
pub(crate) const NUMBER_TYPES: &str =
    "{float, double, int32, uint8, int16, int8, complex64, int64, bfloat16, uint16, complex128, half, uint32, uint64}";

/// Attr under which a node records its output shapes (TensorFlow's `_output_shapes`).
pub const OUTPUT_SHAPES_ATTR: &str = "_output_shapes";

/// Merges two partial shapes, or an error if they disagree.
pub(crate) fn merge_dims(c: &ShapeCtx, a: &Dims, b: &Dims) -> Result<Dims, Status> {
    let (Some(x), Some(y)) = (a, b) else { return Ok(a.clone().or_else(|| b.clone())) };
    if x.len() != y.len() {
        return Err(c.error(format!("Shapes must be equal rank, but are {} and {}", x.len(), y.len())));
    }
    x.iter()
        .zip(y)
        .map(|(&p, &q)| match (p, q) {
            (-1, q) => Ok(q),
            (p, -1) => Ok(p),
            (p, q) if p == q => Ok(p),
            _ => Err(c.error(format!("Dimensions must be equal, but are {p} and {q} (shapes {x:?} and {y:?})"))),
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

fn shape_attr_output(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![c.node.attr_shape("shape")?])
}

fn no_outputs(_: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![])
}

/// `ReadVariableOp`: the shape recorded in `_output_shapes` (set by the builders from the
/// `VarHandleOp`'s `shape`), else unknown.
fn read_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let recorded = c.node.attr.get(OUTPUT_SHAPES_ATTR).and_then(|a| match &a.value {
        Some(attr_value::Value::List(l)) => l.shape.first().map(shape_proto_dims),
        _ => None,
    });
    Ok(vec![recorded.flatten()])
}

fn assign_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    if c.node.attr_bool("validate_shape")? {
        Ok(vec![merge_dims(c, &c.input(0), &c.input(1))?])
    } else {
        Ok(vec![c.input(1)])
    }
}

fn assign_update_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![merge_dims(c, &c.input(0), &c.input(1))?])
}

pub(crate) fn register(r: &mut OpRegistry) {
    r.add(
        op("VarHandleOp")
            .output("resource: resource")
            .attr("container: string = ''")
            .attr("shared_name: string = ''")
            .attr("debug_name: string = ''")
            .attr("dtype: type")
            .attr("shape: shape")
            .attr("allowed_devices: list(string) = []")
            .stateful()
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("ReadVariableOp")
            .input("resource: resource")
            .output("value: dtype")
            .attr("dtype: type")
            .stateful()
            .shape_fn(read_shape)
            .build(),
    );
    r.add(
        op("AssignVariableOp")
            .input("resource: resource")
            .input("value: dtype")
            .attr("dtype: type")
            .attr("validate_shape: bool = false")
            .stateful()
            .shape_fn(no_outputs)
            .build(),
    );
    for name in ["AssignAddVariableOp", "AssignSubVariableOp"] {
        r.add(
            op(name)
                .input("resource: resource")
                .input("value: dtype")
                .attr("dtype: type")
                .stateful()
                .shape_fn(no_outputs)
                .build(),
        );
    }
    r.add(
        op("VarIsInitializedOp")
            .input("resource: resource")
            .output("is_initialized: bool")
            .stateful()
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("DestroyResourceOp")
            .input("resource: resource")
            .attr("ignore_lookup_error: bool = true")
            .stateful()
            .shape_fn(no_outputs)
            .build(),
    );
    r.add(
        op("VariableV2")
            .output("ref: Ref(dtype)")
            .attr("shape: shape")
            .attr("dtype: type")
            .attr("container: string = ''")
            .attr("shared_name: string = ''")
            .stateful()
            .shape_fn(shape_attr_output)
            .build(),
    );
    r.add(
        op("Assign")
            .input("ref: Ref(T)")
            .input("value: T")
            .output("output_ref: Ref(T)")
            .attr("T: type")
            .attr("validate_shape: bool = true")
            .attr("use_locking: bool = true")
            .shape_fn(assign_shape)
            .build(),
    );
    for name in ["AssignAdd", "AssignSub"] {
        r.add(
            op(name)
                .input("ref: Ref(T)")
                .input("value: T")
                .output("output_ref: Ref(T)")
                .attr(&format!("T: {NUMBER_TYPES}"))
                .attr("use_locking: bool = false")
                .shape_fn(assign_update_shape)
                .build(),
        );
    }
    r.add(
        op("IsVariableInitialized")
            .input("ref: Ref(dtype)")
            .output("is_initialized: bool")
            .attr("dtype: type")
            .shape_fn(scalar)
            .build(),
    );
}

/// A `list(shape)` attr with one shape (`None` = unknown rank).
pub(crate) fn output_shapes_attr(dims: Option<&[i64]>) -> AttrValue {
    let one = match attr::shape(dims).value {
        Some(attr_value::Value::Shape(s)) => s,
        _ => Default::default(),
    };
    AttrValue {
        value: Some(attr_value::Value::List(Box::new(attr_value::ListValue {
            shape: vec![one],
            ..Default::default()
        }))),
    }
}

/// The declared shape of the variable behind `handle`, if it is a `VarHandleOp` output.
pub(crate) fn handle_shape(s: &Scope, handle: &Output) -> Option<Dims> {
    let e = s.graph().node(&handle.node)?;
    (e.def.op == "VarHandleOp").then(|| e.def.attr_shape("shape").ok().flatten())
}

/// `VarHandleOp`: a handle to the resource variable `container/shared_name` (the node's
/// name when `shared_name` is empty).
pub fn var_handle_op(s: &Scope, dtype: DataType, shape: Option<&[i64]>, container: &str, shared_name: &str) -> Output {
    variable_node(s, "VarHandleOp", dtype, shape, (container, shared_name))
}

/// A variable-creating node (`VarHandleOp`, `VariableV2`) with its four attrs.
fn variable_node(s: &Scope, op: &str, dtype: DataType, shape: Option<&[i64]>, names: (&str, &str)) -> Output {
    let attrs = [
        ("dtype", attr::ty(dtype)),
        ("shape", attr::shape(shape)),
        ("container", attr::string(names.0)),
        ("shared_name", attr::string(names.1)),
    ];
    op_output(s, op, [], attrs)
}

/// `ReadVariableOp`: the variable's current value. When `resource` comes from a
/// `VarHandleOp`, its declared shape is recorded so shape inference can use it.
pub fn read_variable_op(s: &Scope, resource: Output, dtype: DataType) -> Output {
    let mut b = s.op("ReadVariableOp").input(resource.clone()).attr("dtype", attr::ty(dtype));
    if let Some(dims) = handle_shape(s, &resource) {
        b = b.attr(OUTPUT_SHAPES_ATTR, output_shapes_attr(dims.as_deref()));
    }
    b.build().output(0)
}

/// `AssignVariableOp` (creates the variable on first use; `validate_shape` = false).
pub fn assign_variable_op(s: &Scope, resource: Output, value: Output) -> Operation {
    s.op("AssignVariableOp").input(resource).input(value).build()
}

/// `AssignAddVariableOp`: `var += value`.
pub fn assign_add_variable_op(s: &Scope, resource: Output, value: Output) -> Operation {
    s.op("AssignAddVariableOp").input(resource).input(value).build()
}

/// `AssignSubVariableOp`: `var -= value`.
pub fn assign_sub_variable_op(s: &Scope, resource: Output, value: Output) -> Operation {
    s.op("AssignSubVariableOp").input(resource).input(value).build()
}

/// `VarIsInitializedOp`: whether the resource variable exists and holds a value.
pub fn var_is_initialized_op(s: &Scope, resource: Output) -> Output {
    s.op("VarIsInitializedOp").input(resource).build().output(0)
}

/// `DestroyResourceOp`: deletes the resource.
pub fn destroy_resource_op(s: &Scope, resource: Output, ignore_lookup_error: bool) -> Operation {
    s.op("DestroyResourceOp").input(resource).attr("ignore_lookup_error", attr::bool(ignore_lookup_error)).build()
}

/// `VariableV2`: a reference variable.
pub fn variable_v2(s: &Scope, dtype: DataType, shape: Option<&[i64]>, container: &str, shared_name: &str) -> Output {
    variable_node(s, "VariableV2", dtype, shape, (container, shared_name))
}

/// `Assign`: `ref = value`; outputs the reference.
pub fn assign(s: &Scope, ref_: Output, value: Output, validate_shape: bool, use_locking: bool) -> Output {
    let attrs = [("validate_shape", attr::bool(validate_shape)), ("use_locking", attr::bool(use_locking))];
    op_output(s, "Assign", [ref_, value], attrs)
}

/// `AssignAdd`: `ref += value`; outputs the reference.
pub fn assign_add(s: &Scope, ref_: Output, value: Output) -> Output {
    s.op("AssignAdd").input(ref_).input(value).build().output(0)
}

/// `AssignSub`: `ref -= value`; outputs the reference.
pub fn assign_sub(s: &Scope, ref_: Output, value: Output) -> Output {
    s.op("AssignSub").input(ref_).input(value).build().output(0)
}

/// `IsVariableInitialized` of a reference variable.
pub fn is_variable_initialized(s: &Scope, ref_: Output) -> Output {
    s.op("IsVariableInitialized").input(ref_.clone()).attr("dtype", attr::ty(ref_.dtype)).build().output(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::constant;

    #[test]
    fn builds_resource_ops_with_shapes() {
        let s = Scope::new_root();
        let h = var_handle_op(&s, DataType::Float, Some(&[2, 3]), "", "w");
        let r = read_variable_op(&s, h.clone(), DataType::Float);
        assert_eq!(s.graph().shape_of(&r), Some(vec![2, 3]));
        assert_eq!(s.graph().shape_of(&h), Some(vec![]));
        let a = assign_variable_op(&s, h.clone(), constant(&s, Tensor::zeros(DataType::Float, vec![2, 3]).unwrap()));
        assert!(a.output_types.is_empty());
        assign_add_variable_op(&s, h.clone(), r.clone());
        assign_sub_variable_op(&s, h.clone(), r);
        let i = var_is_initialized_op(&s, h.clone());
        assert_eq!(i.dtype, DataType::Bool);
        destroy_resource_op(&s, h, true);
        s.status().unwrap();
        let n = s.graph().node("VarHandleOp").unwrap().def;
        assert_eq!(n.attr_string("debug_name").unwrap(), "");
        assert!(n.attr_list_string("allowed_devices").unwrap().is_empty());
    }

    use ferroflow_core::Tensor;

    #[test]
    fn builds_ref_ops_and_checks_shapes() {
        let s = Scope::new_root();
        let v = variable_v2(&s, DataType::Float, Some(&[2]), "", "");
        assert_eq!(s.graph().shape_of(&v), Some(vec![2]));
        let a = assign(&s, v.clone(), constant(&s, vec![1.0f32, 2.0]), true, true);
        assert_eq!(s.graph().shape_of(&a), Some(vec![2]));
        let a2 = assign_add(&s, a, constant(&s, vec![1.0f32, 2.0]));
        assign_sub(&s, a2, constant(&s, vec![1.0f32, 2.0]));
        let i = is_variable_initialized(&s, v.clone());
        assert_eq!(i.dtype, DataType::Bool);
        s.status().unwrap();
        // Shape mismatch caught at construction.
        assign(&s, v.clone(), constant(&s, vec![1.0f32, 2.0, 3.0]), true, true);
        assert!(s.status().unwrap_err().message.contains("Dimensions must be equal"));
        // Without validation any shape goes.
        let s2 = Scope::new_root();
        let v2 = variable_v2(&s2, DataType::Float, Some(&[2]), "", "");
        let a = assign(&s2, v2.clone(), constant(&s2, vec![1.0f32, 2.0, 3.0]), false, true);
        assert_eq!(s2.graph().shape_of(&a), Some(vec![3]));
        // A value is not a reference.
        assign_add(&s2, constant(&s2, vec![1.0f32]), constant(&s2, vec![1.0f32]));
        assert!(s2.status().unwrap_err().message.contains("must be a reference"));
    }
}
