//! Worker sessions and the masters that create them.

use crate::common;

use std::time::Duration;

use common::{rt, Cluster};
use ferroflow_core::proto::*;
use ferroflow_core::{attr, DataType, Tensor};
use ferroflow_distributed::{endpoint, worker_client};

/// TensorFlow's rule: a CreateWorkerSession from a master task under a new incarnation
/// (the master restarted) drops that master's older sessions; other masters' stay.
#[test]
fn a_restarted_master_s_old_worker_sessions_are_dropped() {
    let c = Cluster::start(&[("ps", 1), ("worker", 1)]);
    rt().block_on(async {
        let ch = endpoint(&c.target("ps:0"), Duration::from_secs(2)).unwrap().connect_lazy();
        let mut w = worker_client(ch);
        let create = |handle: &str, master: &str, inc: i64| CreateWorkerSessionRequest {
            session_handle: handle.into(),
            master_task: master.into(),
            master_incarnation: inc,
            ..Default::default()
        };
        let register = |handle: &str| {
            let mut x = NodeDef { name: "x".into(), op: "Const".into(), ..Default::default() };
            x.attr.insert("dtype".into(), attr::ty(DataType::Float));
            x.attr.insert("value".into(), attr::tensor(&Tensor::scalar(1.0f32)));
            RegisterGraphRequest {
                session_handle: handle.into(),
                create_worker_session_called: true,
                graph_def: Some(GraphDef { node: vec![x], ..Default::default() }),
                ..Default::default()
            }
        };
        let m = "/job:worker/replica:0/task:0";
        w.create_worker_session(create("old", m, 11)).await.unwrap();
        w.create_worker_session(create("other", "/job:ps/replica:0/task:0", 5)).await.unwrap();
        w.create_worker_session(create("same", m, 11)).await.unwrap();
        w.register_graph(register("old")).await.unwrap();
        // The master comes back with a new incarnation.
        w.create_worker_session(create("new", m, 12)).await.unwrap();
        for gone in ["old", "same"] {
            let e = w.register_graph(register(gone)).await.unwrap_err();
            assert_eq!(e.code(), tonic::Code::Aborted, "{gone}: {}", e.message());
        }
        w.register_graph(register("other")).await.unwrap();
        w.register_graph(register("new")).await.unwrap();
    });
}

/// A master holds at most `max_sessions` sessions (CreateSession beyond it is
/// RESOURCE_EXHAUSTED naming the flag), and with `session_gc` closes those left unused; a
/// later call on one is told it was closed and why (issue #42).
#[test]
fn sessions_are_capped_and_idle_ones_are_closed() {
    let c = Cluster::start_with(&[("worker", 1)], |_, _| {
        let mut o = ferroflow_distributed::ServerOptions::default();
        o.master.max_sessions = 3;
        o.master.session_gc = Some(Duration::from_millis(1500));
        o
    });
    rt().block_on(async {
        let ch = endpoint(&c.target("worker:0"), Duration::from_secs(5)).unwrap().connect_lazy();
        let mut m = ferroflow_distributed::master_client(ch);
        let mut x = NodeDef { name: "x".into(), op: "Const".into(), ..Default::default() };
        x.attr.insert("dtype".into(), attr::ty(DataType::Float));
        x.attr.insert("value".into(), attr::tensor(&Tensor::scalar(1.0f32)));
        let graph = GraphDef { node: vec![x], ..Default::default() };
        let mut handles = Vec::new();
        for _ in 0..3 {
            handles.push(common::new_session(&mut m, graph.clone()).await);
        }
        let req = CreateSessionRequest { graph_def: Some(graph.clone()), ..Default::default() };
        let e = m.create_session(req).await.unwrap_err();
        assert_eq!(e.code(), tonic::Code::ResourceExhausted, "{e:?}");
        assert!(e.message().contains("3 open sessions") && e.message().contains("--max_sessions"), "{e:?}");
        // Keep the first one in use; the others go idle and are closed.
        let run = |h: &str| RunStepRequest {
            session_handle: h.into(),
            fetch: vec!["x:0".into()],
            store_errors_in_response_body: true,
            ..Default::default()
        };
        let start = std::time::Instant::now();
        while start.elapsed() < Duration::from_millis(3500) {
            let r = m.run_step(run(&handles[0])).await.unwrap().into_inner();
            assert_eq!(r.status_code, 0, "{}", r.status_error_message);
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        let r = m.run_step(run(&handles[1])).await.unwrap().into_inner();
        assert_eq!(r.status_code, ferroflow_core::Code::FailedPrecondition as i32, "{}", r.status_error_message);
        assert!(r.status_error_message.contains("--session_gc_seconds"), "{}", r.status_error_message);
        // Room again for new sessions.
        let h = common::new_session(&mut m, graph.clone()).await;
        let r = m.run_step(run(&h)).await.unwrap().into_inner();
        assert_eq!(r.status_code, 0, "{}", r.status_error_message);
    });
}
