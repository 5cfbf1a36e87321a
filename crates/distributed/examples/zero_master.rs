//! A MasterService that does no work, for `scripts/bench/dist_bench.py`: it answers every
//! RunStep at once from memory (each fetch named in `--big` gets a 64 MiB float32 tensor
//! of zeros, every other fetch a float32 scalar), so a client timed against it measures
//! the client and the transport alone. No server built on gRPC over HTTP/2 can answer
//! that client faster; that is the floor of the bench's round trip and fetch rows.
//!
//! ```text
//! cargo run --release -p ferroflow-distributed --example zero_master -- 127.0.0.1:2223 --big Identity:0
//! ```
//! It serves until killed. It is a measuring tool, not a master: it never looks at the
//! graph, and its replies are only as right as the bench needs them to be.

use std::collections::{HashSet, VecDeque};
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::{BufMut, Bytes, BytesMut};
use ferroflow_core::proto::{
    CloseSessionResponse, CreateSessionResponse, ExtendSessionRequest, ExtendSessionResponse, ListDevicesResponse,
    RunStepRequest, TensorProto, TensorShapeProto,
};
use http::{HeaderMap, HeaderValue};
use http_body::Frame;
use http_body_util::BodyExt;
use prost::Message;
use tonic::body::Body;
use tonic::codegen::{BoxFuture, Service};

const BIG_ELEMS: usize = 16 * 1024 * 1024;
const DT_FLOAT: i32 = 1;

/// A body of frames known in advance.
struct Frames(VecDeque<Frame<Bytes>>);

impl http_body::Body for Frames {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.get_mut().0.pop_front().map(Ok))
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_empty()
    }
}

fn reply(parts: Vec<Bytes>) -> http::Response<Body> {
    let mut frames: VecDeque<Frame<Bytes>> = parts.into_iter().map(Frame::data).collect();
    let mut trailers = HeaderMap::new();
    trailers.insert("grpc-status", HeaderValue::from_static("0"));
    frames.push_back(Frame::trailers(trailers));
    let mut r = http::Response::new(Body::new(Frames(frames)));
    r.headers_mut().insert(http::header::CONTENT_TYPE, HeaderValue::from_static("application/grpc"));
    r
}

fn varint(b: &mut BytesMut, mut v: u64) {
    while v >= 0x80 {
        b.put_u8((v as u8) | 0x80);
        v >>= 7;
    }
    b.put_u8(v as u8);
}

fn varint_len(v: u64) -> usize {
    prost::encoding::encoded_len_varint(v)
}

/// One gRPC-framed RunStepResponse whose tensors are (name, dims, content): everything but
/// the contents is written here; the contents follow as their own shared chunks.
fn run_step_reply(tensors: &[(String, Vec<i64>, Bytes)]) -> Vec<Bytes> {
    // Sizes first (nested length prefixes), then the bytes.
    let mut heads = Vec::new();
    let mut total = 0usize;
    for (name, dims, content) in tensors {
        let shape = TensorShapeProto {
            dim: dims
                .iter()
                .map(|&size| ferroflow_core::proto::tensor_shape_proto::Dim { size, name: String::new() })
                .collect(),
            unknown_rank: false,
        };
        let meta = TensorProto { dtype: DT_FLOAT, tensor_shape: Some(shape), ..Default::default() }.encode_to_vec();
        let c = content.len() as u64;
        let tensor_len = meta.len() + 1 + varint_len(c) + content.len();
        let named_len = 1 + varint_len(name.len() as u64) + name.len() + 1 + varint_len(tensor_len as u64) + tensor_len;
        total += 1 + varint_len(named_len as u64) + named_len;
        heads.push((named_len, tensor_len, meta));
    }
    let mut out = Vec::new();
    let mut b = BytesMut::new();
    b.put_u8(0);
    b.put_u32(total as u32);
    for ((name, _, content), (named_len, tensor_len, meta)) in tensors.iter().zip(heads) {
        b.put_u8(0x0a); // RunStepResponse.tensor = 1
        varint(&mut b, named_len as u64);
        b.put_u8(0x0a); // NamedTensorProto.name = 1
        varint(&mut b, name.len() as u64);
        b.put_slice(name.as_bytes());
        b.put_u8(0x12); // NamedTensorProto.tensor = 2
        varint(&mut b, tensor_len as u64);
        b.put_slice(&meta);
        b.put_u8(0x22); // TensorProto.tensor_content = 4
        varint(&mut b, content.len() as u64);
        out.push(b.split().freeze());
        out.push(content.clone());
    }
    out.insert(0, b.split().freeze());
    out.retain(|p| !p.is_empty());
    out
}

fn framed<M: Message>(m: &M) -> Vec<Bytes> {
    let mut b = BytesMut::new();
    b.put_u8(0);
    b.put_u32(m.encoded_len() as u32);
    m.encode_raw(&mut b);
    vec![b.freeze()]
}

#[derive(Clone)]
struct Zero {
    big_names: Arc<HashSet<String>>,
    big: Bytes,
    one: Bytes,
}

impl Zero {
    fn answer(&self, path: &str, body: &[u8]) -> Result<Vec<Bytes>, String> {
        let msg = body.get(5..).ok_or("short gRPC frame")?;
        Ok(match path.rsplit('/').next().unwrap_or("") {
            "CreateSession" => framed(&CreateSessionResponse { session_handle: "zero".into(), graph_version: 1 }),
            "ExtendSession" => {
                let r = ExtendSessionRequest::decode(msg).map_err(|e| e.to_string())?;
                framed(&ExtendSessionResponse { new_graph_version: r.current_graph_version + 1 })
            }
            "RunStep" => {
                let r = RunStepRequest::decode(msg).map_err(|e| e.to_string())?;
                let tensors: Vec<_> = r
                    .fetch
                    .into_iter()
                    .map(|f| {
                        if self.big_names.contains(&f) {
                            (f, vec![BIG_ELEMS as i64], self.big.clone())
                        } else {
                            (f, vec![], self.one.clone())
                        }
                    })
                    .collect();
                run_step_reply(&tensors)
            }
            "CloseSession" => framed(&CloseSessionResponse {}),
            "ListDevices" => framed(&ListDevicesResponse::default()),
            other => return Err(format!("{other} is not served by zero_master")),
        })
    }
}

impl Service<http::Request<Body>> for Zero {
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<Self::Response, Self::Error>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<Body>) -> Self::Future {
        let this = self.clone();
        Box::pin(async move {
            let path = req.uri().path().to_string();
            let body = match req.into_body().collect().await {
                Ok(b) => b.to_bytes(),
                Err(e) => return Ok(tonic::Status::invalid_argument(e.to_string()).into_http()),
            };
            Ok(match this.answer(&path, &body) {
                Ok(parts) => reply(parts),
                Err(e) => tonic::Status::unimplemented(e).into_http(),
            })
        })
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let addr = args.next().ok_or("usage: zero_master host:port [--big fetch-name]...")?;
    let mut big_names = HashSet::new();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--big" => {
                big_names.insert(args.next().ok_or("--big needs a fetch name")?);
            }
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let zero = Zero {
        big_names: Arc::new(big_names),
        big: Bytes::from(vec![0u8; BIG_ELEMS * 4]),
        one: Bytes::from_static(&[0, 0, 0x80, 0x3f]),
    };
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(&addr).await?;
        let incoming = tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
        tonic::transport::Server::builder()
            .initial_stream_window_size(32 << 20)
            .initial_connection_window_size(32 << 20)
            .max_frame_size((1 << 20) as u32)
            .serve_with_incoming(zero, incoming)
            .await?;
        Ok::<(), Box<dyn std::error::Error>>(())
    })
}
