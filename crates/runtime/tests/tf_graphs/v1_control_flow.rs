//! A graph written by TensorFlow 2.21 with TensorFlow 2 behaviour off
//! (`scripts/fixtures/tf_v1_control_flow.py`): `tf.cond` and `tf.while_loop` as TensorFlow
//! 1.x control flow (`Switch`/`RefSwitch`/`Merge`, `Enter`/`RefEnter`/`Exit`/
//! `NextIteration`/`LoopCond` frames), conditionals over ref variables and with side
//! effects, nested loops, zero-trip loops, `parallel_iterations=1`, a loop in a cond's
//! untaken branch, and a ref-variable read aliasing the variable. Runs on DirectSession
//! with TensorFlow's values.

use ferroflow_core::proto::GraphDef;
use ferroflow_core::{Code, Tensor};
use ferroflow_runtime::StepRunner;
use ferroflow_runtime::{DirectSession, RunOptions};

use crate::util::{close, fixture, run_steps, value};

#[test]
fn tensorflow_1_control_flow_gives_tensorflows_values() {
    let (gd, exp) = fixture("tf_v1_control_flow");
    let ops: Vec<&str> = exp["op_types"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    for op in ["Switch", "RefSwitch", "Merge", "Enter", "RefEnter", "Exit", "NextIteration", "LoopCond"] {
        assert!(ops.contains(&op), "the fixture has no {op}");
    }
    let sess = DirectSession::from_graph_def(&gd).unwrap();
    run_steps(&sess, &exp, value, close(1e-5));
}

#[test]
fn the_same_steps_run_again_on_a_new_session() {
    // Loop frames and iterations are per step: running every step twice more on fresh
    // sessions (variables start over) gives the same values.
    let (gd, exp) = fixture("tf_v1_control_flow");
    for _ in 0..2 {
        let sess = DirectSession::from_graph_def(&gd).unwrap();
        run_steps(&sess, &exp, value, close(1e-5));
    }
}

#[test]
fn a_fetch_of_the_untaken_branch_is_an_error() {
    let (gd, _) = fixture("tf_v1_control_flow");
    let sess = DirectSession::from_graph_def(&gd).unwrap();
    sess.run_by_name(&[], &[], &["init".into()], &RunOptions::default()).unwrap();
    // cond_a/Switch_1:1 is the true branch's input; with p false it is dead.
    let sw = gd.node.iter().find(|n| n.name.starts_with("cond_a/") && n.op == "Switch" && n.input[0] == "x").unwrap();
    let feeds =
        vec![("p:0".to_string(), Tensor::scalar(false)), ("x:0".to_string(), Tensor::vec(vec![1f32, 2.0, 3.0]))];
    let e = sess.run_by_name(&feeds, &[format!("{}:1", sw.name)], &[], &RunOptions::default()).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument, "{e}");
    // The live branch is fetched fine.
    let t = sess.run_by_name(&feeds, &[format!("{}:0", sw.name)], &[], &RunOptions::default()).unwrap();
    assert_eq!(t[0].to_f64_vec().unwrap().len(), 3);
}

#[test]
fn malformed_frames_are_refused_with_the_node_named() {
    let (gd, _) = fixture("tf_v1_control_flow");
    // An Exit outside any loop.
    let mut bad: GraphDef = gd.clone();
    let exit = bad.node.iter_mut().find(|n| n.name == "sum/Exit_1").unwrap();
    exit.input[0] = "n".into();
    let sess = DirectSession::from_graph_def(&bad);
    let e = match sess {
        Err(e) => e,
        Ok(s) => s.run_by_name(&[], &["sum/Exit_1:0".into()], &[], &RunOptions::default()).unwrap_err(),
    };
    assert_eq!(e.code, Code::InvalidArgument, "{e}");
    assert!(e.message.contains("sum/Exit_1"), "{e}");
}
