use ferroflow_core::{DataType, NodeAttrs, Tensor};

use super::*;
use crate::ops::{constant, placeholder};

#[test]
fn resource_variable_nodes_match_tensorflow() {
    let root = Scope::new_root();
    let s = root.sub("layer").with_device("/job:ps/task:0");
    let w = Variable::new(&s, "w", constant(&s, Tensor::zeros(DataType::Float, vec![2, 3]).unwrap()));
    assert_eq!(w.name(), "layer/w");
    assert!(w.is_resource() && w.trainable());
    assert_eq!((w.dtype(), w.shape()), (DataType::Float, Some(vec![2, 3])));
    assert_eq!(w.handle().dtype, DataType::Resource);
    assert_eq!(w.read().node, "layer/w/Read/ReadVariableOp");
    assert_eq!(root.graph().shape_of(&w.read()), Some(vec![2, 3]));
    assert_eq!(w.initializer().name, "layer/w/Assign");
    assert_eq!(w.initializer().op_type, "AssignVariableOp");
    let g = root.graph();
    let h = g.node("layer/w").unwrap().def;
    assert_eq!(h.op, "VarHandleOp");
    assert_eq!(h.attr_string("shared_name").unwrap(), "layer/w");
    assert_eq!(h.attr_shape("shape").unwrap(), Some(vec![2, 3]));
    assert_eq!(h.device, "/job:ps/task:0");
    let read = g.node("layer/w/Read/ReadVariableOp").unwrap().def;
    assert_eq!(read.device, "/job:ps/task:0");
    assert_eq!(read.attr_list_string("_class").unwrap(), vec!["loc:@layer/w"]);
    assert!(g.node("layer/w/IsInitialized/VarIsInitializedOp").is_some());
    assert_eq!(g.collection(GLOBAL_VARIABLES), vec!["layer/w"]);
    assert_eq!(g.collection(TRAINABLE_VARIABLES), vec!["layer/w"]);
    root.status().unwrap();

    // Rebuilt from the graph, as optimizers and savers do.
    let again = Variable::from_graph(g, "layer/w").unwrap();
    assert_eq!(again, w);
    assert_eq!(trainable_variables(g).unwrap(), vec![w.clone()]);

    // A second variable of the same name is uniquified and gets its own storage.
    let w2 = Variable::new(&s, "w", constant(&s, 1.0f32));
    assert_eq!(w2.name(), "layer/w_1");
    assert_eq!(g.node("layer/w_1").unwrap().def.attr_string("shared_name").unwrap(), "layer/w_1");
    root.status().unwrap();
}

#[test]
fn reference_variables_and_updates() {
    let s = Scope::new_root();
    let v = Variable::new_ref(&s, "v", constant(&s, vec![1.0f32, 2.0]));
    assert!(!v.is_resource());
    assert_eq!(v.handle().dtype, DataType::Float);
    assert_eq!(v.read().node, "v/read");
    assert_eq!(s.graph().node("v").unwrap().def.op, "VariableV2");
    assert_eq!(s.graph().node("v/Assign").unwrap().def.op, "Assign");
    assert_eq!(s.graph().shape_of(&v.read()), Some(vec![2]));
    let add = v.assign_add(&s, constant(&s, vec![1.0f32, 1.0]));
    assert_eq!(add.op_type, "AssignAdd");
    assert_eq!(v.assign_sub(&s, constant(&s, vec![1.0f32, 1.0])).op_type, "AssignSub");
    assert_eq!(v.assign(&s, constant(&s, vec![0.0f32, 0.0])).op_type, "Assign");
    assert_eq!(v.is_initialized(&s).dtype, DataType::Bool);
    assert_eq!(v.read_value(&s).dtype, DataType::Float);
    s.status().unwrap();
    assert_eq!(Variable::from_graph(s.graph(), "v").unwrap(), v);

    let r = Variable::new(&s, "r", constant(&s, 3i64));
    assert_eq!(r.assign(&s, constant(&s, 4i64)).op_type, "AssignVariableOp");
    assert_eq!(r.assign_add(&s, constant(&s, 1i64)).op_type, "AssignAddVariableOp");
    assert_eq!(r.assign_sub(&s, constant(&s, 1i64)).op_type, "AssignSubVariableOp");
    assert_eq!(r.is_initialized(&s).dtype, DataType::Bool);
    assert_eq!(s.graph().shape_of(&r.read_value(&s)), Some(vec![]));
    s.status().unwrap();
    // Assigning the wrong dtype is a construction error.
    r.assign(&s, constant(&s, 1.0f32));
    assert!(s.status().is_err());
}

#[test]
fn initializers_and_options() {
    let s = Scope::new_root();
    let dep = crate::ops::group_named::<str>(&s, "dep", &[]);
    let cs = s.with_control_deps(&[&dep]);
    let a = Variable::new(&cs, "a", constant(&s, 1.0f32));
    assert!(!s.graph().node("a").unwrap().def.input.iter().any(|i| i == "^dep"), "variables ignore control deps");
    let opts = VariableOptions { trainable: false, ..Default::default() };
    let b = Variable::with_options(&s, "b", placeholder(&s, DataType::Double, None), &opts);
    assert_eq!(b.shape(), None);
    assert!(!b.trainable());
    assert_eq!(global_variables(s.graph()).unwrap(), vec![a.clone(), b.clone()]);
    assert_eq!(trainable_variables(s.graph()).unwrap(), vec![a.clone()]);
    let init = global_variables_initializer(&s);
    let n = s.graph().node(&init.name).unwrap().def;
    assert_eq!((init.name.as_str(), n.op.as_str()), ("init", "NoOp"));
    assert_eq!(n.input, vec!["^a/Assign", "^b/Assign"]);
    let only_b = variables_initializer(&s, std::slice::from_ref(&b));
    assert_eq!(only_b.name, "init_1");
    assert_eq!(s.graph().node("init_1").unwrap().def.input, vec!["^b/Assign"]);
    s.status().unwrap();
    assert!(Variable::from_graph(s.graph(), "init").is_err());
    assert!(Variable::from_graph(s.graph(), "nope").is_err());
}

#[test]
fn global_step_is_created_once() {
    let s = Scope::new_root();
    assert!(get_global_step(s.graph()).is_none());
    let gs = get_or_create_global_step(&s);
    assert_eq!(gs.name(), "global_step");
    assert_eq!((gs.dtype(), gs.shape()), (DataType::Int64, Some(vec![])));
    assert!(!gs.trainable() && gs.is_resource());
    assert_eq!(gs.initial_value().node, "global_step/Initializer/zeros");
    assert_eq!(get_or_create_global_step(&s), gs);
    assert_eq!(get_global_step(s.graph()), Some(gs.clone()));
    assert_eq!(s.graph().collection(GLOBAL_STEP), vec!["global_step"]);
    assert_eq!(s.graph().collection(GLOBAL_VARIABLES), vec!["global_step"]);
    assert!(s.graph().collection(TRAINABLE_VARIABLES).is_empty());
    s.status().unwrap();
}

#[test]
fn name_taken_by_a_scope_is_reported() {
    let s = Scope::new_root();
    let _layer = s.sub("w");
    Variable::new(&s, "w", constant(&s, 1.0f32));
    assert!(s.status().unwrap_err().message.contains("already used"));
}
