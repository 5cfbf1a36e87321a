//! One port, four services: routes a gRPC request by path prefix to the MasterService,
//! the WorkerService, the EagerService or ferroflow's Control service (tonic's router needs axum; this is
//! all ferroflow needs). Every request also marks the server as active (idle timeout) and
//! is counted and timed (`rpc_metrics`), and no request's declared message length can
//! reserve memory past the task's budget (`message_gate`).

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use ferroflow_core::proto::eager::eager_service_server::EagerServiceServer;
use ferroflow_core::proto::master_service_server::MasterServiceServer;
use ferroflow_core::proto::worker_service_server::WorkerServiceServer;
use tonic::body::Body;
use tonic::codegen::{http, BoxFuture, Service};
use tonic::server::NamedService;

use crate::access::{Caller, ConnInfo};

use crate::control::proto::control_server::ControlServer;
use crate::control::ControlService;
use crate::message_gate::gate;
use crate::rpc::{recv_tensor, recv_tensors, run_graph, run_step, EagerGrpc, MasterGrpc, WorkerGrpc};
use crate::server::ServerShared;

/// The server's request router.
#[derive(Clone)]
pub(crate) struct Dispatch {
    pub(crate) master: MasterServiceServer<MasterGrpc>,
    pub(crate) worker: WorkerServiceServer<WorkerGrpc>,
    pub(crate) control: ControlServer<ControlService>,
    pub(crate) eager: EagerServiceServer<EagerGrpc>,
    pub(crate) shared: Arc<ServerShared>,
}

fn prefix_of<S: NamedService>() -> String {
    format!("/{}/", S::NAME)
}

impl Service<http::Request<Body>> for Dispatch {
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<Self::Response, Self::Error>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut req: http::Request<Body>) -> Self::Future {
        let start = std::time::Instant::now();
        // The connection's addresses as tonic's handlers look for them.
        if let Some(info) = req.extensions().get::<ConnInfo>().cloned() {
            if info.plain_on_tls {
                let peer = info.tcp.remote_addr().map_or_else(|| "?".to_string(), |a| a.to_string());
                let local = info.tcp.local_addr().map_or_else(|| "?".to_string(), |a| a.to_string());
                let e = tonic::Status::failed_precondition(format!(
                    "{} at {local} serves TLS only, and this client ({peer}) connected in plain text: use a grpcs:// \
                     target and the cluster's CA (ferroflow: --tls_ca; TensorFlow's Python client cannot speak TLS \
                     to a task)",
                    self.shared.task
                ));
                return Box::pin(async move { Ok(crate::raw_grpc::error_response(e)) });
            }
            let caller = Caller {
                addr: info.tcp.remote_addr(),
                mutual_tls: self.shared.mutual_tls,
                cert: info.peer_cert.clone(),
            };
            req.extensions_mut().insert(caller);
            req.extensions_mut().insert(info.tcp);
            // The connection counts as busy until this call's handler returns.
            let busy = info.activity.begin();
            let method = crate::metrics::method_label(req.uri().path());
            let path = req.uri().path().to_string();
            let fut = self.route(req);
            return Box::pin(async move {
                let resp = name_unknown_method(fut.await?, &path);
                drop(busy);
                Ok(crate::rpc_metrics::meter(method, start, resp))
            });
        }
        let method = crate::metrics::method_label(req.uri().path());
        let path = req.uri().path().to_string();
        let fut = self.route(req);
        // Every call is counted (method, status code) and timed when its response ends.
        Box::pin(async move { Ok(crate::rpc_metrics::meter(method, start, name_unknown_method(fut.await?, &path))) })
    }
}

/// tonic answers a method its service does not have with UNIMPLEMENTED and no message;
/// the message names the method, as gRPC's C++ server does ("Method not found: ...").
fn name_unknown_method(mut resp: http::Response<Body>, path: &str) -> http::Response<Body> {
    let h = resp.headers_mut();
    if h.get("grpc-status").is_some_and(|v| v.as_bytes() == b"12") && h.get("grpc-message").is_none() {
        let text: String = format!("Method not found: {path}")
            .bytes()
            .map(|b| if (0x20..0x7f).contains(&b) && b != b'%' { (b as char).to_string() } else { format!("%{b:02X}") })
            .collect();
        if let Ok(v) = http::HeaderValue::from_str(&text) {
            h.insert("grpc-message", v);
        }
    }
    resp
}

/// The RPCs that are not part of a session or a step: answered only for peers that
/// [`crate::access::may_control`] admits.
const CONTROL_PATHS: [&str; 4] = [
    "/tensorflow.MasterService/Reset",
    "/tensorflow.WorkerService/CleanupAll",
    "/ferroflow.Control/ServerInfo",
    "/ferroflow.Control/Shutdown",
];

impl Dispatch {
    fn route(&mut self, req: http::Request<Body>) -> BoxFuture<http::Response<Body>, Infallible> {
        let path = req.uri().path();
        if let Some(&rpc) = CONTROL_PATHS.iter().find(|&&p| p == path) {
            let caller = req.extensions().get::<Caller>().cloned().unwrap_or_default();
            let shared = self.shared.clone();
            let call = self.route_open(req);
            return Box::pin(async move {
                if crate::access::may_control(&caller, shared.allow.as_deref(), &shared.cluster_hosts).await {
                    return call.await;
                }
                let peer = caller.describe();
                tracing::warn!(task = %shared.task, %peer, rpc, "control RPC refused: the peer is not on loopback, in --allow_from or a task of the cluster");
                let name = rpc.rsplit('/').next().unwrap_or(rpc);
                let who = if shared.mutual_tls {
                    "--allow_from addresses and clients whose certificate names a task of the cluster"
                } else {
                    "loopback, --allow_from addresses and the cluster's tasks"
                };
                Ok(crate::raw_grpc::error_response(tonic::Status::permission_denied(format!(
                    "{name} on {} refused for {peer}: only {who} may call it",
                    shared.task
                ))))
            });
        }
        self.route_open(req)
    }

    /// Routes a request that needs no admission check.
    fn route_open(&mut self, req: http::Request<Body>) -> BoxFuture<http::Response<Body>, Infallible> {
        let path = req.uri().path();
        if !path.ends_with("/ServerInfo") {
            self.shared.touch();
        }
        if path == recv_tensor::PATH {
            // The calls that carry tensors skip tonic's codec (no copies); their bodies are
            // gathered as chunks, each message's declared length checked against the
            // memory budget (`raw_grpc::read_frames`). The others go to tonic's decoder,
            // which reserves what a message declares: `gate` checks and holds it first.
            let worker = self.shared.worker.clone();
            Box::pin(async move { Ok(recv_tensor::serve(worker, req).await) })
        } else if path == recv_tensors::PATH {
            let worker = self.shared.worker.clone();
            Box::pin(async move { Ok(recv_tensors::serve(worker, req).await) })
        } else if path == run_graph::PATH {
            let worker = self.shared.worker.clone();
            Box::pin(async move { Ok(run_graph::serve(worker, req).await) })
        } else if path == run_step::PATH {
            let master = self.shared.master.clone();
            Box::pin(async move { Ok(run_step::serve(master, req).await) })
        } else if path.starts_with(&prefix_of::<MasterServiceServer<MasterGrpc>>()) {
            self.master.call(gate(req))
        } else if path.starts_with(&prefix_of::<ControlServer<ControlService>>()) {
            self.control.call(gate(req))
        } else if path.starts_with(&prefix_of::<EagerServiceServer<EagerGrpc>>()) {
            self.eager.call(gate(req))
        } else {
            // The worker service answers UNIMPLEMENTED for paths it does not know.
            self.worker.call(gate(req))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_methods_are_named() {
        let resp = tonic::Status::unimplemented("").into_http::<Body>();
        let resp = name_unknown_method(resp, "/tensorflow.MasterService/Nope%");
        let msg = resp.headers()["grpc-message"].to_str().unwrap();
        assert_eq!(msg, "Method not found: /tensorflow.MasterService/Nope%25");
        // A message already there stays.
        let resp = tonic::Status::unimplemented("RecvBuf is not implemented").into_http::<Body>();
        let resp = name_unknown_method(resp, "/tensorflow.WorkerService/RecvBuf");
        assert_eq!(resp.headers()["grpc-message"].to_str().unwrap(), "RecvBuf%20is%20not%20implemented");
    }
}
