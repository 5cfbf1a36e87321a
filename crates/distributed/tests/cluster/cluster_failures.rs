//! In-process clusters when something goes wrong: a client step cancelled while a task
//! blocks, a server dropped under an in-process step, a task that is down, a connection
//! that sends nothing, a task that comes up while CreateSession waits for it, one that comes
//! up after CreateSession.

use crate::common;

use ferroflow_runtime::StepRunner;
use std::time::{Duration, Instant};

use ferroflow_core::DataType;
use ferroflow_distributed::{GrpcSession, Server, ServerOptions};
use ferroflow_graph::{ops, Scope};
use ferroflow_runtime::RunOptions;

#[test]
fn cancelling_a_client_step_aborts_it_on_the_task_that_blocks() {
    // In-process master (the session's target is a server of this process) and over gRPC.
    for grpc_only in [false, true] {
        cancel_blocked_step(grpc_only);
    }
}

fn cancel_blocked_step(grpc_only: bool) {
    let (c, s, ps, wk) = common::ps_and_worker();
    // A dequeue from an empty queue on the ps blocks until cancelled (no op timeout).
    let q = ops::fifo_queue(&ps, &[DataType::Float], &[vec![]], -1, "cancel_me", true);
    let x = ops::queue_dequeue(&ps, q, &[DataType::Float], -1).remove(0);
    let y = ops::identity(&wk, x);
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
    // Port 1: never handed out by a bind to port 0 (a port freed here could be taken by
    // another test's server in this process and answer the step), and nothing listens there.
    let dead_addr = "127.0.0.1:1".to_string();
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

/// A worker + ps cluster whose ps is not up: the cluster, the ps's (free) address and the
/// worker's bound listener.
fn worker_with_a_down_ps() -> (ferroflow_distributed::ClusterSpec, String, std::net::TcpListener) {
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let ps_addr = dead.local_addr().unwrap().to_string();
    drop(dead);
    let wl = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let w_addr = wl.local_addr().unwrap().to_string();
    let cluster =
        ferroflow_distributed::ClusterSpec::new(&[("worker", vec![w_addr.as_str()]), ("ps", vec![ps_addr.as_str()])])
            .unwrap();
    (cluster, ps_addr, wl)
}

#[test]
fn a_task_that_comes_up_after_create_session_is_reached_by_the_first_step_that_uses_it() {
    let (cluster, ps_addr, wl) = worker_with_a_down_ps();
    // A master that does not wait at CreateSession for tasks to come up.
    let mut opts = ServerOptions { listener: Some(wl), ..Default::default() };
    opts.master.create_session_wait = Duration::ZERO;
    let worker = Server::new(&cluster, "worker", 0, opts).unwrap();
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

#[test]
fn create_session_waits_for_every_task_as_tensorflow_does() {
    // TensorFlow's start-up order: the session is created once every task of the cluster
    // answers, even one the graph does not use (here the ps, up 1.5 s later).
    let (cluster, ps_addr, wl) = worker_with_a_down_ps();
    let worker =
        Server::new(&cluster, "worker", 0, ServerOptions { listener: Some(wl), ..Default::default() }).unwrap();
    let (c2, a2) = (cluster.clone(), ps_addr.clone());
    let ps_up = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1500));
        let l = std::net::TcpListener::bind(&a2).unwrap();
        let server = Server::new(&c2, "ps", 0, ServerOptions { listener: Some(l), ..Default::default() }).unwrap();
        (server, Instant::now())
    });
    let s = Scope::new_root();
    let local = ops::constant(&s, 3.0f32);
    let sess = GrpcSession::new(worker.target(), s.graph()).unwrap();
    assert_eq!(sess.run(&[], &[&local], &[]).unwrap()[0].scalar_value::<f32>().unwrap(), 3.0);
    let ran = Instant::now();
    let (_ps, up) = ps_up.join().unwrap();
    assert!(ran >= up, "the first step ran {:?} before the ps came up", up - ran);

    // With device filters that leave the ps out, nothing waits for it.
    let (cluster, _, wl) = worker_with_a_down_ps();
    let worker =
        Server::new(&cluster, "worker", 0, ServerOptions { listener: Some(wl), ..Default::default() }).unwrap();
    let config =
        ferroflow_core::proto::ConfigProto { device_filters: vec!["/job:worker".into()], ..Default::default() };
    let sess = GrpcSession::with_config(worker.target(), s.graph(), config).unwrap();
    let start = Instant::now();
    assert_eq!(sess.run(&[], &[&local], &[]).unwrap()[0].scalar_value::<f32>().unwrap(), 3.0);
    assert!(start.elapsed() < Duration::from_secs(10), "a filtered-out task was waited for: {:?}", start.elapsed());

    // A task that never comes up holds CreateSession for the wait only; then the session
    // runs what does not need it.
    let (cluster, _, wl) = worker_with_a_down_ps();
    let mut opts = ServerOptions { listener: Some(wl), ..Default::default() };
    opts.master.create_session_wait = Duration::from_millis(800);
    let worker = Server::new(&cluster, "worker", 0, opts).unwrap();
    let sess = GrpcSession::new(worker.target(), s.graph()).unwrap();
    let start = Instant::now();
    assert_eq!(sess.run(&[], &[&local], &[]).unwrap()[0].scalar_value::<f32>().unwrap(), 3.0);
    let took = start.elapsed();
    assert!(took >= Duration::from_millis(700) && took < Duration::from_secs(20), "CreateSession took {took:?}");
}
