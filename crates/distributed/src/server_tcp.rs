//! A [`crate::Server`] on a TCP port: binding the task's port and serving TensorFlow's
//! MasterService and WorkerService (and ferroflow's Control service) over HTTP/2 on it,
//! with the access rules, connection limits and TLS of its options. An in-memory task
//! (`ServerOptions::in_memory`) has none of this.

use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use ferroflow_core::proto::eager::eager_service_server::EagerServiceServer;
use ferroflow_core::proto::master_service_server::MasterServiceServer;
use ferroflow_core::proto::worker_service_server::WorkerServiceServer;
use ferroflow_core::Status;
use tokio::sync::watch;
use tonic::codec::CompressionEncoding;

use crate::access::DEFAULT_MAX_CONNECTIONS;
use crate::control::proto::control_server::ControlServer;
use crate::control::ControlService;
use crate::dispatch::Dispatch;
use crate::rpc::{EagerGrpc, MasterGrpc, WorkerGrpc};
use crate::rpc_util::{MAX_FRAME_SIZE, MAX_MESSAGE_SIZE, WINDOW_SIZE};
use crate::server::ServerShared;
use crate::ServerOptions;

/// Binds the task's port (`opts.listener` if the caller bound it already), non-blocking.
pub(crate) fn bind(
    opts: &mut ServerOptions,
    host: &str,
    port: u16,
    task_name: &str,
    addr: &str,
) -> Result<TcpListener, Status> {
    let listener = match opts.listener.take() {
        Some(l) => l,
        None => {
            let bind_host = opts.bind_host.clone().unwrap_or_else(|| {
                if !crate::access::is_loopback_host(host) {
                    "0.0.0.0".into()
                } else if host.contains(':') {
                    "::1".into()
                } else {
                    "127.0.0.1".into()
                }
            });
            let bind = format!("{}:{port}", bind_host.trim_start_matches('[').trim_end_matches(']'));
            let bind = if bind_host.contains(':') && !bind_host.starts_with('[') {
                format!("[{bind_host}]:{port}")
            } else {
                bind
            };
            // TensorFlow's code and words for a server that cannot bind (UNKNOWN).
            TcpListener::bind(&bind).map_err(|e| {
                Status::unknown(format!(
                    "Could not start gRPC server: task {task_name} cannot listen on {bind} (cluster address \
                     {addr}): {e}"
                ))
            })?
        }
    };
    listener.set_nonblocking(true)?;
    Ok(listener)
}

/// Serves the task's services on `listener` until shutdown is requested (then at most
/// 5 s more for lingering connections); marks the server stopped when done.
pub(crate) fn serve(
    runtime: &tokio::runtime::Runtime,
    shared: &Arc<ServerShared>,
    listener: TcpListener,
    opts: &ServerOptions,
    shutdown_rx: watch::Receiver<bool>,
) -> Result<(), Status> {
    // What tonic's decoder lets a compressed request expand to (a plain one's declared
    // length is checked against the budget before tonic reads it: `message_gate`).
    let decoding = crate::rpc_util::decoding_limit();
    let dispatch = Dispatch {
        // Compressed requests (a TensorFlow master whose rpc_options ask for gzip or
        // deflate) are accepted on every method; answers go out uncompressed.
        master: MasterServiceServer::from_arc(Arc::new(MasterGrpc(shared.master.clone())))
            .max_decoding_message_size(decoding)
            .max_encoding_message_size(MAX_MESSAGE_SIZE)
            .accept_compressed(CompressionEncoding::Gzip)
            .accept_compressed(CompressionEncoding::Deflate),
        worker: WorkerServiceServer::from_arc(Arc::new(WorkerGrpc(shared.worker.clone())))
            .max_decoding_message_size(decoding)
            .max_encoding_message_size(MAX_MESSAGE_SIZE)
            .accept_compressed(CompressionEncoding::Gzip)
            .accept_compressed(CompressionEncoding::Deflate),
        eager: EagerServiceServer::from_arc(Arc::new(EagerGrpc(shared.eager.clone())))
            .max_decoding_message_size(decoding)
            .max_encoding_message_size(MAX_MESSAGE_SIZE)
            .accept_compressed(CompressionEncoding::Gzip)
            .accept_compressed(CompressionEncoding::Deflate),
        control: ControlServer::new(ControlService(shared.clone()))
            .accept_compressed(CompressionEncoding::Gzip)
            .accept_compressed(CompressionEncoding::Deflate),
        shared: shared.clone(),
    };
    let incoming = {
        let _g = runtime.enter();
        let l = tokio::net::TcpListener::from_std(listener)?;
        let max = opts.max_connections.unwrap_or(DEFAULT_MAX_CONNECTIONS);
        let limits = crate::access::ConnLimits {
            max_connections: max,
            max_per_peer: opts.max_connections_per_peer.unwrap_or(max / crate::DEFAULT_PEER_SHARE),
            handshake_timeout: opts.handshake_timeout.unwrap_or(crate::access::HANDSHAKE_TIMEOUT),
            idle_timeout: Some(opts.connection_idle.unwrap_or(crate::DEFAULT_CONNECTION_IDLE)).filter(|d| !d.is_zero()),
        };
        crate::access::incoming(l, shared.allow.clone(), limits, opts.tls.clone(), shared.task.clone())
    };
    let serve = tonic::transport::Server::builder()
        .initial_stream_window_size(WINDOW_SIZE)
        .initial_connection_window_size(WINDOW_SIZE)
        .max_frame_size(MAX_FRAME_SIZE)
        .http2_keepalive_interval(Some(Duration::from_secs(30)))
        .serve_with_incoming_shutdown(dispatch, incoming, wait_true(shutdown_rx.clone()));
    let s2 = shared.clone();
    let mut rx2 = shutdown_rx;
    runtime.spawn(async move {
        // Graceful stop, but bounded: connections that linger are dropped after 5 s.
        let forced = async {
            let _ = rx2.wait_for(|v| *v).await;
            tokio::time::sleep(Duration::from_secs(5)).await;
        };
        tokio::select! {
            r = serve => if let Err(e) = r { tracing::error!(task = %s2.task, error = %e, "server failed") },
            _ = forced => tracing::warn!(task = %s2.task, "connections still open after 5 s; closing them"),
        }
        s2.mark_stopped();
    });
    Ok(())
}

async fn wait_true(mut rx: watch::Receiver<bool>) {
    let _ = rx.wait_for(|v| *v).await;
}
