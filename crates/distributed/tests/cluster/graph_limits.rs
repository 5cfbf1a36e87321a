//! Limits on graph size (issue #22): a session graph over the master's limits
//! (CreateSession, ExtendSession) and a graph over the worker's (RegisterGraph) are
//! refused with RESOURCE_EXHAUSTED naming the graph, the count, the limit and the flag that
//! raises it; the task keeps serving, and graphs within the limits still run.

use crate::common;

use ferroflow_runtime::StepRunner;
use std::time::Duration;

use common::rt;
use ferroflow_core::proto::*;
use ferroflow_core::{attr, Code, Tensor};
use ferroflow_distributed::{
    endpoint, master_client, worker_client, ClusterSpec, GraphLimits, GrpcSession, Server, ServerOptions,
};
use ferroflow_graph::{ops, Scope};

const LIMITS: GraphLimits = GraphLimits { max_nodes: 50, max_bytes: 8 << 10 };

fn server() -> Server {
    let mut opts = ServerOptions::default();
    opts.master.graph_limits = LIMITS;
    opts.worker.graph_limits = LIMITS;
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = format!("127.0.0.1:{}", l.local_addr().unwrap().port());
    opts.listener = Some(l);
    let spec = ClusterSpec::new(&[("localhost", vec![addr.as_str()])]).unwrap();
    Server::new(&spec, "localhost", 0, opts).unwrap()
}

/// A step on `target` that must still work.
fn still_serves(target: &str) {
    let s = Scope::new_root();
    let c = ops::mul(&s, ops::constant(&s, 6.0f32), ops::constant(&s, 7.0f32));
    let sess = GrpcSession::new(target, s.graph()).unwrap();
    assert_eq!(sess.run(&[], &[&c], &[]).unwrap()[0].scalar_value::<f32>().unwrap(), 42.0);
}

fn konst(name: &str, value: Tensor, device: &str) -> NodeDef {
    let mut n = NodeDef { name: name.into(), op: "Const".into(), device: device.into(), ..Default::default() };
    n.attr.insert("dtype".into(), attr::ty(value.dtype()));
    n.attr.insert("value".into(), attr::tensor(&value));
    n
}

/// `n` scalar constants named `c0`, `c1`, ... on `device`.
fn consts(n: usize, device: &str) -> Vec<NodeDef> {
    (0..n).map(|i| konst(&format!("c{i}"), Tensor::scalar(i as f32), device)).collect()
}

fn code_of(e: &tonic::Status) -> Code {
    Code::from_i32(e.code() as i32)
}

fn check(e: &tonic::Status, starts: &str, parts: &[&str]) {
    assert_eq!(code_of(e), Code::ResourceExhausted, "{}", e.message());
    assert!(e.message().contains(starts), "{}", e.message());
    for p in parts {
        assert!(e.message().contains(p), "missing '{p}' in: {}", e.message());
    }
}

#[test]
fn too_large_graphs_are_refused_and_the_task_still_answers() {
    let server = server();
    let rt = rt();
    let ch = {
        let _in_runtime = rt.enter();
        endpoint(server.target(), Duration::from_secs(2)).unwrap().connect_lazy()
    };
    rt.block_on(async {
        let mut m = master_client(ch.clone());
        // CreateSession: 51 nodes.
        let g = GraphDef { node: consts(51, ""), ..Default::default() };
        let e = m.create_session(CreateSessionRequest { graph_def: Some(g), ..Default::default() }).await.unwrap_err();
        check(
            &e,
            "CreateSession: the session's graph has 51 nodes",
            &["limit of 50 nodes per graph", "--max_graph_nodes"],
        );
        assert_eq!(server.master().num_sessions(), 0, "no session is created");

        // CreateSession: one constant of 16 KiB.
        let big = konst("big", Tensor::vec(vec![0.5f32; 4096]), "");
        let g = GraphDef { node: vec![big.clone()], ..Default::default() };
        let e = m.create_session(CreateSessionRequest { graph_def: Some(g), ..Default::default() }).await.unwrap_err();
        check(
            &e,
            "CreateSession: the session's graph is 16,",
            &["limit of 8,192 bytes per graph", "--max_graph_bytes"],
        );

        // ExtendSession past the limit: refused, the session keeps its graph and version.
        let g = GraphDef { node: consts(30, ""), ..Default::default() };
        let h = common::new_session(&mut m, g).await;
        let more = GraphDef {
            node: (30..51).map(|i| konst(&format!("c{i}"), 1.0f32.into(), "")).collect(),
            ..Default::default()
        };
        let req = ExtendSessionRequest { session_handle: h.clone(), graph_def: Some(more), current_graph_version: 0 };
        let e = m.extend_session(req).await.unwrap_err();
        check(&e, &format!("ExtendSession: the graph of session {h} has 51 nodes"), &["--max_graph_nodes"]);
        let ok = GraphDef { node: consts(50, "")[30..].to_vec(), ..Default::default() };
        let req = ExtendSessionRequest { session_handle: h.clone(), graph_def: Some(ok), current_graph_version: 0 };
        assert_eq!(m.extend_session(req).await.unwrap().into_inner().new_graph_version, 1, "50 nodes fit");
        let small = GraphDef { node: consts(1, ""), ..Default::default() };
        let h2 = common::new_session(&mut m, small).await;
        let req = ExtendSessionRequest {
            session_handle: h2.clone(),
            graph_def: Some(GraphDef { node: vec![big.clone()], ..Default::default() }),
            current_graph_version: 0,
        };
        let e = m.extend_session(req).await.unwrap_err();
        check(
            &e,
            &format!("ExtendSession: the graph of session {h2} is 16,"),
            &["bytes serialized", "--max_graph_bytes"],
        );
        let run = RunStepRequest { session_handle: h.clone(), fetch: vec!["c49:0".into()], ..Default::default() };
        let r = m.run_step(run).await.unwrap().into_inner();
        assert_eq!(
            Tensor::from_proto(r.tensor[0].tensor.as_ref().unwrap()).unwrap().scalar_value::<f32>().unwrap(),
            49.0
        );

        // RegisterGraph on the worker.
        let mut w = worker_client(ch.clone());
        let device = "/job:localhost/replica:0/task:0/device:CPU:0";
        let req = RegisterGraphRequest {
            graph_def: Some(GraphDef { node: consts(51, device), ..Default::default() }),
            ..Default::default()
        };
        let e = w.register_graph(req).await.unwrap_err();
        check(
            &e,
            "RegisterGraph on /job:localhost/replica:0/task:0: the graph has 51 nodes",
            &["limit of 50 nodes per graph", "--max_graph_nodes"],
        );
        let mut big = big.clone();
        big.device = device.into();
        let req = RegisterGraphRequest {
            graph_def: Some(GraphDef { node: vec![big], ..Default::default() }),
            ..Default::default()
        };
        check(
            &w.register_graph(req).await.unwrap_err(),
            "RegisterGraph on",
            &["bytes serialized", "--max_graph_bytes"],
        );
        let req = RegisterGraphRequest {
            graph_def: Some(GraphDef { node: consts(50, device), ..Default::default() }),
            ..Default::default()
        };
        assert!(!w.register_graph(req).await.unwrap().into_inner().graph_handle.is_empty());
    });
    still_serves(server.target());
}
