//! A task that is down or a partition that fails: only the steps that need it fail, within
//! their deadline, naming the task; the cluster keeps serving.

use crate::common;

use std::time::{Duration, Instant};

use common::PROMPT;
use ferroflow_core::proto::ConfigProto;
use ferroflow_core::{Code, DataType};
use ferroflow_distributed::{ClusterSpec, GrpcSession, Server, ServerOptions};
use ferroflow_graph::{ops, Scope};
use ferroflow_runtime::StepRunner;

use super::bad_input::still_serves;

#[test]
fn a_task_that_is_down_fails_only_the_steps_that_use_it_naming_it() {
    let port = common::dead_port();
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let wport = l.local_addr().unwrap().port();
    let ps_addr = format!("127.0.0.1:{port}");
    let spec =
        ClusterSpec::new(&[("ps", vec![ps_addr.as_str()]), ("worker", vec![&format!("127.0.0.1:{wport}")])]).unwrap();
    let worker = Server::new(&spec, "worker", 0, ServerOptions { listener: Some(l), ..Default::default() }).unwrap();
    let s = Scope::new_root();
    let c = ops::constant(&s, 1.0f32);
    let on_ps = ops::constant(&s.with_device("/job:ps/task:0"), 2.0f32);
    let config = ConfigProto { operation_timeout_in_ms: 1500, ..Default::default() };
    let sess = GrpcSession::with_config(worker.target(), s.graph(), config).unwrap();
    // CreateSession waits for the down ps (TensorFlow's start-up order), for three quarters
    // of the operation timeout (TensorFlow: forever); then a step that does not use it runs.
    let t = Instant::now();
    assert_eq!(sess.run(&[], &[&c], &[]).unwrap()[0].scalar_value::<f32>().unwrap(), 1.0);
    assert!(t.elapsed() >= Duration::from_millis(1000) && t.elapsed() < PROMPT, "{:?}", t.elapsed());
    let t = Instant::now();
    assert_eq!(sess.run(&[], &[&c], &[]).unwrap()[0].scalar_value::<f32>().unwrap(), 1.0);
    assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
    // One that uses it waits for it within its deadline, then names it.
    let t = Instant::now();
    let e = sess.run(&[], &[&on_ps], &[]).unwrap_err();
    eprintln!("down task after {:?}: {e}", t.elapsed());
    assert!(t.elapsed() >= Duration::from_millis(1000) && t.elapsed() < PROMPT, "{:?}", t.elapsed());
    assert!(matches!(e.code, Code::Unavailable | Code::DeadlineExceeded), "{e}");
    assert!(e.message.contains("/job:ps/replica:0/task:0") && e.message.contains(&ps_addr), "{e}");
    assert!(e.message.to_lowercase().contains("connection refused"), "{e}");
    // The session still runs what does not need the ps.
    assert_eq!(sess.run(&[], &[&c], &[]).unwrap()[0].scalar_value::<f32>().unwrap(), 1.0);
    // With device filters the dead task is not contacted at all.
    let config = ConfigProto { device_filters: vec!["/job:worker".into()], ..Default::default() };
    let sess = GrpcSession::with_config(worker.target(), s.graph(), config).unwrap();
    assert_eq!(sess.run(&[], &[&c], &[]).unwrap()[0].scalar_value::<f32>().unwrap(), 1.0);
    // A step that needs the dead task fails naming it.
    let s2 = Scope::new_root();
    let on_ps = ops::constant(&s2.with_device("/job:ps/task:0"), 1.0f32);
    let sess = GrpcSession::with_config(
        worker.target(),
        s2.graph(),
        ConfigProto { device_filters: vec!["/job:worker".into()], ..Default::default() },
    )
    .unwrap();
    let e = sess.run(&[], &[&on_ps], &[]).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument, "{e}");
    assert!(e.message.contains("/job:ps/task:0"), "{e}");
    let sess = GrpcSession::with_config(
        worker.target(),
        s.graph(),
        ConfigProto { device_filters: vec!["/job:worker".into()], ..Default::default() },
    )
    .unwrap();
    assert_eq!(sess.run(&[], &[&c], &[]).unwrap()[0].scalar_value::<f32>().unwrap(), 1.0);
}

#[test]
fn a_failing_partition_ends_the_step_promptly() {
    let (c, s, ps, wk) = common::ps_and_worker();
    // Reading a variable that was never initialized fails on the ps; the worker waits for it.
    let v = ops::var_handle_op(&ps.sub("v"), DataType::Float, Some(&[]), "", "never_set");
    let read = ops::read_variable_op(&ps, v, DataType::Float);
    let out = ops::mul(&wk, read, ops::constant(&wk, 2.0f32));
    let sess = GrpcSession::new(&c.target("worker:0"), s.graph()).unwrap();
    let t = Instant::now();
    let e = sess.run(&[], &[&out], &[]).unwrap_err();
    assert!(t.elapsed() < PROMPT);
    assert!(!matches!(e.code, Code::Cancelled | Code::DeadlineExceeded), "the real error: {e}");
    assert!(e.message.contains("/job:ps/replica:0/task:0"), "names the task: {e}");
    // Tables are cleaned up and the cluster keeps working.
    still_serves(&c.target("worker:0"));
    let deadline = Instant::now() + PROMPT;
    while c.servers.values().any(|s| s.worker().num_steps() > 0) {
        assert!(Instant::now() < deadline, "step tables were not cleaned up");
        std::thread::sleep(Duration::from_millis(10));
    }
}
