//! Tests of `lower_while_reads`: which reads leave the loop, and that the loop still
//! computes what the call did.

use ferroflow_core::proto::{GraphDef, NodeDef};
use ferroflow_core::{attr, DataType, NodeAttrs, Tensor};
use ferroflow_graph::{define_function, ops, Scope};

use crate::{lower_spanning_calls, StepRunner};

const PS: &str = "/job:ps/task:0";
const WK: &str = "/job:worker/task:0";

/// How the loop's body and condition use the variable.
#[derive(Clone, Copy)]
enum Body {
    /// `acc += v` (the variable read every iteration).
    Reads,
    /// `acc += v; v += 1` (the loop writes the variable).
    Writes,
    /// Reads it, and the condition reads it too (`i < sum(v)`, 3 here).
    CondReads,
}

/// A variable `v` = [1, 2] on the ps and a `While` on the worker with loop variables
/// (i, acc, v): `while i < 3: i += 1; acc += v` (`Body` varies it). Returns the graph with
/// the init op `init`; the loop is `loop`.
fn graph(kind: Body) -> GraphDef {
    let s = Scope::new_root();
    let ps = s.with_device(PS);
    let v = ops::var_handle_op(&ps, DataType::Float, Some(&[2]), "", "v");
    let value = ops::constant(&ps, Tensor::vec(vec![1.0f32, 2.0]));
    ps.op("AssignVariableOp").name("init").input(v.clone()).input(value).build();
    let t = [DataType::Int32, DataType::Float, DataType::Resource];
    let cond = define_function(s.graph(), "c", &t, move |fs, a| {
        let limit = match kind {
            Body::CondReads => {
                let read = ops::read_variable_op(&fs.with_device(PS), a[2].clone(), DataType::Float);
                ops::cast(fs, ops::sum(fs, read, ops::constant(fs, 0i32), false), DataType::Int32)
            }
            _ => ops::constant(fs, 3i32),
        };
        Ok(vec![ops::less(fs, a[0].clone(), limit)])
    })
    .unwrap();
    let body = define_function(s.graph(), "b", &t, move |fs, a| {
        let on_ps = fs.with_device(PS);
        let read = ops::read_variable_op(&on_ps, a[2].clone(), DataType::Float);
        let acc = ops::add(fs, a[1].clone(), read.clone());
        let mut acc_out = acc;
        if let Body::Writes = kind {
            let one = ops::constant(fs, Tensor::vec(vec![1.0f32, 1.0]));
            // After this iteration's read.
            let w = ops::assign_add_variable_op(&on_ps.with_control_deps(&[&read]), a[2].clone(), one);
            acc_out = ops::identity(&fs.with_control_deps(&[&w]), acc_out);
        }
        Ok(vec![ops::add(fs, a[0].clone(), ops::constant(fs, 1i32)), acc_out, a[2].clone()])
    })
    .unwrap();
    let wk = s.with_device(WK);
    let zeros = ops::constant(&wk, Tensor::vec(vec![0.0f32, 0.0]));
    let w = wk
        .op("While")
        .name("loop")
        .input_list(vec![ops::constant(&wk, 0i32), zeros, v])
        .attr("T", attr::list_type(&t))
        .attr("cond", cond.attr())
        .attr("body", body.attr())
        // One iteration at a time, so the writes of `Body::Writes` are ordered.
        .attr("parallel_iterations", attr::int(1))
        .try_build()
        .unwrap();
    wk.op("Identity").name("acc").input(w.output(1)).build();
    s.graph().to_graph_def()
}

fn find(g: &GraphDef, pred: impl Fn(&NodeDef) -> bool) -> Vec<&NodeDef> {
    g.node.iter().filter(|n| pred(n)).collect()
}

/// Runs `init`, then fetches `acc`, on one device.
fn run(g: &GraphDef) -> Vec<f32> {
    let mut local = g.clone();
    for n in &mut local.node {
        n.device.clear();
    }
    let sess = crate::DirectSession::from_graph_def(&local).unwrap();
    let opts = crate::RunOptions::default();
    sess.run_by_name(&[], &[], &["init".to_string()], &opts).unwrap();
    let out = sess.run_by_name(&[], &["acc".to_string()], &[], &opts).unwrap();
    out[0].as_slice::<f32>().unwrap().to_vec()
}

#[test]
fn a_read_of_a_variable_the_loop_never_writes_leaves_the_loop() {
    let mut g = graph(Body::Reads);
    assert_eq!(lower_spanning_calls(&mut g).unwrap(), 1);
    // The read's name now names the value entering the frame as a constant.
    let entered = find(&g, |n| n.name.starts_with("loop/_lower/body/") && n.name.ends_with("ReadVariableOp"));
    assert_eq!(entered.len(), 1, "{entered:?}");
    let e = entered[0];
    assert_eq!(e.op, "Enter");
    assert!(e.attr_bool("is_constant").unwrap());
    assert_eq!(e.attr_string("frame_name").unwrap(), "loop");
    assert_eq!(e.attr_type("T").unwrap(), DataType::Float);
    assert_eq!(e.device, WK, "the value enters where the loop runs");
    // One read before the loop, of the variable itself, where the variable is.
    let hoisted = find(&g, |n| n.name == format!("{}/hoisted", e.name));
    assert_eq!(hoisted.len(), 1);
    assert_eq!(hoisted[0].op, "ReadVariableOp");
    assert_eq!(hoisted[0].input, vec!["VarHandleOp".to_string()]);
    assert_eq!(hoisted[0].device, PS);
    assert_eq!(e.input, vec![hoisted[0].name.clone()]);
    // The variable is no loop variable any more: no chain, and the call returns its input.
    assert!(find(&g, |n| n.name.starts_with("loop/_lower/") && n.name.ends_with("_2")).is_empty());
    let keep = find(&g, |n| n.name == "loop")[0];
    assert_eq!(keep.input[2], "VarHandleOp");
    assert_eq!(run(&g), vec![3.0, 6.0]);
    // No node inside the frame runs on the ps: the ps needs no control loop.
    let frames = crate::graph_frames(&g).unwrap();
    for (i, n) in g.node.iter().enumerate() {
        if frames.input_frame[i] != 0 {
            assert_ne!(n.device, PS, "node {} runs in the loop on the ps", n.name);
        }
    }
}

#[test]
fn reads_stay_in_a_loop_that_writes_the_variable() {
    let mut g = graph(Body::Writes);
    assert_eq!(lower_spanning_calls(&mut g).unwrap(), 1);
    assert!(find(&g, |n| n.name.ends_with("/hoisted")).is_empty());
    let reads = find(&g, |n| n.name.starts_with("loop/_lower/body/") && n.op == "ReadVariableOp");
    assert_eq!(reads.len(), 1);
    assert!(!find(&g, |n| n.name == "loop/_lower/Merge_2").is_empty());
    // Iterations read 1,2 then 2,3 then 3,4.
    assert_eq!(run(&g), vec![6.0, 9.0]);
}

#[test]
fn a_variable_the_condition_reads_keeps_its_chain() {
    let mut g = graph(Body::CondReads);
    assert_eq!(lower_spanning_calls(&mut g).unwrap(), 1);
    // The body's read is hoisted; the condition still reads through the loop variable.
    assert_eq!(find(&g, |n| n.name.ends_with("/hoisted")).len(), 1);
    assert!(!find(&g, |n| n.name == "loop/_lower/Merge_2").is_empty());
    assert!(!find(&g, |n| n.name == "loop/_lower/NextIteration_2").is_empty());
    assert_eq!(run(&g), vec![3.0, 6.0]);
}
