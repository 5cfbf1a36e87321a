//! Tests of the placer.
use super::*;
use ferroflow_core::{attr, Code, Tensor};

const PS0: &str = "/job:ps/replica:0/task:0/device:CPU:0";
const PS1: &str = "/job:ps/replica:0/task:1/device:CPU:0";
const W0: &str = "/job:worker/replica:0/task:0/device:CPU:0";
const W1: &str = "/job:worker/replica:0/task:1/device:CPU:0";

fn devices() -> Vec<String> {
    [W1, PS1, W0, PS0].iter().map(|s| s.to_string()).collect()
}

fn node(name: &str, op: &str, device: &str, inputs: &[&str]) -> NodeDef {
    let mut n = NodeDef { device: device.into(), ..ferroflow_graph::graph_util::node_def(name, op, inputs) };
    match op {
        "Const" => {
            n.attr.insert("dtype".into(), attr::ty(DataType::Float));
            n.attr.insert("value".into(), attr::tensor(&Tensor::scalar(1.0f32)));
        }
        "Identity" => {
            n.attr.insert("T".into(), attr::ty(DataType::Float));
        }
        _ => {}
    }
    n
}

fn with_class(mut n: NodeDef, groups: &[&str]) -> NodeDef {
    let v: Vec<String> = groups.iter().map(|g| format!("loc:@{g}")).collect();
    n.attr.insert("_class".into(), attr::list_string(&v));
    n
}

fn graph(node: Vec<NodeDef>) -> GraphDef {
    GraphDef { node, ..Default::default() }
}

/// Places `g` over [`devices`] (default device W0, default options), the input types from
/// `types`.
fn place_typed(g: &mut GraphDef, types: InputTypes<'_>) {
    place_impl(g, &devices(), W0, &PlacerOptions::default(), types).unwrap();
}

fn placed(g: &GraphDef) -> Vec<(&str, &str)> {
    g.node.iter().map(|n| (n.name.as_str(), n.device.as_str())).collect()
}

#[test]
fn explicit_partial_and_default() {
    let mut g = graph(vec![
        node("a", "Const", "/job:ps/task:1", &[]),
        node("b", "Const", "/job:ps", &[]),
        node("c", "Const", "", &[]),
        node("d", "Const", "/cpu:0", &[]),
        node("e", "Const", "/job:worker/replica:0/task:1/device:CPU:0", &[]),
        node("f", "Identity", "/job:worker", &["a"]),
    ]);
    place(&mut g, &devices(), W1).unwrap();
    assert_eq!(
        placed(&g),
        vec![
            ("a", PS1),
            ("b", PS0), // first ps device by name
            ("c", W1),  // default
            ("d", W1),  // default device matches the partial spec
            ("e", W1),
            ("f", W1), // the default device comes first when it matches
        ]
    );
    // Placing again changes nothing.
    let before = g.clone();
    place(&mut g, &devices(), W1).unwrap();
    assert_eq!(g, before);
}

#[test]
fn class_colocation() {
    let mut g = graph(vec![
        node("v", "Const", "/job:ps/task:1", &[]),
        with_class(node("init", "Identity", "", &["v"]), &["v"]),
        with_class(node("slot", "Const", "/job:ps", &[]), &["v"]),
        with_class(node("orphan1", "Const", "", &[]), &["missing"]),
        with_class(node("orphan2", "Const", "/job:ps/task:0", &[]), &["missing"]),
    ]);
    place(&mut g, &devices(), W0).unwrap();
    assert_eq!(placed(&g), vec![("v", PS1), ("init", PS1), ("slot", PS1), ("orphan1", PS0), ("orphan2", PS0)]);
}

#[test]
fn conflicting_group_names_both_nodes() {
    let mut g = graph(vec![
        node("v", "Const", "/job:ps/task:0", &[]),
        with_class(node("w", "Const", "/job:worker/task:0", &[]), &["v"]),
    ]);
    let e = place(&mut g, &devices(), W0).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("Cannot colocate nodes 'v' and 'w'"), "{e}");
    assert!(e.message.contains("incompatible jobs"), "{e}");
    assert!(e.message.contains("'w' has _class loc:@v"), "{e}");
}

#[test]
fn soft_placement_joins_conflicting_group() {
    let build = || {
        graph(vec![
            node("v", "Const", "/job:ps/task:0", &[]),
            with_class(node("w", "Const", "/job:worker/task:0", &[]), &["v"]),
            node("x", "Const", "/job:worker/task:1", &[]),
        ])
    };
    let mut g = build();
    place_with_options(&mut g, &devices(), W0, &PlacerOptions { allow_soft_placement: true }).unwrap();
    assert_eq!(placed(&g), vec![("v", PS0), ("w", PS0), ("x", W1)]);
    assert!(place(&mut build(), &devices(), W0).is_err(), "without soft placement the conflict stays an error");
}

#[test]
fn unknown_device_explains() {
    let mut g = graph(vec![node("w", "Const", "/job:ps/task:3", &[])]);
    let e = place(&mut g, &devices(), W0).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    for part in ["operation 'w' (op Const)", "'/job:ps/task:3'", PS0, W1, "task 3 does not exist", "[0, 1]"] {
        assert!(e.message.contains(part), "missing {part:?} in {e}");
    }
    let mut g = graph(vec![node("w", "Const", "/job:chief", &[])]);
    let e = place(&mut g, &devices(), W0).unwrap_err();
    assert!(e.message.contains("job 'chief' is not in the cluster (known jobs: [ps, worker])"), "{e}");
    let local = vec!["/job:localhost/replica:0/task:0/device:CPU:0".to_string()];
    let mut g = graph(vec![node("w", "Const", "/job:ps/task:0", &[])]);
    let e = place(&mut g, &local, &local[0]).unwrap_err();
    assert!(e.message.contains("job 'localhost'") && e.message.contains("grpc://"), "{e}");
    let mut g = graph(vec![node("w", "Const", "/job:ps/task:0/device:GPU:0", &[])]);
    let e = place(&mut g, &devices(), W0).unwrap_err();
    assert!(e.message.contains("CPU only") && e.message.contains("[CPU:0]"), "{e}");
    let mut g = graph(vec![node("w", "Const", "/job:ps/tusk:0", &[])]);
    let e = place(&mut g, &devices(), W0).unwrap_err();
    assert!(e.message.contains("node 'w'") && e.message.contains("tusk"), "{e}");
}

#[test]
fn soft_placement_relaxes() {
    let mut g =
        graph(vec![node("a", "Const", "/job:ps/task:1/device:GPU:0", &[]), node("b", "Const", "/job:chief", &[])]);
    place_with_options(&mut g, &devices(), W0, &PlacerOptions { allow_soft_placement: true }).unwrap();
    assert_eq!(placed(&g), vec![("a", PS1), ("b", W0)]);
}

#[test]
fn bad_device_lists() {
    let mut g = GraphDef::default();
    assert!(place(&mut g, &[], W0).is_err());
    assert!(place(&mut g, &["/job:ps/task:0".to_string()], "/job:ps/task:0").is_err());
    let e = place(&mut g, &devices(), "/job:x/replica:0/task:0/device:CPU:0").unwrap_err();
    assert!(e.message.contains("default device"), "{e}");
}

/// Input types of state ops, standing in for the registry (these ops live in other
/// families).
fn fake_types(n: &NodeDef) -> Option<Vec<(DataType, bool)>> {
    Some(match n.op.as_str() {
        "Assign" | "AssignAdd" => vec![(DataType::Float, true), (DataType::Float, false)],
        "ReadVariableOp" | "VarIsInitializedOp" | "VariableShape" => vec![(DataType::Resource, false)],
        "ResourceApplyGradientDescent" => {
            vec![(DataType::Resource, false), (DataType::Float, false), (DataType::Float, false)]
        }
        _ => return registry_input_types(n),
    })
}

#[test]
fn ref_and_resource_inputs_follow_their_variable() {
    let mut g = graph(vec![
        node("v", "VariableV2", "/job:ps/task:1", &[]),
        node("init", "Const", "", &[]),
        node("assign", "Assign", "", &["v", "init"]),
        node("h", "VarHandleOp", "/job:ps/task:0", &[]),
        node("hid", "Identity", "", &["h"]),
        node("read", "ReadVariableOp", "", &["hid"]),
        node("apply", "ResourceApplyGradientDescent", "/job:ps", &["h", "init", "init"]),
    ]);
    place_typed(&mut g, &fake_types);
    assert_eq!(
        placed(&g),
        vec![
            ("v", PS1),
            ("init", W0),
            ("assign", PS1),
            ("h", PS0),
            ("hid", W0), // Identity is exempt from input colocation
            ("read", PS0),
            ("apply", PS0),
        ]
    );
    // A node taking a reference or a resource, pinned elsewhere, goes with the variable
    // (TensorFlow ignores its device), while two variables' own devices still conflict.
    let mut moved = g.clone();
    moved.node[2].device = "/job:worker/task:0".into();
    moved.node[0].device = "/job:ps/task:1".into();
    moved.node[5].device = "/job:ps/task:1".into();
    place_typed(&mut moved, &fake_types);
    let p = placed(&moved);
    assert_eq!((p[2], p[5]), (("assign", PS1), ("read", PS0)));
}

#[test]
fn a_resource_entering_a_loop_takes_its_enter_and_reader_to_the_variable() {
    // TensorFlow 1.x's `tf.while_loop` reading a resource variable: VarHandleOp (ps) ->
    // Enter -> ReadVariableOp, both built under the worker's device scope. TensorFlow puts
    // the Enter and the read with the variable; the loop's own Enter stays on the worker.
    let mut g = graph(vec![
        node("h", "VarHandleOp", "/job:ps/task:0", &[]),
        node("x", "Const", "/job:worker/task:0", &[]),
        node("enter_h", "Enter", "/job:worker/task:0", &["h"]),
        node("enter_x", "Enter", "/job:worker/task:0", &["x"]),
        node("read", "ReadVariableOp", "/job:worker/task:0", &["enter_h"]),
    ]);
    let types = |n: &NodeDef| -> Option<Vec<(DataType, bool)>> {
        match n.op.as_str() {
            "Enter" if n.name == "enter_h" => Some(vec![(DataType::Resource, false)]),
            "Enter" => Some(vec![(DataType::Float, false)]),
            _ => fake_types(n),
        }
    };
    place_typed(&mut g, &types);
    assert_eq!(placed(&g), vec![("h", PS0), ("x", W0), ("enter_h", PS0), ("enter_x", W0), ("read", PS0)]);
}

#[test]
fn resource_producer_traces_identity() {
    // v -> id (Identity) -> user: the user is colocated with v, not the Identity.
    let nodes = vec![
        node("v", "Const", "", &[]),
        node("id", "Identity", "", &["v"]),
        node("idn", "IdentityN", "", &["x", "id"]),
        node("x", "Const", "", &[]),
    ];
    let index: HashMap<&str, usize> = nodes.iter().enumerate().map(|(i, n)| (n.name.as_str(), i)).collect();
    assert_eq!(resource_producer(&nodes, &index, 1, 0), 0);
    assert_eq!(resource_producer(&nodes, &index, 2, 1), 0);
    assert_eq!(resource_producer(&nodes, &index, 2, 0), 3);
}

fn call_node(name: &str, op: &str, inputs: &[&str], tin: &[DataType]) -> NodeDef {
    let mut n = node(name, op, "", inputs);
    let func = |f: &str| ferroflow_core::proto::AttrValue {
        value: Some(ferroflow_core::proto::attr_value::Value::Func(Box::new(ferroflow_core::proto::NameAttrList {
            name: f.into(),
            attr: Default::default(),
        }))),
    };
    n.attr.insert("Tin".into(), attr::list_type(tin));
    n.attr.insert("Tout".into(), attr::list_type(&[DataType::Int64]));
    if op.ends_with("If") {
        n.attr.insert("Tcond".into(), attr::ty(DataType::Bool));
        n.attr.insert("then_branch".into(), func("t"));
        n.attr.insert("else_branch".into(), func("e"));
    } else {
        n.attr.insert("f".into(), func("f"));
    }
    n
}

#[test]
fn function_calls_go_with_the_resources_they_take() {
    // MonitoredTrainingSession's global-step read: If(VarIsInitializedOp(h), h, zeros) with
    // the variable on a ps and nothing else placed: the call (whose body reads the variable)
    // runs on the ps, its consumer on the default device.
    let mut is_init = node("is_init", "VarIsInitializedOp", "", &["h"]);
    is_init.attr.insert("dtype".into(), attr::ty(DataType::Int64));
    let mut g = graph(vec![
        node("h", "VarHandleOp", "/job:ps/task:1", &[]),
        node("zeros", "Const", "", &[]),
        is_init,
        call_node("cond", "If", &["is_init", "h", "zeros"], &[DataType::Resource, DataType::Int64]),
        call_node("call", "StatefulPartitionedCall", &["zeros"], &[DataType::Int64]),
        node("out", "Identity", "", &["cond"]),
    ]);
    place_typed(&mut g, &fake_types);
    assert_eq!(placed(&g), vec![("h", PS1), ("zeros", W0), ("is_init", PS1), ("cond", PS1), ("call", W0), ("out", W0)]);
}

#[test]
fn a_call_or_op_pinned_elsewhere_runs_with_its_resources() {
    // `with tf.device(worker): tf.while_loop(... reads a ps variable ...)`: the call's own
    // request conflicts with the variable's device, so the call goes to the ps (its body
    // runs there whole); so does a plain op pinned elsewhere that takes the resource.
    let mut g = graph(vec![
        node("h", "VarHandleOp", "/job:ps/task:1", &[]),
        node("zeros", "Const", "", &[]),
        call_node("call", "StatefulPartitionedCall", &["h", "zeros"], &[DataType::Resource, DataType::Int64]),
        node("out", "Identity", "", &["call"]),
    ]);
    g.node[2].device = "/job:worker/task:0".into();
    place_typed(&mut g, &fake_types);
    assert_eq!(placed(&g), vec![("h", PS1), ("zeros", W0), ("call", PS1), ("out", W0)]);

    // `report_uninitialized_variables` under a worker's scope: the check runs on the ps.
    let mut is_init = node("is_init", "VarIsInitializedOp", "/job:worker/task:0", &["h"]);
    is_init.attr.insert("dtype".into(), attr::ty(DataType::Int64));
    let mut g = graph(vec![node("h", "VarHandleOp", "/job:ps/task:1", &[]), is_init]);
    place_typed(&mut g, &fake_types);
    assert_eq!(placed(&g), vec![("h", PS1), ("is_init", PS1)]);
}

#[test]
fn a_node_using_a_resource_passed_through_a_call_goes_with_the_resource() {
    // A `tf.while_loop` gradient built under a worker's scope takes the `VariableShape` of
    // the handle the loop passes through: as in TensorFlow, it runs where the variable is
    // (its worker request is dropped), and so does a direct use pinned elsewhere.
    let types = |n: &NodeDef| match n.op.as_str() {
        "StatefulPartitionedCall" => Some(vec![(DataType::Resource, false)]),
        _ => fake_types(n),
    };
    let mut g = graph(vec![
        node("h", "VarHandleOp", "/job:ps/task:1", &[]),
        call_node("call", "StatefulPartitionedCall", &["h"], &[DataType::Resource]),
        node("pass", "Identity", "", &["call"]),
        node("shape", "VariableShape", "/job:worker/task:0", &["pass"]),
    ]);
    g.node[1].device = "/job:worker/task:0".into();
    place_typed(&mut g, &types);
    assert_eq!(placed(&g), vec![("h", PS1), ("call", PS1), ("pass", W0), ("shape", PS1)]);
    let mut g = graph(vec![
        node("h", "VarHandleOp", "/job:ps/task:1", &[]),
        node("shape", "VariableShape", "/job:worker/task:0", &["h"]),
    ]);
    place_typed(&mut g, &types);
    assert_eq!(placed(&g), vec![("h", PS1), ("shape", PS1)]);
}
