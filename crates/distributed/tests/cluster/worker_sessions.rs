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
