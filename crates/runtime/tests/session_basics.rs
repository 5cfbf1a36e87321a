//! DirectSession behaviour that needs only the plumbing kernels.

use ferroflow_core::{Code, DataType, Tensor};
use ferroflow_graph::{ops, Scope};
use ferroflow_runtime::StepRunner;
use ferroflow_runtime::{DirectSession, RunOptions};

#[test]
fn feed_and_fetch_round_trip() {
    let s = Scope::new_root();
    let x = ops::placeholder(&s, DataType::Float, Some(&[-1, 2]));
    let sess = DirectSession::new(s.graph());
    let t = Tensor::new(vec![1, 2], vec![1.0f32, 2.0]).unwrap();
    let out = sess.run(&[(&x, t.clone())], &[&x, &x], &[]).unwrap();
    assert_eq!(out, vec![t.clone(), t.clone()]);
    // The cached executor serves the next step too.
    let t2 = Tensor::new(vec![1, 2], vec![3.0f32, 4.0]).unwrap();
    assert_eq!(sess.run(&[(&x, t2.clone())], &[&x], &[]).unwrap(), vec![t2]);
}

#[test]
fn bad_feeds_and_fetches_are_errors() {
    let s = Scope::new_root();
    let x = ops::placeholder(&s, DataType::Float, None);
    let sess = DirectSession::new(s.graph());
    let e = sess.run(&[(&x, Tensor::scalar(1i32))], &[&x], &[]).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("Placeholder:0"), "{e}");
    let e = sess.run_by_name(&[], &["nope:0".into()], &[], &RunOptions::default()).unwrap_err();
    assert_eq!(e.code, Code::NotFound);
    // An output index past the node's outputs is INVALID_ARGUMENT, as TensorFlow's
    // FetchOutputs ("output index too large").
    let e = sess.run_by_name(&[], &["Placeholder:3".into()], &[], &RunOptions::default()).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("Placeholder:3") && e.message.contains("only 1 outputs"), "{e}");
    let e = sess.run_by_name(&[], &[], &["missing".into()], &RunOptions::default()).unwrap_err();
    assert_eq!(e.code, Code::NotFound);
}

#[test]
fn graph_errors_surface_at_run() {
    let s = Scope::new_root();
    let x = ops::placeholder(&s, DataType::Float, None);
    let _bad = s.with_device("/job:ps/task:zero").op("Identity").input(x.clone()).build();
    let sess = DirectSession::new(s.graph());
    let e = sess.run(&[(&x, Tensor::scalar(1f32))], &[&x], &[]).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("task:zero"), "{e}");
}
