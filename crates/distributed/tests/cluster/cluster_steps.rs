//! In-process clusters (several Servers in this process, each on its own 127.0.0.1 port):
//! steps across tasks, feeds and fetches, variables on a ps shared between workers' sessions,
//! large tensors, shutdown (failures: `cluster_failures.rs` beside this file).

use crate::common;

use ferroflow_runtime::StepRunner;
use std::time::{Duration, Instant};

use common::Cluster;
use ferroflow_core::{DataType, Tensor};
use ferroflow_distributed::{server_info, shutdown_server, GrpcSession, Server, ServerOptions};
use ferroflow_graph::{ops, Scope};
use ferroflow_runtime::RunOptions;

#[test]
fn hello_world_on_a_local_server() {
    let server = Server::create_local_server().unwrap();
    assert!(server.target().starts_with("grpc://localhost:"), "{}", server.target());
    assert_ne!(server.port(), 0);
    let s = Scope::new_root();
    let hello = ops::constant(&s, Tensor::scalar(b"Hello, distributed ferroflow!".to_vec()));
    let sess = GrpcSession::new(server.target(), s.graph()).unwrap();
    let out = sess.run(&[], &[&hello], &[]).unwrap();
    assert_eq!(out[0].scalar_value::<Vec<u8>>().unwrap(), b"Hello, distributed ferroflow!");
    // The graph grows: ExtendSession sends only the new nodes.
    let x = ops::constant(&s, 2.0f32);
    let y = ops::mul(&s, x.clone(), x.clone());
    let out = sess.run(&[], &[&y, &hello], &[]).unwrap();
    assert_eq!(out[0].scalar_value::<f32>().unwrap(), 4.0);
    assert_eq!(sess.list_devices().unwrap()[0].name, "/job:localhost/replica:0/task:0/device:CPU:0");
    sess.close().unwrap();
}

#[test]
fn a_port_in_use_is_tensorflows_unknown_error() {
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port();
    let cluster =
        ferroflow_distributed::ClusterSpec::new(&[("w", vec![format!("127.0.0.1:{port}").as_str()])]).unwrap();
    let opts = ServerOptions { bind_host: Some("127.0.0.1".into()), ..Default::default() };
    let e = Server::new(&cluster, "w", 0, opts).err().expect("the port is taken");
    assert_eq!(e.code, ferroflow_core::Code::Unknown, "{e}");
    assert!(e.message.contains("Could not start gRPC server") && e.message.contains(&port.to_string()), "{e}");
}

#[test]
fn ps_and_two_workers_multiply() {
    let c = Cluster::start(&[("ps", 1), ("worker", 2)]);
    // Worker 0: a = 3 on the ps, b = 4 on worker 0 -> 12. Worker 1: 5 (ps) * 8 (worker 1) -> 40.
    for (w, (a, b), want) in [(0, (3.0f32, 4.0f32), 12.0f32), (1, (5.0, 8.0), 40.0)] {
        let s = Scope::new_root();
        let ps = s.with_device("/job:ps/task:0");
        let wk = s.with_device(&format!("/job:worker/task:{w}"));
        let x = ops::constant(&ps, a);
        let y = ops::constant(&wk, b);
        let z = ops::mul(&wk, x, y);
        let sess = GrpcSession::new(&c.target(&format!("worker:{w}")), s.graph()).unwrap();
        assert_eq!(sess.run(&[], &[&z], &[]).unwrap()[0].scalar_value::<f32>().unwrap(), want);
        let devs: Vec<String> = sess.list_devices().unwrap().into_iter().map(|d| d.name).collect();
        assert_eq!(devs.len(), 3, "{devs:?}");
    }
}

#[test]
fn feeds_fetches_and_cross_task_chains() {
    let c = Cluster::start(&[("ps", 2), ("worker", 1)]);
    let s = Scope::new_root();
    let x = ops::placeholder(&s.with_device("/job:worker/task:0"), DataType::Float, Some(&[3]));
    let on_ps0 =
        ops::mul(&s.with_device("/job:ps/task:0"), x.clone(), ops::constant(&s.with_device("/job:ps/task:0"), 2.0f32));
    let on_ps1 = ops::add(
        &s.with_device("/job:ps/task:1"),
        on_ps0.clone(),
        ops::constant(&s.with_device("/job:ps/task:1"), 1.0f32),
    );
    let sess = GrpcSession::new(&c.target("worker:0"), s.graph()).unwrap();
    for k in 0..3 {
        let v = Tensor::vec(vec![1.0f32 + k as f32, 2.0, 3.0]);
        let out = sess.run(&[(&x, v)], &[&on_ps1, &on_ps0, &x], &[]).unwrap();
        assert_eq!(out[0].as_slice::<f32>().unwrap(), &[3.0 + 2.0 * k as f32, 5.0, 7.0]);
        assert_eq!(out[1].as_slice::<f32>().unwrap(), &[2.0 + 2.0 * k as f32, 4.0, 6.0]);
        assert_eq!(out[2].as_slice::<f32>().unwrap(), &[1.0 + k as f32, 2.0, 3.0]);
    }
    // Fetch names are echoed exactly, duplicates included.
    let out = sess
        .run_by_name(
            &[("Placeholder".into(), Tensor::vec(vec![0.0f32; 3]))],
            &["Placeholder".into(), "Placeholder:0".into()],
            &[],
            &RunOptions::default(),
        )
        .unwrap();
    assert_eq!(out.len(), 2);
    // Every step's tables are cleaned up on every task.
    let deadline = Instant::now() + common::PROMPT;
    while c.servers.values().any(|s| s.worker().num_steps() > 0) {
        assert!(Instant::now() < deadline, "step tables were not cleaned up");
        std::thread::sleep(Duration::from_millis(10));
    }
    // ferroflow workers released the successful steps themselves: no CleanupGraph RPC.
    for (name, s) in &c.servers {
        assert_eq!(s.worker().num_cleanup_graph_calls(), 0, "{name}");
    }
    // A failed step is cleaned up on every task by CleanupGraph.
    let y = ops::placeholder(&s.with_device("/job:worker/task:0"), DataType::Float, None);
    let y1 = ops::add(&s.with_device("/job:ps/task:0"), y.clone(), on_ps0.clone());
    let bad = ops::reshape(&s.with_device("/job:ps/task:1"), y1, ops::constant(&s, Tensor::vec(vec![2i32])));
    let three = || Tensor::vec(vec![1.0f32, 2.0, 3.0]);
    let e = sess.run(&[(&x, three()), (&y, three())], &[&bad], &[]).unwrap_err();
    assert!(e.message.contains("Reshape") && e.message.contains("/job:ps/replica:0/task:1"), "{e}");
    let deadline = Instant::now() + common::PROMPT;
    while ["ps:0", "ps:1"].iter().any(|k| c.server(k).worker().num_cleanup_graph_calls() == 0)
        || c.servers.values().any(|s| s.worker().num_steps() > 0)
    {
        assert!(Instant::now() < deadline, "the failed step was not cleaned up");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn ps_variables_are_shared_between_worker_sessions() {
    let c = Cluster::start(&[("ps", 1), ("worker", 2)]);
    let build = || {
        let s = Scope::new_root();
        let ps = s.with_device("/job:ps/task:0");
        let v = ops::var_handle_op(&ps.sub("w"), DataType::Float, Some(&[2]), "", "w");
        let init = ops::assign_variable_op(&ps, v.clone(), ops::constant(&ps, Tensor::vec(vec![1.0f32, 2.0])));
        // The read is colocated with the variable (TensorFlow's rule); its consumer is not.
        let read = ops::read_variable_op(&ps, v.clone(), DataType::Float);
        let read = ops::identity(&s.with_device("/job:worker/task:0"), read);
        (s, init, read)
    };
    let (s0, init, read0) = build();
    let sess0 = GrpcSession::new(&c.target("worker:0"), s0.graph()).unwrap();
    sess0.run(&[], &[], &[&init]).unwrap();
    assert_eq!(sess0.run(&[], &[&read0], &[]).unwrap()[0].as_slice::<f32>().unwrap(), &[1.0, 2.0]);
    // Another worker's session sees the ps variable without initializing it.
    let (s1, _, read1) = build();
    let sess1 = GrpcSession::new(&c.target("worker:1"), s1.graph()).unwrap();
    assert_eq!(sess1.run(&[], &[&read1], &[]).unwrap()[0].as_slice::<f32>().unwrap(), &[1.0, 2.0]);
    assert_eq!(c.server("ps:0").worker().resources().variables().len(), 1);
    sess0.close().unwrap();
    // Closing a session keeps ps variables; Reset clears them.
    assert_eq!(sess1.run(&[], &[&read1], &[]).unwrap()[0].as_slice::<f32>().unwrap(), &[1.0, 2.0]);
    GrpcSession::reset(&c.target("worker:1"), &[]).unwrap();
    assert!(c.server("ps:0").worker().resources().variables().is_empty());
}

#[test]
fn a_fetch_made_on_the_ps_comes_back_in_its_rungraph_reply() {
    let (c, s, ps, wk) = common::ps_and_worker();
    let v = ops::var_handle_op(&ps.sub("v"), DataType::Float, Some(&[]), "", "v");
    let read = ops::read_variable_op(&ps, v.clone(), DataType::Float);
    let bump = ops::assign_add_variable_op(&ps, v.clone(), ops::constant(&ps, 1.0f32));
    let init = ops::assign_variable_op(&ps, v, ops::constant(&ps, 5.0f32));
    let doubled = ops::mul(&wk, read.clone(), ops::constant(&s, 2.0f32));
    let sess = GrpcSession::new(&c.target("worker:0"), s.graph()).unwrap();
    sess.run(&[], &[], &[&init]).unwrap();
    let recvs = || {
        let w = c.server("ps:0").worker();
        w.num_recv_tensor_calls() + w.num_recv_tensor_batches().0
    };
    let before = recvs();
    for k in 0..3 {
        // Made on the ps, fetched through the worker: no RecvTensor from the ps.
        assert_eq!(sess.run(&[], &[&read], &[]).unwrap()[0].scalar_value::<f32>().unwrap(), 5.0 + k as f32);
        sess.run(&[], &[], &[&bump]).unwrap();
    }
    assert_eq!(recvs(), before, "the ps value travelled by RecvTensor");
    // A step that also uses the value on the worker: both fetches are right, and the
    // worker's copy still comes by RecvTensor.
    let out = sess.run(&[], &[&read, &doubled], &[]).unwrap();
    assert_eq!(out[0].scalar_value::<f32>().unwrap(), 8.0);
    assert_eq!(out[1].scalar_value::<f32>().unwrap(), 16.0);
    assert!(recvs() > before);
}

#[test]
fn a_feed_used_only_on_the_ps_goes_straight_to_it() {
    let (c, s, ps, wk) = common::ps_and_worker();
    let v = ops::var_handle_op(&ps.sub("v"), DataType::Float, Some(&[2]), "", "v");
    let x = ops::placeholder(&ps, DataType::Float, Some(&[2]));
    let set = ops::assign_variable_op(&ps, v.clone(), x.clone());
    let read = ops::read_variable_op(&ps, v, DataType::Float);
    let on_worker = ops::mul(&wk, x.clone(), ops::constant(&s, 10.0f32));
    let sess = GrpcSession::new(&c.target("worker:0"), s.graph()).unwrap();
    let pulls = || {
        c.server("worker:0").worker().num_recv_tensor_calls()
            + c.server("worker:0").worker().num_recv_tensor_batches().0
    };
    let before = pulls();
    for k in 0..3 {
        let val = Tensor::vec(vec![k as f32, 1.0]);
        sess.run(&[(&x, val)], &[], &[&set]).unwrap();
        assert_eq!(sess.run(&[], &[&read], &[]).unwrap()[0].as_slice::<f32>().unwrap(), &[k as f32, 1.0]);
    }
    // The ps never pulled the fed value from the worker.
    assert_eq!(pulls(), before, "the fed value travelled by RecvTensor");
    // Used on both tasks: the ps pulls it from the worker, and both uses see it.
    let out = sess.run(&[(&x, Tensor::vec(vec![4.0f32, 5.0]))], &[&on_worker], &[&set]).unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap(), &[40.0, 50.0]);
    assert_eq!(sess.run(&[], &[&read], &[]).unwrap()[0].as_slice::<f32>().unwrap(), &[4.0, 5.0]);
    assert!(pulls() > before);
}

#[test]
fn large_tensors_cross_tasks_both_ways() {
    let (c, s, ps, wk) = common::ps_and_worker();
    let x = ops::placeholder(&wk, DataType::Float, None);
    let y = ops::identity(&ps, x.clone());
    let sess = GrpcSession::new(&c.target("worker:0"), s.graph()).unwrap();
    // 16 Mi floats = 64 MiB: over tonic's 4 MiB default, both to and from the ps.
    let n = 16 << 20;
    let v: Vec<f32> = (0..n).map(|i| (i % 1000) as f32).collect();
    let out = sess.run(&[(&x, Tensor::vec(v))], &[&y], &[]).unwrap();
    let got = out[0].as_slice::<f32>().unwrap();
    assert_eq!(got.len(), n);
    assert_eq!((got[0], got[999], got[1000], got[n - 1]), (0.0, 999.0, 0.0, ((n - 1) % 1000) as f32));
}

#[test]
fn shutdown_over_rpc_and_idle_timeout() {
    let server = Server::create_local_server().unwrap();
    let info = server_info(server.target()).unwrap();
    assert_eq!(info.task, "/job:localhost/replica:0/task:0");
    assert_ne!(info.incarnation, 0);
    shutdown_server(server.target(), "test done").unwrap();
    let t = Instant::now();
    server.join().unwrap();
    assert!(t.elapsed() < common::PROMPT);
    assert!(server.is_stopped());

    let c = Cluster::start_with(&[("ps", 1)], |_, _| ServerOptions {
        idle_timeout: Some(Duration::from_millis(300)),
        ..Default::default()
    });
    let t = Instant::now();
    c.server("ps:0").join().unwrap();
    assert!(t.elapsed() >= Duration::from_millis(300) && t.elapsed() < common::PROMPT);
}
