//! The channel cache: one HTTP/2 channel per peer address, created lazily and reused by
//! every session, step and RPC (tonic multiplexes calls over it). Channels connect with a
//! bounded connect timeout, raised message limits and 32 MiB windows; over TLS when the
//! task serves TLS (see [`crate::tls`]).

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::Duration;

use ferroflow_core::Status;
use ferroflow_proto::master_service_client::MasterServiceClient;
use ferroflow_proto::worker_service_client::WorkerServiceClient;
use tonic::transport::{Channel, Endpoint};

use crate::peer_channel::PeerChannel;
use crate::rpc_util::{MAX_FRAME_SIZE, MAX_MESSAGE_SIZE, STREAM_WINDOW_SIZE, WINDOW_SIZE};
use crate::tls::{client_tls_for, is_tls_target, ClientTls};

/// Lazily connected channels keyed by `host:port`.
pub struct ChannelCache {
    connect_timeout: Duration,
    /// TLS to every peer (a task that serves TLS), else plain unless the address says `grpcs://`.
    tls: Option<ClientTls>,
    channels: Mutex<HashMap<String, Channel>>,
    /// Peers that answered ferroflow's batched RecvTensors with UNIMPLEMENTED (TensorFlow).
    unbatched: Mutex<HashSet<String>>,
}

impl ChannelCache {
    /// An empty cache whose channels give up connecting after `connect_timeout`.
    pub fn new(connect_timeout: Duration) -> ChannelCache {
        ChannelCache::with_tls(connect_timeout, None)
    }

    /// A cache whose channels use `tls` to every peer.
    pub fn with_tls(connect_timeout: Duration, tls: Option<ClientTls>) -> ChannelCache {
        ChannelCache {
            connect_timeout,
            tls,
            channels: Mutex::new(HashMap::new()),
            unbatched: Mutex::new(HashSet::new()),
        }
    }

    /// The channel to `addr` (`host:port`, or a `grpc://`/`http://` URL). Must be called
    /// within a tokio runtime.
    pub fn channel(&self, addr: &str) -> Result<Channel, Status> {
        let mut g = self.channels.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = g.get(addr) {
            return Ok(c.clone());
        }
        let c = endpoint_with(addr, self.connect_timeout, self.tls.as_ref())?.connect_lazy();
        g.insert(addr.to_string(), c.clone());
        Ok(c)
    }

    /// A WorkerService client for `addr`.
    pub fn worker(&self, addr: &str) -> Result<WorkerServiceClient<PeerChannel>, Status> {
        Ok(worker_client(self.channel(addr)?))
    }

    /// Forgets every channel (connections close when their last user drops them) and
    /// what peers were found to speak.
    pub fn clear(&self) {
        self.channels.lock().unwrap_or_else(|e| e.into_inner()).clear();
        self.unbatched.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    /// Whether tensors from `addr` may be fetched with ferroflow's batched RecvTensors
    /// (until the peer said it does not serve it).
    pub(crate) fn batches_to(&self, addr: &str) -> bool {
        !self.unbatched.lock().unwrap_or_else(|e| e.into_inner()).contains(addr)
    }

    /// Records that `addr` does not serve the batched RecvTensors.
    pub(crate) fn no_batches_to(&self, addr: &str) {
        self.unbatched.lock().unwrap_or_else(|e| e.into_inner()).insert(addr.to_string());
    }
}

/// The endpoint for `addr` with ferroflow's transport settings: TLS for a `grpcs://`
/// address (with the process's client configuration, see [`crate::tls`]), else plain.
pub fn endpoint(addr: &str, connect_timeout: Duration) -> Result<Endpoint, Status> {
    endpoint_with(addr, connect_timeout, None)
}

/// [`endpoint`], over TLS with `tls` when given.
pub fn endpoint_with(addr: &str, connect_timeout: Duration, tls: Option<&ClientTls>) -> Result<Endpoint, Status> {
    let hostport = strip_scheme(addr);
    let from_target;
    let tls = match tls {
        Some(t) => Some(t),
        None if is_tls_target(addr) => {
            from_target = client_tls_for(addr)?;
            Some(&from_target)
        }
        None => None,
    };
    let scheme = if tls.is_some() { "https" } else { "http" };
    let mut ep = Endpoint::from_shared(format!("{scheme}://{hostport}")).map_err(|e| {
        Status::invalid_argument(format!("'{addr}' is not a valid server address (expected host:port): {e}"))
    })?;
    if let Some(t) = tls {
        let host = crate::cluster_spec::split_host_port(hostport).map_or(hostport, |(h, _)| h);
        let host = host.trim_start_matches('[').trim_end_matches(']');
        ep = ep
            .tls_config(t.tonic_config(host))
            .map_err(|e| Status::invalid_argument(format!("TLS configuration for '{addr}' is not usable: {e}")))?;
    }
    Ok(ep
        .connect_timeout(connect_timeout)
        .tcp_nodelay(true)
        .initial_stream_window_size(if crate::pacing::pace_bytes().is_some() {
            STREAM_WINDOW_SIZE
        } else {
            WINDOW_SIZE
        })
        .initial_connection_window_size(WINDOW_SIZE)
        .max_frame_size(MAX_FRAME_SIZE)
        .http2_keep_alive_interval(Duration::from_secs(30))
        .keep_alive_timeout(Duration::from_secs(20)))
}

/// `grpc://h:p` → `h:p` (also `grpcs://`, `http://`, `https://`).
pub fn strip_scheme(addr: &str) -> &str {
    ["grpc://", "grpcs://", "http://", "https://"].iter().find_map(|p| addr.strip_prefix(p)).unwrap_or(addr)
}

/// A WorkerService client over `ch` with 2 GiB message limits, its responses' declared
/// lengths checked before they are reserved ([`PeerChannel`]).
pub fn worker_client(ch: Channel) -> WorkerServiceClient<PeerChannel> {
    WorkerServiceClient::new(PeerChannel::new(ch))
        .max_decoding_message_size(MAX_MESSAGE_SIZE)
        .max_encoding_message_size(MAX_MESSAGE_SIZE)
}

/// A MasterService client over `ch` with 2 GiB message limits, its responses' declared
/// lengths checked before they are reserved ([`PeerChannel`]).
pub fn master_client(ch: Channel) -> MasterServiceClient<PeerChannel> {
    MasterServiceClient::new(PeerChannel::new(ch))
        .max_decoding_message_size(MAX_MESSAGE_SIZE)
        .max_encoding_message_size(MAX_MESSAGE_SIZE)
}
