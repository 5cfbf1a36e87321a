//! In-process clusters (several Servers in this process, each on its own 127.0.0.1 port):
//! steps across tasks, feeds and fetches, variables on a ps shared between workers' sessions,
//! large tensors, shutdown.

mod common;

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
    let c = Cluster::start(&[("ps", 1), ("worker", 1)]);
    let s = Scope::new_root();
    let ps = s.with_device("/job:ps/task:0");
    let v = ops::var_handle_op(&ps.sub("v"), DataType::Float, Some(&[]), "", "v");
    let read = ops::read_variable_op(&ps, v.clone(), DataType::Float);
    let bump = ops::assign_add_variable_op(&ps, v.clone(), ops::constant(&ps, 1.0f32));
    let init = ops::assign_variable_op(&ps, v, ops::constant(&ps, 5.0f32));
    let doubled = ops::mul(&s.with_device("/job:worker/task:0"), read.clone(), ops::constant(&s, 2.0f32));
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
    let c = Cluster::start(&[("ps", 1), ("worker", 1)]);
    let s = Scope::new_root();
    let ps = s.with_device("/job:ps/task:0");
    let v = ops::var_handle_op(&ps.sub("v"), DataType::Float, Some(&[2]), "", "v");
    let x = ops::placeholder(&ps, DataType::Float, Some(&[2]));
    let set = ops::assign_variable_op(&ps, v.clone(), x.clone());
    let read = ops::read_variable_op(&ps, v, DataType::Float);
    let on_worker = ops::mul(&s.with_device("/job:worker/task:0"), x.clone(), ops::constant(&s, 10.0f32));
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
    let c = Cluster::start(&[("ps", 1), ("worker", 1)]);
    let s = Scope::new_root();
    let x = ops::placeholder(&s.with_device("/job:worker/task:0"), DataType::Float, None);
    let y = ops::identity(&s.with_device("/job:ps/task:0"), x.clone());
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

#[test]
fn cancelling_a_client_step_aborts_it_on_the_task_that_blocks() {
    // In-process master (the session's target is a server of this process) and over gRPC.
    for grpc_only in [false, true] {
        cancel_blocked_step(grpc_only);
    }
}

fn cancel_blocked_step(grpc_only: bool) {
    let c = Cluster::start(&[("ps", 1), ("worker", 1)]);
    let s = Scope::new_root();
    let ps = s.with_device("/job:ps/task:0");
    // A dequeue from an empty queue on the ps blocks until cancelled (no op timeout).
    let q = ops::fifo_queue(&ps, &[DataType::Float], &[vec![]], -1, "cancel_me", true);
    let x = ops::queue_dequeue(&ps, q, &[DataType::Float], -1).remove(0);
    let y = ops::identity(&s.with_device("/job:worker/task:0"), x);
    let sess = GrpcSession::new(&c.target("worker:0"), s.graph()).unwrap();
    assert!(sess.is_in_process());
    let sess = std::sync::Arc::new(if grpc_only { sess.over_grpc_only() } else { sess });
    assert_eq!(sess.is_in_process(), !grpc_only);
    let tok = ferroflow_kernels::CancelToken::new();
    let (s2, t2, name) = (sess.clone(), tok.clone(), format!("{}:0", y.node));
    let start = Instant::now();
    let h = std::thread::spawn(move || {
        let opts = RunOptions { timeout: Some(Duration::from_secs(60)), cancel: Some(t2), ..Default::default() };
        s2.run_by_name(&[], &[name], &[], &opts)
    });
    std::thread::sleep(Duration::from_millis(300));
    tok.cancel(ferroflow_core::Status::cancelled("stop waiting"));
    let e = h.join().unwrap().unwrap_err();
    assert_eq!(e.code, ferroflow_core::Code::Cancelled, "{e}");
    assert!(e.message.contains("stop waiting"), "{e}");
    assert!(start.elapsed() < Duration::from_secs(30), "cancellation took {:?}", start.elapsed());
    // The ps dropped the blocked step: the same queue still works for the next step.
    let enq = ops::queue_enqueue(
        &ps,
        ops::fifo_queue(&ps, &[DataType::Float], &[vec![]], -1, "cancel_me", true),
        vec![ops::constant(&ps, 7.0f32)],
        -1,
    );
    sess.run(&[], &[], &[&enq]).unwrap();
    assert_eq!(sess.run(&[], &[&y], &[]).unwrap()[0].scalar_value::<f32>().unwrap(), 7.0);
    // A token cancelled before the run fails it at once.
    let done = ferroflow_kernels::CancelToken::new();
    done.cancel(ferroflow_core::Status::cancelled("already"));
    let opts = RunOptions { timeout: None, cancel: Some(done), ..Default::default() };
    let e = sess.run_by_name(&[], &[format!("{}:0", y.node)], &[], &opts).unwrap_err();
    assert_eq!(e.code, ferroflow_core::Code::Cancelled, "{e}");
}

/// A step of an in-process session runs on the client's thread inside the server's
/// runtime: when another thread drops the server meanwhile, the step fails with an error
/// (the server's shutdown cancels it, or its runtime is gone) instead of hanging or
/// panicking the client.
#[test]
fn dropping_the_server_under_an_in_process_step_fails_the_step() {
    let server = Server::create_local_server().unwrap();
    let s = Scope::new_root();
    let q = ops::fifo_queue(&s, &[DataType::Float], &[vec![]], -1, "never_filled", true);
    let x = ops::queue_dequeue(&s, q, &[DataType::Float], -1).remove(0);
    let sess = GrpcSession::new(server.target(), s.graph()).unwrap();
    assert!(sess.is_in_process());
    let name = format!("{}:0", x.node);
    let start = Instant::now();
    let h = std::thread::spawn(move || {
        let opts = RunOptions { timeout: Some(Duration::from_secs(60)), cancel: None, ..Default::default() };
        sess.run_by_name(&[], &[name], &[], &opts)
    });
    std::thread::sleep(Duration::from_millis(300));
    drop(server);
    let e = h.join().expect("the client thread must not panic").unwrap_err();
    assert!(
        matches!(
            e.code,
            ferroflow_core::Code::Cancelled | ferroflow_core::Code::Aborted | ferroflow_core::Code::Unavailable
        ),
        "{e}"
    );
    assert!(start.elapsed() < Duration::from_secs(30), "the step took {:?} to fail", start.elapsed());
}

#[test]
fn a_down_task_is_named_with_its_address_and_the_refused_connection() {
    // Nothing listens on the ps's port: a step on the ps retries GetStatus until the
    // session's operation timeout, then says which task, where, and why (not just
    // "deadline").
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead_addr = dead.local_addr().unwrap().to_string();
    drop(dead);
    let cluster =
        ferroflow_distributed::ClusterSpec::new(&[("worker", vec!["127.0.0.1:0"]), ("ps", vec![dead_addr.as_str()])])
            .unwrap();
    let opts = ServerOptions { bind_host: Some("127.0.0.1".into()), ..Default::default() };
    let server = Server::new(&cluster, "worker", 0, opts).unwrap();
    let s = Scope::new_root();
    let c = ops::constant(&s.with_device("/job:ps"), 1.0f32);
    let config = ferroflow_core::proto::ConfigProto { operation_timeout_in_ms: 1500, ..Default::default() };
    let sess = GrpcSession::with_config(server.target(), s.graph(), config).unwrap();
    let e = sess.run(&[], &[&c], &[]).unwrap_err();
    assert_eq!(e.code, ferroflow_core::Code::DeadlineExceeded, "{e}");
    assert!(e.message.contains("/job:ps/replica:0/task:0") && e.message.contains(&dead_addr), "{e}");
    assert!(e.message.to_lowercase().contains("connection refused"), "{e}");
}

/// Reads until the server closes the connection; false if it is still open after `limit`.
fn closed_within(mut c: std::net::TcpStream, limit: Duration) -> bool {
    use std::io::Read;
    let end = Instant::now() + limit;
    let mut buf = [0u8; 1024];
    while Instant::now() < end {
        c.set_read_timeout(Some(end.saturating_duration_since(Instant::now()).max(Duration::from_millis(1)))).unwrap();
        match c.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue, // the server's own SETTINGS
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                return false
            }
            Err(_) => return true, // reset
        }
    }
    false
}

#[test]
fn a_connection_that_sends_no_request_is_closed() {
    use std::io::Write;
    let cluster = ferroflow_distributed::ClusterSpec::new(&[("w", vec!["127.0.0.1:0"])]).unwrap();
    let opts = ServerOptions {
        bind_host: Some("127.0.0.1".into()),
        handshake_timeout: Some(Duration::from_millis(300)),
        ..Default::default()
    };
    let server = Server::new(&cluster, "w", 0, opts).unwrap();
    let addr = format!("127.0.0.1:{}", server.port());
    // Silent after connecting; then the preface and SETTINGS but no request.
    let silent = std::net::TcpStream::connect(&addr).unwrap();
    let mut preface_only = std::net::TcpStream::connect(&addr).unwrap();
    preface_only.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0").unwrap();
    assert!(closed_within(silent, Duration::from_secs(10)), "a silent connection stays open");
    assert!(closed_within(preface_only, Duration::from_secs(10)), "a connection without a request stays open");
    // Real clients are unaffected.
    let s = Scope::new_root();
    let c = ops::constant(&s, 5.0f32);
    let sess = GrpcSession::new(server.target(), s.graph()).unwrap().over_grpc_only();
    assert_eq!(sess.run(&[], &[&c], &[]).unwrap()[0].scalar_value::<f32>().unwrap(), 5.0);
}

#[test]
fn a_task_that_comes_up_after_create_session_is_reached_by_the_first_step_that_uses_it() {
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let ps_addr = dead.local_addr().unwrap().to_string();
    drop(dead);
    let wl = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let w_addr = wl.local_addr().unwrap().to_string();
    let cluster =
        ferroflow_distributed::ClusterSpec::new(&[("worker", vec![w_addr.as_str()]), ("ps", vec![ps_addr.as_str()])])
            .unwrap();
    let worker =
        Server::new(&cluster, "worker", 0, ServerOptions { listener: Some(wl), ..Default::default() }).unwrap();
    let s = Scope::new_root();
    let local = ops::constant(&s, 3.0f32);
    let on_ps = ops::mul(
        &s.with_device("/job:ps/task:0"),
        ops::constant(&s.with_device("/job:ps/task:0"), 2.0f32),
        local.clone(),
    );
    let sess = GrpcSession::new(worker.target(), s.graph()).unwrap();
    let start = Instant::now();
    assert_eq!(sess.run(&[], &[&local], &[]).unwrap()[0].scalar_value::<f32>().unwrap(), 3.0);
    assert!(start.elapsed() < Duration::from_secs(1), "the down ps was waited for: {:?}", start.elapsed());
    // The ps comes up; the first step that needs it reaches it.
    let l = std::net::TcpListener::bind(&ps_addr).unwrap();
    let _ps = Server::new(&cluster, "ps", 0, ServerOptions { listener: Some(l), ..Default::default() }).unwrap();
    assert_eq!(sess.run(&[], &[&on_ps], &[]).unwrap()[0].scalar_value::<f32>().unwrap(), 6.0);
    assert_eq!(sess.run(&[], &[&on_ps, &local], &[]).unwrap()[0].scalar_value::<f32>().unwrap(), 6.0);
}
