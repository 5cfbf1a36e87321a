//! Tests of `lower_calls`: which calls are lowered and what they become.

use crate::StepRunner;
use ferroflow_core::proto::GraphDef;
use ferroflow_core::{attr, DataType, NodeAttrs};
use ferroflow_graph::{define_function, ops, Scope};

use crate::lower_spanning_calls;

const PS: &str = "/job:ps/task:0";
const WK: &str = "/job:worker/task:0";

/// A `While` on the worker whose body adds on `body_device`, and an `If` whose then branch
/// multiplies on `body_device`.
fn graph(body_device: &str) -> GraphDef {
    let s = Scope::new_root();
    let t = [DataType::Int32, DataType::Float];
    let cond =
        define_function(s.graph(), "c", &t, |fs, a| Ok(vec![ops::less(fs, a[0].clone(), ops::constant(fs, 3i32))]))
            .unwrap();
    let dev = body_device.to_string();
    let body = define_function(s.graph(), "b", &t, move |fs, a| {
        let k = ops::constant(fs, 2.0f32);
        let on = fs.with_device(&dev);
        Ok(vec![ops::add(fs, a[0].clone(), ops::constant(fs, 1i32)), ops::add(&on, a[1].clone(), k)])
    })
    .unwrap();
    let wk = s.with_device(WK);
    let w = wk
        .op("While")
        .name("loop")
        .input_list(vec![ops::constant(&wk, 0i32), ops::constant(&wk, 0.0f32)])
        .attr("T", attr::list_type(&t))
        .attr("cond", cond.attr())
        .attr("body", body.attr())
        .try_build()
        .unwrap();
    let _ = ops::identity(&wk, w.output(1));
    s.graph().to_graph_def()
}

#[test]
fn a_while_whose_body_asks_for_another_task_becomes_a_frame() {
    let mut g = graph(PS);
    assert_eq!(lower_spanning_calls(&mut g).unwrap(), 1);
    let find = |name: &str| g.node.iter().find(|n| n.name == name).unwrap_or_else(|| panic!("no node {name}"));
    let keep = find("loop");
    assert_eq!(keep.op, "IdentityN", "the call's name now names its results");
    assert_eq!(keep.input, vec!["loop/_lower/Exit_0", "loop/_lower/Exit_1"]);
    assert_eq!(keep.attr_list_type("T").unwrap(), vec![DataType::Int32, DataType::Float]);
    let enter = find("loop/_lower/Enter_1");
    assert_eq!(enter.attr_string("frame_name").unwrap(), "loop");
    assert_eq!(enter.attr_int("parallel_iterations").unwrap(), 10);
    assert_eq!(find("loop/_lower/LoopCond").input.len(), 1);
    // The body's add keeps its own device, its other nodes take the call's; the Const
    // without inputs hangs off the body's pivot so it runs in the loop frame.
    let adds: Vec<_> =
        g.node.iter().filter(|n| n.name.starts_with("loop/_lower/body/") && n.op.starts_with("Add")).collect();
    assert!(adds.iter().any(|n| n.device == "/job:ps/task:0"), "{adds:?}");
    assert!(adds.iter().any(|n| n.device == "/job:worker/task:0"), "{adds:?}");
    let konst = g.node.iter().find(|n| n.name.starts_with("loop/_lower/body/") && n.op == "Const").unwrap();
    assert_eq!(konst.input, vec!["^loop/_lower/Identity_0"]);
    assert!(!g.node.iter().any(|n| n.op == "While"));
    // The lowered graph runs as a loop (on one device here) and gives the call's result.
    let mut local = g.clone();
    for n in &mut local.node {
        n.device.clear();
    }
    let sess = crate::DirectSession::from_graph_def(&local).unwrap();
    let out = sess.run_by_name(&[], &["loop:1".to_string()], &[], &crate::RunOptions::default()).unwrap();
    assert_eq!(out[0].scalar_value::<f32>().unwrap(), 6.0);
}

#[test]
fn calls_that_stay_on_one_task_are_kept() {
    for dev in ["", WK, "/device:CPU:0"] {
        let mut g = graph(dev);
        let before = g.clone();
        assert_eq!(lower_spanning_calls(&mut g).unwrap(), 0, "body device '{dev}'");
        assert_eq!(g, before);
    }
}
