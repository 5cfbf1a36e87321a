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

use std::collections::HashSet;
use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use ferroflow_core::proto::{
    CloseSessionResponse, CreateSessionResponse, ExtendSessionRequest, ExtendSessionResponse, ListDevicesResponse,
    NamedTensorProto, RunStepRequest, RunStepResponse, TensorProto, TensorShapeProto,
};
use ferroflow_distributed::raw_grpc::{encode_run_step, framed, ok_response};
use http_body_util::BodyExt;
use prost::Message;
use tonic::body::Body;
use tonic::codegen::{BoxFuture, Service};

const BIG_ELEMS: usize = 16 * 1024 * 1024;
const DT_FLOAT: i32 = 1;

/// A float32 tensor of shape `dims` whose content is `content` (shared, not copied).
fn named(name: String, dims: &[i64], content: Bytes) -> NamedTensorProto {
    let dim = dims.iter().map(|&size| ferroflow_core::proto::tensor_shape_proto::Dim { size, name: String::new() });
    let shape = TensorShapeProto { dim: dim.collect(), unknown_rank: false };
    let tensor =
        TensorProto { dtype: DT_FLOAT, tensor_shape: Some(shape), tensor_content: content, ..Default::default() };
    NamedTensorProto { name, tensor: Some(tensor) }
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
            "CreateSession" => {
                vec![framed(&CreateSessionResponse { session_handle: "zero".into(), graph_version: 1 })]
            }
            "ExtendSession" => {
                let r = ExtendSessionRequest::decode(msg).map_err(|e| e.to_string())?;
                vec![framed(&ExtendSessionResponse { new_graph_version: r.current_graph_version + 1 })]
            }
            "RunStep" => {
                let r = RunStepRequest::decode(msg).map_err(|e| e.to_string())?;
                let tensor = r
                    .fetch
                    .into_iter()
                    .map(|f| {
                        if self.big_names.contains(&f) {
                            named(f, &[BIG_ELEMS as i64], self.big.clone())
                        } else {
                            named(f, &[], self.one.clone())
                        }
                    })
                    .collect();
                encode_run_step(RunStepResponse { tensor, ..Default::default() }).map_err(|e| e.to_string())?
            }
            "CloseSession" => vec![framed(&CloseSessionResponse {})],
            "ListDevices" => vec![framed(&ListDevicesResponse::default())],
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
                Ok(parts) => ok_response(parts),
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
