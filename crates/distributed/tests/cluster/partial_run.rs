//! Partial runs from the Rust client on a ps + worker cluster: feeds and fetches over
//! several calls across tasks, two runs interleaved, and TensorFlow's errors.

use crate::common;

use ferroflow_core::{Code, DataType, Tensor};
use ferroflow_distributed::GrpcSession;
use ferroflow_graph::ops;

#[test]
fn partial_runs_feed_and_fetch_one_step_over_several_calls() {
    let (c, s, ps, w) = common::ps_and_worker();
    let a = ops::placeholder_named(&w, "a", DataType::Float, Some(&[]));
    let b = ops::placeholder_named(&w, "b", DataType::Float, Some(&[]));
    let cc = ops::placeholder_named(&w, "c", DataType::Float, Some(&[]));
    let r1 = ops::add(&w, a.clone(), b.clone());
    let r2 = ops::mul(&ps, r1.clone(), cc.clone());
    let sess = GrpcSession::new(&c.target("worker:0"), s.graph()).unwrap();
    let f = |v: f32| Tensor::scalar(v);
    let val = |t: &[Tensor]| t[0].scalar_value::<f32>().unwrap();

    let h = sess.partial_run_setup(&[&a, &b, &cc], &[&r1, &r2], &[]).unwrap();
    assert_eq!(val(&sess.partial_run(&h, &[(&a, f(1.0)), (&b, f(2.0))], &[&r1]).unwrap()), 3.0);
    assert_eq!(val(&sess.partial_run(&h, &[(&cc, f(3.0))], &[&r2]).unwrap()), 9.0);

    // Interleaved.
    let h1 = sess.partial_run_setup(&[&a, &b, &cc], &[&r1, &r2], &[]).unwrap();
    let h2 = sess.partial_run_setup(&[&a, &b, &cc], &[&r1, &r2], &[]).unwrap();
    assert_ne!(h1, h2);
    assert_eq!(val(&sess.partial_run(&h1, &[(&a, f(1.0)), (&b, f(1.0))], &[&r1]).unwrap()), 2.0);
    assert_eq!(val(&sess.partial_run(&h2, &[(&a, f(5.0)), (&b, f(5.0))], &[&r1]).unwrap()), 10.0);
    assert_eq!(val(&sess.partial_run(&h2, &[(&cc, f(2.0))], &[&r2]).unwrap()), 20.0);
    assert_eq!(val(&sess.partial_run(&h1, &[(&cc, f(10.0))], &[&r2]).unwrap()), 20.0);

    // TensorFlow's errors; a refused call leaves the run usable.
    let h = sess.partial_run_setup(&[&a, &b, &cc], &[&r1, &r2], &[]).unwrap();
    let e = sess.partial_run(&h, &[(&cc, f(1.0))], &[&r2]).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument, "{e}");
    assert!(e.message.contains("can't be computed from the feeds that have been fed so far"), "{e}");
    assert_eq!(val(&sess.partial_run(&h, &[(&a, f(1.0)), (&b, f(2.0))], &[&r1]).unwrap()), 3.0);
    let e = sess.partial_run(&h, &[(&a, f(1.0))], &[]).unwrap_err();
    assert!(e.message.contains("has already been fed"), "{e}");
    let e = sess.partial_run(&h, &[], &[&r1]).unwrap_err();
    assert!(e.message.contains("has already been fetched"), "{e}");
    assert_eq!(val(&sess.partial_run(&h, &[(&cc, f(4.0))], &[&r2]).unwrap()), 12.0);
    // The run is over: its handle is gone.
    let e = sess.partial_run(&h, &[], &[&r2]).unwrap_err();
    assert!(e.message.contains("Must run 'setup'"), "{e}");
}
