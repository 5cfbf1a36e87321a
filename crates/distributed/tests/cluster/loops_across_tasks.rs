//! TensorFlow 1.x while loops (`while_loop_v1`) whose body runs on two tasks: the master's
//! partitioner adds control loops on the receiving task and tensors sent inside the loop are
//! keyed by frame instance and iteration.

use crate::common;

use common::Cluster;
use ferroflow_core::{Code, DataType, Tensor};
use ferroflow_distributed::GrpcSession;
use ferroflow_graph::{ops, while_loop_v1, Scope};
use ferroflow_runtime::StepRunner;

const PS: &str = "/job:ps/task:0";

fn f32_of(t: &Tensor) -> f32 {
    t.scalar_value::<f32>().unwrap()
}

#[test]
fn a_loop_body_on_two_tasks_gives_the_single_task_result() {
    let (c, s, _, wk) = common::ps_and_worker();
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
    let (c, s, _, wk) = common::ps_and_worker();
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

/// TensorFlow 2's functional `While`, `If` and `StatefulPartitionedCall` whose bodies put
/// ops on the ps while the call is on the worker: the master lowers them into frames and
/// `Switch`/`Merge` before placement, so the body's ops run where they ask to.
#[test]
fn functional_calls_whose_bodies_span_tasks_are_lowered_and_run_across_tasks() {
    use ferroflow_core::attr;
    use ferroflow_graph::define_function;
    let (c, s, ps, wk) = common::ps_and_worker();
    let h = ops::var_handle_op(&ps.sub("v"), DataType::Float, Some(&[]), "", "lowered_v");
    let init = ops::assign_variable_op(&ps, h.clone(), ops::constant(&ps, 0.0f32));
    // cond(i, acc, v) = i < 4; body: acc += read(v) + i (the add on the ps), v += 1.
    let types = [DataType::Int32, DataType::Float, DataType::Resource];
    let cond = define_function(s.graph(), "lc_cond", &types, |fs, a| {
        Ok(vec![ops::less(fs, a[0].clone(), ops::constant(fs, 4i32))])
    })
    .unwrap();
    let body = define_function(s.graph(), "lc_body", &types, |fs, a| {
        let on_ps = fs.with_device(PS);
        let r = ops::read_variable_op(&on_ps, a[2].clone(), DataType::Float);
        // The update waits for the read, so each iteration reads v before adding 1.
        let up =
            ops::assign_add_variable_op(&on_ps.with_control_deps(&[&r]), a[2].clone(), ops::constant(&on_ps, 1.0f32));
        let x = ops::add(&on_ps, r, ops::cast(&on_ps, a[0].clone(), DataType::Float));
        let acc = ops::add(&fs.with_control_deps(&[&up]), a[1].clone(), x);
        Ok(vec![ops::add(fs, a[0].clone(), ops::constant(fs, 1i32)), acc, a[2].clone()])
    })
    .unwrap();
    let w = wk
        .op("While")
        .input_list(vec![ops::constant(&wk, 0i32), ops::constant(&wk, 0.0f32), h.clone()])
        .attr("T", attr::list_type(&types))
        .attr("cond", cond.attr())
        .attr("body", body.attr())
        .attr("parallel_iterations", attr::int(1))
        .try_build()
        .unwrap();
    // If(p, x): then = x * 10 on the ps, else = x - 1 on the worker.
    let then_f = define_function(s.graph(), "lc_then", &[DataType::Float], |fs, a| {
        let on_ps = fs.with_device(PS);
        Ok(vec![ops::mul(&on_ps, a[0].clone(), ops::constant(&on_ps, 10.0f32))])
    })
    .unwrap();
    let else_f = define_function(s.graph(), "lc_else", &[DataType::Float], |fs, a| {
        Ok(vec![ops::sub(fs, a[0].clone(), ops::constant(fs, 1.0f32))])
    })
    .unwrap();
    let p = ops::placeholder(&wk, DataType::Bool, Some(&[]));
    let x = ops::constant(&wk, 3.0f32);
    let iff = wk
        .op("If")
        .input(p.clone())
        .input_list(vec![x.clone()])
        .attr("Tcond", attr::ty(DataType::Bool))
        .attr("Tin", attr::list_type(&[DataType::Float]))
        .attr("Tout", attr::list_type(&[DataType::Float]))
        .attr("then_branch", then_f.attr())
        .attr("else_branch", else_f.attr())
        .try_build()
        .unwrap();
    let call = wk
        .op("StatefulPartitionedCall")
        .input_list(vec![x])
        .attr("Tin", attr::list_type(&[DataType::Float]))
        .attr("Tout", attr::list_type(&[DataType::Float]))
        .attr("f", then_f.attr())
        .try_build()
        .unwrap();
    let sess = GrpcSession::new(&c.target("worker:0"), s.graph()).unwrap();
    sess.run(&[], &[], &[&init]).unwrap();
    // acc = sum over i < 4 of (v_i + i) with v_i = i: 0 + 2 + 4 + 6.
    let r =
        sess.run(&[(&p, Tensor::scalar(true))], &[&w.output(1), &w.output(0), &iff.output(0), &call.output(0)], &[]);
    let r = r.unwrap();
    assert_eq!((f32_of(&r[0]), r[1].scalar_value::<i32>().unwrap()), (12.0, 4));
    assert_eq!((f32_of(&r[2]), f32_of(&r[3])), (30.0, 30.0));
    let r = sess.run(&[(&p, Tensor::scalar(false))], &[&iff.output(0)], &[]).unwrap();
    assert_eq!(f32_of(&r[0]), 2.0);
    let v = sess.run(&[], &[&ops::read_variable_op(&ps, h, DataType::Float)], &[]);
    assert_eq!(f32_of(&v.unwrap()[0]), 4.0, "the body's updates happened on the ps");
}

/// A cycle that is not a loop, spanning two tasks: split into partitions, the
/// `_Send`/`_Recv` pairs would hide it and the step would wait for itself until its
/// deadline. It is refused at once, naming the nodes of the cycle (issue #42).
#[test]
fn a_cycle_across_tasks_is_refused_at_once_naming_its_nodes() {
    use ferroflow_core::attr;
    use ferroflow_core::proto::{CreateSessionRequest, GraphDef, NodeDef, RunStepRequest};
    let c = Cluster::start(&[("ps", 1), ("worker", 1)]);
    let node = |name: &str, op: &str, device: &str, inputs: &[&str]| {
        let mut n = NodeDef {
            name: name.into(),
            op: op.into(),
            device: device.into(),
            input: inputs.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        };
        n.attr.insert("T".into(), attr::ty(DataType::Float));
        n
    };
    let mut x = node("x", "Const", "/job:worker/task:0", &[]);
    x.attr.remove("T");
    x.attr.insert("dtype".into(), attr::ty(DataType::Float));
    x.attr.insert("value".into(), attr::tensor(&Tensor::scalar(1.0f32)));
    let g = GraphDef {
        node: vec![
            x,
            node("a", "AddV2", PS, &["x", "b"]),
            node("b", "Neg", "/job:worker/task:0", &["a"]),
            node("out", "Identity", "/job:worker/task:0", &["b"]),
        ],
        ..Default::default()
    };
    let rt = common::rt();
    let start = std::time::Instant::now();
    let (code, msg) = rt.block_on(async {
        let ch = ferroflow_distributed::endpoint(&c.target("worker:0"), std::time::Duration::from_secs(5))
            .unwrap()
            .connect_lazy();
        let mut m = ferroflow_distributed::master_client(ch);
        let req = CreateSessionRequest { graph_def: Some(g), ..Default::default() };
        let h = match m.create_session(req).await {
            Ok(r) => r.into_inner().session_handle,
            Err(e) => return (Code::from_i32(e.code() as i32), e.message().to_string()),
        };
        let req = RunStepRequest {
            session_handle: h,
            fetch: vec!["out:0".into()],
            store_errors_in_response_body: true,
            ..Default::default()
        };
        let r = m.run_step(req).await.unwrap().into_inner();
        (Code::from_i32(r.status_code), r.status_error_message)
    });
    assert!(start.elapsed() < common::PROMPT, "took {:?}", start.elapsed());
    assert_eq!(code, Code::InvalidArgument, "{msg}");
    assert!(msg.contains("2 nodes in a cycle"), "{msg}");
    assert!(msg.contains("'a' (op AddV2, device '/job:ps/") && msg.contains("'b' (op Neg"), "{msg}");
    // The cluster still runs a good step.
    let s = Scope::new_root();
    let y = ops::mul(
        &s.with_device("/job:worker/task:0"),
        ops::constant(&s.with_device(PS), 6.0f32),
        ops::constant(&s, 7.0f32),
    );
    let sess = GrpcSession::new(&c.target("worker:0"), s.graph()).unwrap();
    assert_eq!(f32_of(&sess.run(&[], &[&y], &[]).unwrap()[0]), 42.0);
}
