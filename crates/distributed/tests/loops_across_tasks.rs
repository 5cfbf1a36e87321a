//! TensorFlow 1.x while loops (`while_loop_v1`) whose body runs on two tasks: the master's
//! partitioner adds control loops on the receiving task and tensors sent inside the loop are
//! keyed by frame instance and iteration.

mod common;

use common::Cluster;
use ferroflow_core::{Code, DataType, Tensor};
use ferroflow_distributed::GrpcSession;
use ferroflow_graph::{ops, while_loop_v1, Scope};

const PS: &str = "/job:ps/task:0";

fn f32_of(t: &Tensor) -> f32 {
    t.scalar_value::<f32>().unwrap()
}

#[test]
fn a_loop_body_on_two_tasks_gives_the_single_task_result() {
    let c = Cluster::start(&[("ps", 1), ("worker", 1)]);
    let s = Scope::new_root();
    let wk = s.with_device("/job:worker/task:0");
    let n = ops::placeholder(&wk, DataType::Int32, Some(&[]));
    let zero = ops::constant(&wk, 0i32);
    let start = ops::constant(&wk, 0.0f32);
    // s <- (s * 2 + 1 on the ps) + i on the worker, for i < n.
    let out = while_loop_v1(
        &wk,
        &[zero.clone(), start.clone()],
        std::slice::from_ref(&n),
        |s, v, inv| ops::less(s, v[0].clone(), inv[0].clone()),
        |s, v, _| {
            let ps = s.with_device(PS);
            let t = ops::add(&ps, ops::mul(&ps, v[1].clone(), ops::constant(&ps, 2.0f32)), ops::constant(&ps, 1.0f32));
            let i = ops::cast(s, v[0].clone(), DataType::Float);
            vec![ops::add(s, v[0].clone(), ops::constant(s, 1i32)), ops::add(s, t, i)]
        },
        3,
    )
    .unwrap();
    // Nested: for i < n, the inner loop (on the ps) adds j * i for j <= i.
    let nested = while_loop_v1(
        &wk,
        &[zero.clone(), start],
        std::slice::from_ref(&n),
        |s, v, inv| ops::less(s, v[0].clone(), inv[0].clone()),
        |s, v, _| {
            let i = v[0].clone();
            let inner = while_loop_v1(
                s,
                &[ops::constant(s, 0i32), ops::constant(s, 0.0f32)],
                std::slice::from_ref(&i),
                |s, w, inv| ops::less_equal(s, w[0].clone(), inv[0].clone()),
                |s, w, inv| {
                    let ps = s.with_device(PS);
                    let p = ops::cast(&ps, ops::mul(&ps, w[0].clone(), inv[0].clone()), DataType::Float);
                    vec![ops::add(s, w[0].clone(), ops::constant(s, 1i32)), ops::add(&ps, w[1].clone(), p)]
                },
                10,
            )
            .unwrap();
            vec![ops::add(s, i, ops::constant(s, 1i32)), ops::add(s, v[1].clone(), inner[1].clone())]
        },
        10,
    )
    .unwrap();
    let sess = GrpcSession::new(&c.target("worker:0"), s.graph()).unwrap();
    let run =
        |o: &ferroflow_graph::Output, k: i32| f32_of(&sess.run(&[(&n, Tensor::scalar(k))], &[o], &[]).unwrap()[0]);
    let mut want = 0.0f32;
    for k in 0..6 {
        assert_eq!(run(&out[1], k), want, "n = {k}");
        want = want * 2.0 + 1.0 + k as f32;
    }
    let nested_want = |k: i32| (0..k).map(|i| (0..=i).map(|j| (j * i) as f32).sum::<f32>()).sum::<f32>();
    for k in [0, 1, 4, 7] {
        assert_eq!(run(&nested[1], k), nested_want(k), "nested, n = {k}");
    }
}

#[test]
fn an_error_in_the_remote_part_of_a_loop_ends_the_step_and_the_session_goes_on() {
    let c = Cluster::start(&[("ps", 1), ("worker", 1)]);
    let s = Scope::new_root();
    let wk = s.with_device("/job:worker/task:0");
    let n = ops::placeholder(&wk, DataType::Int32, Some(&[]));
    // log(2 - i) on the ps is -inf at i = 2: CheckNumerics fails in the third iteration.
    let out = while_loop_v1(
        &wk,
        &[ops::constant(&wk, 0i32), ops::constant(&wk, 0.0f32)],
        std::slice::from_ref(&n),
        |s, v, inv| ops::less(s, v[0].clone(), inv[0].clone()),
        |s, v, _| {
            let ps = s.with_device(PS);
            let x = ops::sub(&ps, ops::constant(&ps, 2.0f32), ops::cast(&ps, v[0].clone(), DataType::Float));
            let l = ps.op("CheckNumerics").input(ops::log(&ps, x)).attr("message", ferroflow_core::attr::string("log"));
            let l = l.try_build().unwrap().output(0);
            vec![ops::add(s, v[0].clone(), ops::constant(s, 1i32)), ops::add(s, v[1].clone(), l)]
        },
        1,
    )
    .unwrap();
    let sess = GrpcSession::new(&c.target("worker:0"), s.graph()).unwrap();
    let ok = sess.run(&[(&n, Tensor::scalar(2))], &[&out[1]], &[]).unwrap();
    assert!((f32_of(&ok[0]) - 2f32.ln()).abs() < 1e-6);
    let t0 = std::time::Instant::now();
    let e = sess.run(&[(&n, Tensor::scalar(5))], &[&out[1]], &[]).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument, "{e}");
    assert!(e.message.contains("log"), "{e}");
    assert!(t0.elapsed() < std::time::Duration::from_secs(30), "the failed step ended promptly");
    let again = sess.run(&[(&n, Tensor::scalar(1))], &[&out[1]], &[]).unwrap();
    assert!((f32_of(&again[0]) - 2f32.ln()).abs() < 1e-6);
}
