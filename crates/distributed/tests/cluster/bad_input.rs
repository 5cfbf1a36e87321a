//! Bad input and failures never crash or hang a server: unknown handles, bad graphs,
//! malformed protobuf bytes, RecvTensor for a tensor that never comes, a task that is
//! down, a failing partition. After each, the server keeps serving.

use crate::common;

use ferroflow_runtime::StepRunner;
use std::time::{Duration, Instant};

use common::{rt, Cluster, PROMPT};
use ferroflow_core::proto::*;
use ferroflow_core::{attr, Code, DataType, Status, Tensor};
use ferroflow_distributed::{endpoint, master_client, worker_client, GrpcSession, Server};
use ferroflow_graph::{ops, Scope};
use tonic::transport::Channel;

fn channel(target: &str) -> Channel {
    endpoint(target, Duration::from_secs(2)).unwrap().connect_lazy()
}

fn code_of(e: &tonic::Status) -> Code {
    Code::from_i32(e.code() as i32)
}

/// Asserts that `client.method(request)`, sent with a 300 ms deadline that nothing meets,
/// ends at that deadline, promptly.
macro_rules! assert_times_out {
    ($client:ident.$method:ident($req:expr)) => {{
        let t = Instant::now();
        let mut req = tonic::Request::new($req);
        req.set_timeout(Duration::from_millis(300));
        let e = $client.$method(req).await.unwrap_err();
        assert!(matches!(code_of(&e), Code::DeadlineExceeded | Code::Cancelled), "{:?}: {}", e.code(), e.message());
        assert!(t.elapsed() < PROMPT);
    }};
}

/// A step on `target` that must still work.
pub(crate) fn still_serves(target: &str) {
    let s = Scope::new_root();
    let c = ops::mul(&s, ops::constant(&s, 6.0f32), ops::constant(&s, 7.0f32));
    let sess = GrpcSession::new(target, s.graph()).unwrap();
    assert_eq!(sess.run(&[], &[&c], &[]).unwrap()[0].scalar_value::<f32>().unwrap(), 42.0);
}

fn konst(name: &str, v: f32) -> NodeDef {
    let mut n = NodeDef { name: name.into(), op: "Const".into(), ..Default::default() };
    n.attr.insert("dtype".into(), attr::ty(DataType::Float));
    n.attr.insert("value".into(), attr::tensor(&Tensor::scalar(v)));
    n
}

fn run_req(handle: &str, fetch: &str, request_id: i64, in_body: bool) -> RunStepRequest {
    RunStepRequest {
        session_handle: handle.into(),
        fetch: vec![fetch.into()],
        request_id,
        store_errors_in_response_body: in_body,
        ..Default::default()
    }
}

/// RegisterGraph of `nodes` in the worker session "s".
fn register_in_s(nodes: Vec<NodeDef>) -> RegisterGraphRequest {
    RegisterGraphRequest {
        session_handle: "s".into(),
        create_worker_session_called: true,
        graph_def: Some(GraphDef { node: nodes, ..Default::default() }),
        ..Default::default()
    }
}

#[test]
fn unknown_closed_and_repeated() {
    let server = Server::create_local_server().unwrap();
    let rt = rt();
    rt.block_on(async {
        let mut m = master_client(channel(server.target()));
        let e = m.run_step(run_req("0123456789abcdef", "x:0", 0, false)).await.unwrap_err();
        assert_eq!(code_of(&e), Code::Aborted);
        assert!(e.message().contains("Session 0123456789abcdef is not found"), "{}", e.message());
        // In the body when asked.
        let r = m.run_step(run_req("nope", "x:0", 0, true)).await.unwrap().into_inner();
        assert_eq!(r.status_code, Code::Aborted as i32);

        let g = GraphDef { node: vec![konst("x", 1.5)], ..Default::default() };
        let h = common::new_session(&mut m, g).await;
        assert_eq!(h.len(), 16);
        assert!(h.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        let r = m.run_step(run_req(&h, "x", 77, true)).await.unwrap().into_inner();
        assert_eq!(r.status_code, 0, "{}", r.status_error_message);
        assert_eq!(r.tensor[0].name, "x", "reply names echo the request");
        let r = m.run_step(run_req(&h, "x", 77, true)).await.unwrap().into_inner();
        assert_eq!(r.status_code, Code::Aborted as i32, "repeated request id");
        assert!(r.status_error_message.contains("77"), "{}", r.status_error_message);
        // request_id 0 is never deduplicated.
        for _ in 0..2 {
            assert_eq!(m.run_step(run_req(&h, "x", 0, true)).await.unwrap().into_inner().status_code, 0);
        }
        // ExtendSession version check.
        let extend = |nodes: Vec<NodeDef>, version: i64| ExtendSessionRequest {
            session_handle: h.clone(),
            graph_def: Some(GraphDef { node: nodes, ..Default::default() }),
            current_graph_version: version,
        };
        let e = m.extend_session(extend(vec![], 5)).await.unwrap_err();
        assert_eq!(code_of(&e), Code::Aborted);
        let v = m.extend_session(extend(vec![konst("y", 2.0)], 0)).await.unwrap().into_inner().new_graph_version;
        assert_eq!(v, 1);
        // A duplicate node name is rejected.
        let e = m.extend_session(extend(vec![konst("y", 2.0)], 1)).await.unwrap_err();
        assert_eq!(code_of(&e), Code::InvalidArgument);
        m.close_session(CloseSessionRequest { session_handle: h.clone() }).await.unwrap();
        let r = m.run_step(run_req(&h, "x", 0, true)).await.unwrap().into_inner();
        assert_eq!(r.status_code, Code::FailedPrecondition as i32, "{}", r.status_error_message);
        // Callables on a closed session, and on one that never existed.
        let e =
            m.make_callable(MakeCallableRequest { session_handle: h.clone(), ..Default::default() }).await.unwrap_err();
        assert_eq!(code_of(&e), Code::FailedPrecondition, "{}", e.message());
        let e = m.run_callable(RunCallableRequest::default()).await.unwrap_err();
        assert_eq!(code_of(&e), Code::Aborted, "{}", e.message());
        // PartialRunSetup on a closed session, and on one that never existed.
        let e = m
            .partial_run_setup(PartialRunSetupRequest { session_handle: h.clone(), ..Default::default() })
            .await
            .unwrap_err();
        assert_eq!(code_of(&e), Code::FailedPrecondition, "{}", e.message());
        let e = m.partial_run_setup(PartialRunSetupRequest::default()).await.unwrap_err();
        assert_eq!(code_of(&e), Code::Aborted, "{}", e.message());
    });
    still_serves(server.target());
}

fn step_error(target: &str, nodes: Vec<NodeDef>, fetch: &str) -> Status {
    let rt = rt();
    rt.block_on(async {
        let mut m = master_client(channel(target));
        let g = GraphDef { node: nodes, ..Default::default() };
        let h = match m.create_session(CreateSessionRequest { graph_def: Some(g), ..Default::default() }).await {
            Ok(r) => r.into_inner().session_handle,
            Err(e) => return Status::new(code_of(&e), e.message()),
        };
        let r = m.run_step(run_req(&h, fetch, 0, true)).await.unwrap().into_inner();
        assert_ne!(r.status_code, 0, "the step should fail");
        Status::new(Code::from_i32(r.status_code), r.status_error_message)
    })
}

#[test]
fn bad_graphs_fail_with_the_node_named() {
    let c = Cluster::start(&[("ps", 1), ("worker", 1)]);
    let t = c.target("worker:0");
    let mut unknown = NodeDef { name: "mystery".into(), op: "NoSuchOp".into(), ..Default::default() };
    unknown.input = vec!["x".into()];
    let e = step_error(&t, vec![konst("x", 1.0), unknown], "mystery:0");
    assert!(e.message.contains("mystery") && e.message.contains("NoSuchOp"), "{e}");
    still_serves(&t);

    let mut bad_attr = konst("k", 1.0);
    bad_attr.attr.remove("value");
    let e = step_error(&t, vec![bad_attr], "k:0");
    assert!(e.message.contains("'k'"), "{e}");
    still_serves(&t);

    let mut bad_type =
        NodeDef { name: "m".into(), op: "Mul".into(), input: vec!["x".into(), "x".into()], ..Default::default() };
    bad_type.attr.insert("T".into(), attr::ty(DataType::Int32));
    let e = step_error(&t, vec![konst("x", 1.0), bad_type], "m:0");
    assert!(e.message.contains("'m'"), "{e}");
    still_serves(&t);

    for dev in ["/job:nope/task:7", "/job:ps/task:0/device:GPU:0", "garbage!!"] {
        let mut n = konst("placed", 1.0);
        n.device = dev.into();
        let e = step_error(&t, vec![n], "placed:0");
        assert_eq!(e.code, Code::InvalidArgument, "{dev}: {e}");
        assert!(e.message.contains("placed"), "{dev}: {e}");
        still_serves(&t);
    }

    let mut dangling =
        NodeDef { name: "d".into(), op: "Identity".into(), input: vec!["ghost".into()], ..Default::default() };
    dangling.attr.insert("T".into(), attr::ty(DataType::Float));
    let e = step_error(&t, vec![dangling], "d:0");
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("ghost"), "{e}");
    still_serves(&t);
}

#[test]
fn worker_rejects_bad_requests() {
    let c = Cluster::start(&[("ps", 1), ("worker", 1)]);
    let ps = c.target("ps:0");
    rt().block_on(async {
        let mut w = worker_client(channel(&ps));
        let st = w.get_status(GetStatusRequest {}).await.unwrap().into_inner();
        let dev = &st.device_attributes[0];
        assert_eq!(dev.name, "/job:ps/replica:0/task:0/device:CPU:0");
        assert_ne!(dev.incarnation, 0);
        let inc = dev.incarnation;

        let e = w
            .run_graph(RunGraphRequest { session_handle: "s".into(), create_worker_session_called: true, graph_handle: "g".into(), ..Default::default() })
            .await
            .unwrap_err();
        assert_eq!(code_of(&e), Code::Aborted, "{}", e.message());
        w.create_worker_session(CreateWorkerSessionRequest { session_handle: "s".into(), ..Default::default() }).await.unwrap();
        let e = w
            .run_graph(RunGraphRequest { session_handle: "s".into(), create_worker_session_called: true, graph_handle: "nope".into(), ..Default::default() })
            .await
            .unwrap_err();
        assert_eq!(code_of(&e), Code::Aborted);
        assert!(e.message().contains("Graph handle is not found: nope"), "{}", e.message());
        // A node placed on another task.
        let mut n = konst("x", 1.0);
        n.device = "/job:worker/replica:0/task:0/device:CPU:0".into();
        let e = w.register_graph(register_in_s(vec![n])).await.unwrap_err();
        assert_eq!(code_of(&e), Code::InvalidArgument);
        assert!(e.message().contains("'x'") && e.message().contains("not on this task"), "{}", e.message());

        // RecvTensor: malformed key, wrong incarnation, and a key that never comes.
        let key = |inc: u64| {
            format!("/job:ps/replica:0/task:0/device:CPU:0;{inc:016x};/job:worker/replica:0/task:0/device:CPU:0;edge_1_x;0:0")
        };
        let e = w.recv_tensor(RecvTensorRequest { step_id: 1, rendezvous_key: "bad".into(), ..Default::default() }).await.unwrap_err();
        assert_eq!(code_of(&e), Code::InvalidArgument);
        let e = w.recv_tensor(RecvTensorRequest { step_id: 1, rendezvous_key: key(inc ^ 1), ..Default::default() }).await.unwrap_err();
        assert_eq!(code_of(&e), Code::Aborted);
        assert!(e.message().contains("different device incarnation"), "{}", e.message());
        let req = RecvTensorRequest { step_id: 12345, rendezvous_key: key(inc), ..Default::default() };
        assert_times_out!(w.recv_tensor(req));
        // RecvBuf: a request naming no chunk is refused; a chunk never provided ends at the
        // caller's deadline.
        let e = w.recv_buf(RecvBufRequest::default()).await.unwrap_err();
        assert_eq!(code_of(&e), Code::InvalidArgument);
        let req =
            RecvBufRequest { step_id: 7, buf_rendezvous_key: "1:1:0:0:0:0:0".into(), num_bytes: 4, ..Default::default() };
        assert_times_out!(w.recv_buf(req));
        // Unimplemented methods say so.
        let e = w.tracing(TracingRequest::default()).await.unwrap_err();
        assert_eq!(code_of(&e), Code::Unimplemented);
        w.logging(LoggingRequest::default()).await.unwrap();
    });
    assert!(c.server("ps:0").worker().num_steps() <= 1);
    still_serves(&ps);
}

#[test]
fn a_blocked_run_graph_ends_at_its_deadline_and_cancels_its_recv() {
    let c = Cluster::start(&[("ps", 1), ("worker", 1)]);
    let ps_inc = c.server("ps:0").worker().device_attributes().incarnation;
    rt().block_on(async {
        let mut w = worker_client(channel(&c.target("worker:0")));
        w.create_worker_session(CreateWorkerSessionRequest { session_handle: "s".into(), ..Default::default() })
            .await
            .unwrap();
        // A _Recv from the ps of a tensor the ps never sends.
        let mut r = NodeDef { name: "r".into(), op: "_Recv".into(), ..Default::default() };
        r.attr.insert("tensor_type".into(), attr::ty(DataType::Float));
        r.attr.insert("tensor_name".into(), attr::string("edge_9_never"));
        r.attr.insert("send_device".into(), attr::string("/job:ps/replica:0/task:0/device:CPU:0"));
        r.attr.insert("recv_device".into(), attr::string("/job:worker/replica:0/task:0/device:CPU:0"));
        r.attr.insert("send_device_incarnation".into(), attr::int(ps_inc as i64));
        r.attr.insert("client_terminated".into(), attr::bool(false));
        let h = w.register_graph(register_in_s(vec![r])).await.unwrap().into_inner().graph_handle;
        let t = Instant::now();
        let mut req = tonic::Request::new(RunGraphRequest {
            session_handle: "s".into(),
            create_worker_session_called: true,
            graph_handle: h,
            step_id: 99,
            store_errors_in_response_body: true,
            ..Default::default()
        });
        req.set_timeout(Duration::from_millis(500));
        let r = w.run_graph(req).await;
        let (code, msg) = match r {
            Ok(r) => {
                let r = r.into_inner();
                (Code::from_i32(r.status_code), r.status_error_message)
            }
            Err(e) => (code_of(&e), e.message().to_string()),
        };
        assert!(matches!(code, Code::DeadlineExceeded | Code::Cancelled), "{code:?}: {msg}");
        assert!(t.elapsed() < PROMPT);
    });
    still_serves(&c.target("worker:0"));
}

#[test]
fn malformed_protobuf_bytes() {
    use bytes::{Buf, BufMut};
    use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

    #[derive(Clone, Default)]
    struct Raw;
    struct RawEnc;
    struct RawDec;
    impl Encoder for RawEnc {
        type Item = Vec<u8>;
        type Error = tonic::Status;
        fn encode(&mut self, item: Vec<u8>, dst: &mut EncodeBuf<'_>) -> Result<(), tonic::Status> {
            dst.put_slice(&item);
            Ok(())
        }
    }
    impl Decoder for RawDec {
        type Item = Vec<u8>;
        type Error = tonic::Status;
        fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Vec<u8>>, tonic::Status> {
            let v = src.chunk().to_vec();
            src.advance(v.len());
            Ok(Some(v))
        }
    }
    impl Codec for Raw {
        type Encode = Vec<u8>;
        type Decode = Vec<u8>;
        type Encoder = RawEnc;
        type Decoder = RawDec;
        fn encoder(&mut self) -> RawEnc {
            RawEnc
        }
        fn decoder(&mut self) -> RawDec {
            RawDec
        }
    }

    let server = Server::create_local_server().unwrap();
    rt().block_on(async {
        for path in [
            "/tensorflow.MasterService/CreateSession",
            "/tensorflow.MasterService/RunStep",
            "/tensorflow.WorkerService/RunGraph",
            "/tensorflow.WorkerService/RecvTensor",
            "/tensorflow.WorkerService/NoSuchMethod",
            "/no.Such/Service",
        ] {
            for garbage in [vec![0xffu8; 32], vec![0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f], vec![0x12, 0x05, 0x01]] {
                let mut g = tonic::client::Grpc::new(channel(server.target()));
                g.ready().await.unwrap();
                let r = g
                    .unary(
                        tonic::Request::new(garbage),
                        tonic::codegen::http::uri::PathAndQuery::from_static(path),
                        Raw,
                    )
                    .await;
                let e = r.expect_err(path);
                assert!(
                    matches!(code_of(&e), Code::Internal | Code::InvalidArgument | Code::Unimplemented),
                    "{path}: {:?} {}",
                    e.code(),
                    e.message()
                );
            }
        }
    });
    still_serves(server.target());
}
