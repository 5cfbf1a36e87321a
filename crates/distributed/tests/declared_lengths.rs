//! A gRPC message's 5-byte prefix declares its length before its bytes come; a server may
//! not reserve what a client merely declares. Raw HTTP/2 requests (through a tonic channel,
//! with bodies written here) declare 2 GiB on every kind of path a task serves (tonic's
//! codec and ferroflow's raw paths) and must fail with RESOURCE_EXHAUSTED at once, one
//! declaring a length within the budget and sending a little of it must not make the
//! server reserve the rest, and the task must keep serving, large messages included. The
//! same holds for the responses ferroflow's clients decode (a peer that declares 2 GiB),
//! and a compressed request may not expand past the budget either.
//! The binary's allocator notes the largest allocation of any thread (`fuzz::largest`, as
//! the fuzzers use it); its tests run one at a time, so nothing else allocates meanwhile.

#[path = "common/mod.rs"]
mod common;
#[allow(dead_code)]
#[path = "fuzz/largest.rs"]
mod largest;

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use ferroflow_core::{DataType, Tensor};
use ferroflow_distributed::{endpoint, master_client, worker_client, GrpcSession};
use ferroflow_graph::{ops, Scope};
use ferroflow_runtime::StepRunner;
use http_body::Frame;
use http_body_util::BodyExt;
use tonic::codegen::Service;
use tonic::transport::Channel;

#[global_allocator]
static ALLOC: ferroflow_core::WatchedAlloc = largest::ALLOCATOR;

/// Held by each test: the largest allocation is any thread's.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The task's memory budget here.
const BUDGET: u64 = 1 << 30;

/// Any single allocation this large while a call runs means a declared length was reserved.
const LARGE: usize = 32 << 20;

/// A request body: its chunks, then its end if `.1`, else nothing for as long as the call
/// lasts (a client that declared more than it sends).
struct Stalls(VecDeque<Bytes>, bool);

impl http_body::Body for Stalls {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        match this.0.pop_front() {
            Some(b) => Poll::Ready(Some(Ok(Frame::data(b)))),
            None if this.1 => Poll::Ready(None),
            None => Poll::Pending,
        }
    }
}

/// A prefix declaring `len` bytes, then the first `send` of them.
fn declaring(len: u32, send: usize) -> Vec<Bytes> {
    let mut p = BytesMut::new();
    p.put_u8(0);
    p.put_u32(len);
    vec![p.freeze(), Bytes::from(vec![7u8; send])]
}

/// Calls `path` with a body of `chunks` that then stalls: the call's gRPC status (code and
/// message), or None if the server has not answered within `wait`.
async fn call(ch: &Channel, path: &'static str, chunks: Vec<Bytes>, wait: Duration) -> Option<(tonic::Code, String)> {
    call_with(ch, path, Stalls(chunks.into(), false), wait).await
}

/// [`call`] with the body `body`.
async fn call_with(ch: &Channel, path: &'static str, body: Stalls, wait: Duration) -> Option<(tonic::Code, String)> {
    let mut req = http::Request::new(tonic::body::Body::new(body));
    *req.uri_mut() = http::Uri::from_static(path);
    send(ch, req, wait).await
}

/// Sends `req` (its path set) as a gRPC call; as [`call`].
async fn send(
    ch: &Channel,
    mut req: http::Request<tonic::body::Body>,
    wait: Duration,
) -> Option<(tonic::Code, String)> {
    let path = req.uri().path().to_string();
    *req.method_mut() = http::Method::POST;
    let h = req.headers_mut();
    h.insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/grpc"));
    h.insert(http::header::TE, http::HeaderValue::from_static("trailers"));
    let mut ch = ch.clone();
    std::future::poll_fn(|cx| ch.poll_ready(cx)).await.unwrap();
    let answered = async move {
        let resp = ch.call(req).await.unwrap();
        assert_eq!(resp.status(), http::StatusCode::OK, "{path}");
        // A trailers-only answer has its status in the headers, others in the trailers.
        if let Some(s) = tonic::Status::from_header_map(resp.headers()) {
            return s;
        }
        let trailers = resp.into_body().collect().await.unwrap().trailers().cloned().unwrap_or_default();
        tonic::Status::from_header_map(&trailers).unwrap()
    };
    let s = tokio::time::timeout(wait, answered).await.ok()?;
    Some((s.code(), s.message().to_string()))
}

/// Every kind of path: tonic's codec for the four services, and the raw ones.
const REFUSED: [(&str, &str); 7] = [
    ("/tensorflow.MasterService/CreateSession", "a request of /tensorflow.MasterService/CreateSession"),
    ("/tensorflow.MasterService/RunStep", "RunStepRequest"),
    ("/tensorflow.WorkerService/GetStatus", "a request of /tensorflow.WorkerService/GetStatus"),
    ("/tensorflow.WorkerService/RunGraph", "RunGraphRequest"),
    ("/tensorflow.WorkerService/RecvTensor", "RecvTensorRequest"),
    ("/tensorflow.eager.EagerService/CreateContext", "a request of /tensorflow.eager.EagerService/CreateContext"),
    ("/ferroflow.Control/ServerInfo", "a request of /ferroflow.Control/ServerInfo"),
];

/// A session over the wire (not the in-process master) whose one step must work.
fn step(target: &str, s: &Scope, feeds: &[(&ferroflow_graph::Output, Tensor)], fetch: &ferroflow_graph::Output) -> f32 {
    let sess = GrpcSession::new(target, s.graph()).unwrap().over_grpc_only();
    sess.run(feeds, &[fetch], &[]).unwrap()[0].scalar_value::<f32>().unwrap()
}

#[test]
fn declared_lengths_reserve_nothing_past_what_arrives_or_the_budget() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    ferroflow_core::set_memory_limit(BUDGET);
    let c = common::Cluster::start(&[("worker", 1)]);
    let target = c.target("worker:0");
    let rt = common::rt();
    let ch = rt.block_on(async { endpoint(&target, Duration::from_secs(5)).unwrap().connect().await.unwrap() });

    // 2 GiB - 1 declared (the most a gRPC message may have), 100 bytes sent: refused at
    // once, naming the call, the declared bytes and the budget, and nothing large reserved
    // (tonic's decoder would reserve the 2 GiB and wait for them).
    for (path, names) in REFUSED {
        largest::reset_anywhere();
        let got = rt.block_on(call(&ch, path, declaring(0x7fff_ffff, 100), Duration::from_secs(10)));
        let (code, msg) = got.unwrap_or_else(|| panic!("{path}: no answer to a 2 GiB declaration"));
        assert_eq!(code, tonic::Code::ResourceExhausted, "{path}: {msg}");
        for part in [names, "prefix declares 2147483647 bytes", &format!("memory limit of {BUDGET} bytes")] {
            assert!(msg.contains(part), "{path}: '{part}' not in: {msg}");
        }
        let big = largest::largest_anywhere();
        assert!(big < LARGE, "{path}: one allocation of {big} bytes for a 2 GiB declaration");
    }

    // 512 MiB declared (within the budget), 64 KiB sent: no answer yet, and the server has
    // not reserved the 512 MiB the bytes have not brought.
    for path in ["/tensorflow.MasterService/ExtendSession", "/tensorflow.WorkerService/RegisterGraph"] {
        largest::reset_anywhere();
        let got = rt.block_on(call(&ch, path, declaring(512 << 20, 64 << 10), Duration::from_millis(500)));
        assert!(got.is_none(), "{path}: answered {got:?} before the message arrived");
        let big = largest::largest_anywhere();
        assert!(big < LARGE, "{path}: one allocation of {big} bytes for 64 KiB of a 512 MiB message");
    }

    // Large messages within the budget still go through: a 16 MB feed (RunStep, a raw
    // path) and a graph holding a 4 MB constant (CreateSession, tonic's codec).
    let s = Scope::new_root();
    let x = ops::placeholder(&s, DataType::Float, Some(&[1 << 22]));
    let total = ops::sum(&s, x.clone(), ops::constant(&s, vec![0i32]), false);
    let ones = Tensor::new(vec![1 << 22], vec![1.0f32; 1 << 22]).unwrap();
    assert_eq!(step(&target, &s, &[(&x, ones)], &total), (1 << 22) as f32);
    let s = Scope::new_root();
    let k = ops::constant(&s, Tensor::new(vec![1 << 20], vec![0.5f32; 1 << 20]).unwrap());
    let total = ops::sum(&s, k, ops::constant(&s, vec![0i32]), false);
    assert_eq!(step(&target, &s, &[], &total), (1 << 19) as f32);

    // And small calls too, on the connection the refused calls used.
    let empty = Stalls(declaring(0, 0).into(), true);
    let got = rt.block_on(call_with(&ch, "/ferroflow.Control/ServerInfo", empty, Duration::from_secs(10)));
    assert_eq!(got.map(|g| g.0), Some(tonic::Code::Ok));
}

/// A peer that answers every call with a message prefix declaring 2 GiB - 1 and 100 bytes
/// of it, then nothing.
#[derive(Clone)]
struct Declares;

impl Service<http::Request<tonic::body::Body>> for Declares {
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = std::future::Ready<Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: http::Request<tonic::body::Body>) -> Self::Future {
        let body = Stalls(declaring(0x7fff_ffff, 100).into(), false);
        let mut r = http::Response::new(tonic::body::Body::new(body));
        r.headers_mut().insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/grpc"));
        std::future::ready(Ok(r))
    }
}

#[test]
fn clients_do_not_reserve_what_a_peer_declares() {
    use ferroflow_core::proto::{GetStatusRequest, ListDevicesRequest};
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    ferroflow_core::set_memory_limit(BUDGET);
    let rt = common::rt();
    let addr = rt.block_on(async {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        let incoming = tonic::transport::server::TcpIncoming::from(l);
        tokio::spawn(tonic::transport::Server::builder().serve_with_incoming(Declares, incoming));
        addr
    });
    let ch =
        rt.block_on(async { endpoint(&addr.to_string(), Duration::from_secs(5)).unwrap().connect().await.unwrap() });
    largest::reset_anywhere();
    let (worker, master) = rt.block_on(async {
        let wait = Duration::from_secs(10);
        let w = tokio::time::timeout(wait, worker_client(ch.clone()).get_status(GetStatusRequest::default())).await;
        let m = tokio::time::timeout(wait, master_client(ch).list_devices(ListDevicesRequest::default())).await;
        (w.expect("GetStatus: no answer").unwrap_err(), m.expect("ListDevices: no answer").unwrap_err())
    });
    for (s, call) in [(worker, "WorkerService/GetStatus"), (master, "MasterService/ListDevices")] {
        assert_eq!(s.code(), tonic::Code::ResourceExhausted, "{s}");
        let names = format!("a response of /tensorflow.{call} (a gRPC message whose prefix declares 2147483647 bytes)");
        assert!(s.message().contains(&names), "{s}");
    }
    let big = largest::largest_anywhere();
    assert!(big < LARGE, "one allocation of {big} bytes for a response declaring 2 GiB");
}

#[test]
fn compressed_requests_expand_no_further_than_the_budget() {
    use std::io::Write;
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // The server's decoding limit is the budget when it starts.
    ferroflow_core::set_memory_limit(64 << 20);
    let c = common::Cluster::start(&[("worker", 1)]);
    let rt = common::rt();
    let ch = rt
        .block_on(async { endpoint(&c.target("worker:0"), Duration::from_secs(5)).unwrap().connect().await.unwrap() });
    // 80 MiB of zeros in ~80 KB of gzip.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..80 {
        gz.write_all(&zeros).unwrap();
    }
    let gz = gz.finish().unwrap();
    let mut body = BytesMut::new();
    body.put_u8(1);
    body.put_u32(gz.len() as u32);
    body.put_slice(&gz);
    for path in ["/tensorflow.MasterService/CreateSession", "/tensorflow.MasterService/RunStep"] {
        let mut req = http::Request::new(tonic::body::Body::new(Stalls(vec![body.clone().freeze()].into(), true)));
        *req.uri_mut() = http::Uri::from_static(path);
        req.headers_mut().insert("grpc-encoding", http::HeaderValue::from_static("gzip"));
        let (code, msg) = rt.block_on(send(&ch, req, Duration::from_secs(20))).expect("no answer");
        // Decompressed whole, the zeros would be a malformed message (INTERNAL).
        assert_eq!(code, tonic::Code::ResourceExhausted, "{path}: {msg}");
    }
}
