//! A graph written by TensorFlow 2.21 with `tf.while_loop`s (`scripts/fixtures/tf_while.py`:
//! `While` and `StatelessWhile` whose cond and body are library functions; a counted sum,
//! a vector loop, a loop nested in a loop body, loops with a fed trip count including zero
//! iterations, a body that reads a resource variable and one that changes it) runs on
//! DirectSession with TensorFlow's values.

use ferroflow_core::proto::attr_value::Value as AV;
use ferroflow_core::{Code, Tensor};
use ferroflow_runtime::StepRunner;
use ferroflow_runtime::{DirectSession, RunOptions};

use crate::util::{close, fixture, run_steps, session, strings, value};

#[test]
fn tensorflow_while_loops_give_tensorflows_values() {
    let (gd, exp) = fixture("tf_while");
    let ops: Vec<String> = strings(&exp["op_types"]);
    assert!(ops.contains(&"While".to_string()) && ops.contains(&"StatelessWhile".to_string()), "{ops:?}");
    let sess = DirectSession::from_graph_def(&gd).unwrap();
    run_steps(&sess, &exp, value, close(1e-5));
}

#[test]
fn a_long_loop_does_not_grow_the_stack_and_is_cancelled_by_the_deadline() {
    let sess = session("tf_while");
    let o = RunOptions::default();
    // 20 000 iterations of the counted sum: sum of 0..n-1 wraps in int32 like TensorFlow's.
    let n = 20_000i32;
    let got = sess.run_by_name(&[("n:0".into(), Tensor::scalar(n))], &["sum/Identity_3:0".into()], &[], &o).unwrap();
    let want = ((n as i64 * (n as i64 - 1) / 2) as u32) as i32;
    assert_eq!(got[0].scalar_value::<i32>().unwrap(), want);
    // A loop that would take far too long stops at the step deadline.
    let o = RunOptions { timeout: Some(std::time::Duration::from_millis(200)), cancel: None, ..Default::default() };
    let e = sess
        .run_by_name(&[("n:0".into(), Tensor::scalar(i32::MAX))], &["sum/Identity_3:0".into()], &[], &o)
        .unwrap_err();
    assert_eq!(e.code, Code::DeadlineExceeded, "{e}");
}

#[test]
fn a_body_of_the_wrong_signature_is_reported_when_the_graph_is_prepared() {
    let (mut gd, _) = fixture("tf_while");
    let n = gd.node.iter_mut().find(|n| n.op == "StatelessWhile").unwrap();
    let name = n.name.clone();
    let cond = match n.attr.get("cond").and_then(|v| v.value.as_ref()) {
        Some(AV::Func(f)) => f.name.clone(),
        _ => panic!("no cond"),
    };
    // The condition used as the body: it returns a bool, not the loop variables.
    if let Some(AV::Func(f)) = n.attr.get_mut("body").and_then(|v| v.value.as_mut()) {
        f.name = cond;
    }
    let sess = DirectSession::from_graph_def(&gd).unwrap();
    let fetch = format!("{name}:0");
    let e =
        sess.run_by_name(&[("n:0".into(), Tensor::scalar(3i32))], &[fetch], &[], &RunOptions::default()).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument, "{e}");
    assert!(e.message.contains("while loop body"), "{e}");
}
