//! Function-calling ops: `If`/`StatelessIf` (TensorFlow 2's `tf.cond`, also in graphs built
//! with `tf.compat.v1`), `Case`/`StatelessCase` (`tf.switch_case`), `While`/`StatelessWhile` (`tf.while_loop`) and `PartitionedCall`/`StatefulPartitionedCall` (a call of a
//! `tf.function`), and `RemoteCall` (a function run on the task a string tensor names). Their bodies are functions of the graph's `library`; the runtime runs them
//! (see `ferroflow_runtime`'s function module).

use ferroflow_core::proto::attr_value::Value as AV;
use ferroflow_core::{shape_proto_dims, NodeAttrs, Status};

use crate::function_def::Function;
use crate::op_def::{op, OpDefBuilder};
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{Dims, ShapeCtx};

/// `RemoteCall`: runs function `f` of the graph's library on the device `target` (a string
/// scalar, e.g. `"/job:ps/replica:0/task:0/device:CPU:0"`) names, with `args`; returns its
/// results.
pub fn remote_call(s: &Scope, target: Output, args: Vec<Output>, f: &Function) -> Vec<Output> {
    let op = s
        .op("RemoteCall")
        .input(target)
        .input_list(args)
        .attr("Tin", ferroflow_core::attr::list_type(&f.arg_types))
        .attr("Tout", ferroflow_core::attr::list_type(&f.ret_types))
        .attr("f", f.attr())
        .build();
    (0..f.ret_types.len()).map(|i| op.output(i)).collect()
}

/// Output shapes from the `output_shapes` attr when it has one entry per output (the
/// outputs' types are the list attr `types_attr`), else unknown (a `While` may change
/// shapes).
fn shapes_from_attr(c: &ShapeCtx, types_attr: &str) -> Result<Vec<Dims>, Status> {
    let n = c.node.attr_list_type(types_attr)?.len();
    let given: Vec<Dims> = match c.node.attr.get("output_shapes").and_then(|v| v.value.as_ref()) {
        Some(AV::List(l)) => l.shape.iter().map(shape_proto_dims).collect(),
        _ => vec![],
    };
    Ok(if given.len() == n { given } else { vec![None; n] })
}

fn call_shapes(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    shapes_from_attr(c, "Tout")
}

fn while_shapes(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    shapes_from_attr(c, "T")
}

/// Registers the stateful op `stateful` and its stateless twin `stateless`, both as `def`
/// defines them.
fn add_pair(r: &mut OpRegistry, stateful: &str, stateless: &str, def: impl Fn(OpDefBuilder) -> OpDefBuilder) {
    r.add(def(op(stateful)).stateful().build());
    r.add(def(op(stateless)).build());
}

pub(crate) fn register(r: &mut OpRegistry) {
    add_pair(r, "While", "StatelessWhile", |b| {
        b.input("input: T")
            .output("output: T")
            .attr("T: list(type) >= 0")
            .attr("cond: func")
            .attr("body: func")
            .attr("output_shapes: list(shape) = []")
            .attr("parallel_iterations: int = 10")
            .shape_fn(while_shapes)
    });
    add_pair(r, "If", "StatelessIf", |b| {
        b.input("cond: Tcond")
            .input("input: Tin")
            .output("output: Tout")
            .attr("Tcond: type")
            .attr("Tin: list(type) >= 0")
            .attr("Tout: list(type) >= 0")
            .attr("then_branch: func")
            .attr("else_branch: func")
            .attr("output_shapes: list(shape) = []")
            .shape_fn(call_shapes)
    });
    add_pair(r, "Case", "StatelessCase", |b| {
        b.input("branch_index: int32")
            .input("input: Tin")
            .output("output: Tout")
            .attr("Tin: list(type) >= 0")
            .attr("Tout: list(type) >= 0")
            .attr("branches: list(func) >= 1")
            .attr("output_shapes: list(shape) = []")
            .shape_fn(call_shapes)
    });
    add_pair(r, "StatefulPartitionedCall", "PartitionedCall", |b| {
        b.input("args: Tin")
            .output("output: Tout")
            .attr("Tin: list(type) >= 0")
            .attr("Tout: list(type) >= 0")
            .attr("f: func")
            .attr("config: string = ''")
            .attr("config_proto: string = ''")
            .attr("executor_type: string = ''")
            .shape_fn(call_shapes)
    });
    r.add(
        op("RemoteCall")
            .input("target: string")
            .input("args: Tin")
            .output("output: Tout")
            .attr("Tin: list(type) >= 1")
            .attr("Tout: list(type) >= 1")
            .attr("f: func")
            .stateful()
            .shape_fn(call_shapes)
            .build(),
    );
}

#[cfg(test)]
mod tests {
    use ferroflow_core::proto::NodeDef;
    use ferroflow_core::{attr, DataType};

    use crate::resolve_node;

    #[test]
    fn if_signature_expands_type_lists() {
        let mut n = NodeDef {
            name: "c".into(),
            op: "If".into(),
            input: vec!["p".into(), "h".into(), "z".into()],
            ..Default::default()
        };
        n.attr.insert("Tcond".into(), attr::ty(DataType::Bool));
        n.attr.insert("Tin".into(), attr::list_type(&[DataType::Resource, DataType::Int64]));
        n.attr.insert("Tout".into(), attr::list_type(&[DataType::Int64]));
        for f in ["then_branch", "else_branch"] {
            n.attr.insert(
                f.into(),
                ferroflow_core::proto::AttrValue {
                    value: Some(ferroflow_core::proto::attr_value::Value::Func(Box::new(
                        ferroflow_core::proto::NameAttrList { name: format!("{f}_fn"), attr: Default::default() },
                    ))),
                },
            );
        }
        let sig = resolve_node(&mut n).unwrap();
        assert_eq!(
            sig.inputs.iter().map(|x| x.0).collect::<Vec<_>>(),
            [DataType::Bool, DataType::Resource, DataType::Int64]
        );
        assert_eq!(sig.outputs, vec![(DataType::Int64, false)]);
        assert!(n.attr.contains_key("output_shapes"), "default filled");
    }
}
