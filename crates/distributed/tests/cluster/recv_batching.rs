//! Batched RecvTensor between ferroflow tasks: the receives a partition issues together
//! from one peer travel in one call, each tensor delivered as soon as it is ready, so a
//! step whose tensors depend on each other across tasks still finishes; errors reach
//! every receive of the batch.

use crate::common;

use ferroflow_core::{Code, DataType, Tensor};
use ferroflow_distributed::GrpcSession;
use ferroflow_graph::ops;
use ferroflow_runtime::RunOptions;
use ferroflow_runtime::StepRunner;

#[test]
fn receives_from_one_peer_share_a_call_and_arrive_as_they_are_ready() {
    let (c, s, ps, wk) = common::ps_and_worker();
    // Four tensors the ps has at once, and one (`late`) it can only send after it received
    // `doubled` from the worker, which needs `a` first: a batch that waited for all of its
    // tensors before answering would never finish this step.
    let a = ops::constant(&ps, Tensor::vec(vec![1.0f32, 2.0, 3.0]));
    let big = ops::fill(&ps, ops::constant(&ps, Tensor::vec(vec![512i32, 512])), ops::constant(&ps, 0.5f32));
    let k = ops::constant(&ps, 7.0f32);
    let flag = ops::constant(&ps, Tensor::scalar(b"ps".to_vec()));
    let doubled = ops::mul(&wk, a.clone(), ops::constant(&wk, 2.0f32));
    let late = ops::add(&ps, doubled, ops::constant(&ps, 1.0f32));
    let big_sum = ops::sum(&wk, big, ops::constant(&wk, Tensor::vec(vec![0i32, 1])), false);
    let out = ops::mul(&wk, late, k.clone());
    let flag_on_worker = ops::identity(&wk, flag);
    // Large tensors of other dtypes in the same batch, read into their buffers as they
    // arrive (`tensor_stream`); every element is checked.
    let n = 300_000i64;
    let seq = ops::range(&ps, ops::constant(&ps, 0i64), ops::constant(&ps, n), ops::constant(&ps, 1i64));
    let seq_on_worker = ops::identity(&wk, seq.clone());
    let halves = ops::identity(&wk, ops::mul(&ps, ops::cast(&ps, seq, DataType::Double), ops::constant(&ps, 0.5f64)));
    let sess = GrpcSession::new(&c.target("worker:0"), s.graph()).unwrap();
    let r = sess.run(&[], &[&seq_on_worker, &halves], &[]).unwrap();
    assert!(r[0].as_slice::<i64>().unwrap().iter().copied().eq(0..n));
    assert!(r[1].as_slice::<f64>().unwrap().iter().enumerate().all(|(i, &v)| v == i as f64 * 0.5));
    for _ in 0..3 {
        let r = sess.run(&[], &[&out, &big_sum, &flag_on_worker, &k], &[]).unwrap();
        assert_eq!(r[0].as_slice::<f32>().unwrap(), &[21.0, 35.0, 49.0]);
        assert_eq!(r[1].scalar_value::<f32>().unwrap(), 512.0 * 512.0 * 0.5);
        assert_eq!(r[2].scalar_value::<Vec<u8>>().unwrap(), b"ps");
        assert_eq!(r[3].scalar_value::<f32>().unwrap(), 7.0);
    }
    let (calls, tensors) = c.server("ps:0").worker().num_recv_tensor_batches();
    assert!(calls >= 1 && tensors >= 2 * calls, "the ps served {calls} batches of {tensors} tensors");
}

#[test]
fn a_failing_peer_fails_every_receive_of_the_batch_and_the_step_names_it() {
    let (c, s, ps, wk) = common::ps_and_worker();
    let x = ops::placeholder(&wk, DataType::Float, None);
    // Both ps tensors depend on the fed value; the reshape on the ps fails for a bad feed.
    let bad = ops::reshape(&ps, x.clone(), ops::constant(&ps, Tensor::vec(vec![2i32])));
    let fine = ops::add(&ps, x.clone(), ops::constant(&ps, 1.0f32));
    let a = ops::identity(&wk, bad);
    let b = ops::identity(&wk, fine);
    let sess = GrpcSession::new(&c.target("worker:0"), s.graph()).unwrap();
    let ok = sess.run(&[(&x, Tensor::vec(vec![1.0f32, 2.0]))], &[&a, &b], &[]).unwrap();
    assert_eq!(ok[1].as_slice::<f32>().unwrap(), &[2.0, 3.0]);
    let opts = RunOptions { timeout: Some(common::PROMPT), cancel: None, ..Default::default() };
    let t = std::time::Instant::now();
    let e = sess
        .run_by_name(
            &[("Placeholder".into(), Tensor::vec(vec![1.0f32, 2.0, 3.0]))],
            &[format!("{}:0", a.node), format!("{}:0", b.node)],
            &[],
            &opts,
        )
        .unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument, "{e}");
    assert!(e.message.contains("Reshape") && e.message.contains("/job:ps/replica:0/task:0"), "{e}");
    assert!(t.elapsed() < common::PROMPT);
    // The session still works.
    let ok = sess.run(&[(&x, Tensor::vec(vec![4.0f32, 5.0]))], &[&b], &[]).unwrap();
    assert_eq!(ok[0].as_slice::<f32>().unwrap(), &[5.0, 6.0]);
}
