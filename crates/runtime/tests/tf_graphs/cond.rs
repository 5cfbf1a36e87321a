//! A graph written by TensorFlow 2.21 with function calls (`scripts/fixtures/tf_cond.py`:
//! `If` and `StatelessIf` from `tf.cond`, nested, with two results, reading and changing a
//! resource variable; `PartitionedCall` from a `tf.function`; the global-step read that
//! `MonitoredTrainingSession`'s hooks fetch) runs on DirectSession with TensorFlow's values.

use ferroflow_core::proto::attr_value::Value as AV;
use ferroflow_core::{Code, Tensor};
use ferroflow_runtime::StepRunner;
use ferroflow_runtime::{DirectSession, RunOptions};

use crate::util::{close, fixture, run_steps, session, value};

#[test]
fn tensorflow_function_calls_give_tensorflows_values() {
    let (gd, exp) = fixture("tf_cond");
    assert!(gd.library.as_ref().is_some_and(|l| l.function.len() == exp["functions"].as_u64().unwrap() as usize));
    let sess = DirectSession::from_graph_def(&gd).unwrap();
    run_steps(&sess, &exp, value, close(1e-6));
}

#[test]
fn a_missing_function_is_reported_when_the_graph_is_prepared() {
    let (mut gd, _) = fixture("tf_cond");
    let n = gd.node.iter_mut().find(|n| n.op == "StatelessIf").unwrap();
    let name = n.name.clone();
    if let Some(AV::Func(f)) = n.attr.get_mut("then_branch").and_then(|v| v.value.as_mut()) {
        f.name = "no_such_function".into();
    }
    let sess = DirectSession::from_graph_def(&gd).unwrap();
    let e = sess
        .run_by_name(&[("x:0".into(), Tensor::scalar(1.0f32))], &[format!("{name}:0")], &[], &RunOptions::default())
        .unwrap_err();
    assert_eq!(e.code, Code::NotFound, "{e}");
    assert!(e.message.contains("no_such_function") && e.message.contains(&name), "{e}");
}

#[test]
fn a_failing_branch_fails_the_step_with_its_error() {
    // Before `init`, the branch of `a` that reads the variable fails like TensorFlow's read.
    let sess = session("tf_cond");
    let feeds = vec![("p:0".to_string(), Tensor::scalar(true)), ("x:0".to_string(), Tensor::scalar(1.0f32))];
    let e = sess.run_by_name(&feeds, &["a/Identity:0".into()], &[], &RunOptions::default()).unwrap_err();
    assert!(matches!(e.code, Code::FailedPrecondition | Code::NotFound), "{e}");
    assert!(e.message.contains("function"), "{e}");
    // The other branch needs no variable.
    let feeds = vec![("p:0".to_string(), Tensor::scalar(false)), ("x:0".to_string(), Tensor::scalar(1.0f32))];
    let got = sess.run_by_name(&feeds, &["a/Identity:0".into()], &[], &RunOptions::default()).unwrap();
    assert_eq!(got[0].scalar_value::<f32>().unwrap(), 0.0);
}
