//! The channel cache: one HTTP/2 channel per peer address, created lazily and reused by
//! every session, step and RPC (tonic multiplexes calls over it). Channels connect with a
//! bounded connect timeout, raised message limits and 32 MiB windows.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::Duration;

use ferroflow_core::Status;
use ferroflow_proto::master_service_client::MasterServiceClient;
use ferroflow_proto::worker_service_client::WorkerServiceClient;
use tonic::transport::{Channel, Endpoint};

use crate::rpc_util::{MAX_FRAME_SIZE, MAX_MESSAGE_SIZE, WINDOW_SIZE};

/// Lazily connected channels keyed by `host:port`.
pub struct ChannelCache {
    connect_timeout: Duration,
    channels: Mutex<HashMap<String, Channel>>,
    /// Peers that answered ferroflow's batched RecvTensors with UNIMPLEMENTED (TensorFlow).
    unbatched: Mutex<HashSet<String>>,
}

impl ChannelCache {
    /// An empty cache whose channels give up connecting after `connect_timeout`.
    pub fn new(connect_timeout: Duration) -> ChannelCache {
        ChannelCache { connect_timeout, channels: Mutex::new(HashMap::new()), unbatched: Mutex::new(HashSet::new()) }
    }

    /// The channel to `addr` (`host:port`, or a `grpc://`/`http://` URL). Must be called
    /// within a tokio runtime.
    pub fn channel(&self, addr: &str) -> Result<Channel, Status> {
        let mut g = self.channels.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = g.get(addr) {
            return Ok(c.clone());
        }
        let c = endpoint(addr, self.connect_timeout)?.connect_lazy();
        g.insert(addr.to_string(), c.clone());
        Ok(c)
    }

    /// A WorkerService client for `addr`.
    pub fn worker(&self, addr: &str) -> Result<WorkerServiceClient<Channel>, Status> {
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

/// The endpoint for `addr` with ferroflow's transport settings.
pub fn endpoint(addr: &str, connect_timeout: Duration) -> Result<Endpoint, Status> {
    let hostport = strip_scheme(addr);
    let ep = Endpoint::from_shared(format!("http://{hostport}")).map_err(|e| {
        Status::invalid_argument(format!("'{addr}' is not a valid server address (expected host:port): {e}"))
    })?;
    Ok(ep
        .connect_timeout(connect_timeout)
        .tcp_nodelay(true)
        .initial_stream_window_size(WINDOW_SIZE)
        .initial_connection_window_size(WINDOW_SIZE)
        .max_frame_size(MAX_FRAME_SIZE)
        .http2_keep_alive_interval(Duration::from_secs(30))
        .keep_alive_timeout(Duration::from_secs(20)))
}

/// `grpc://h:p` → `h:p` (also `http://`).
pub fn strip_scheme(addr: &str) -> &str {
    addr.strip_prefix("grpc://").or_else(|| addr.strip_prefix("http://")).unwrap_or(addr)
}

/// A WorkerService client over `ch` with 2 GiB message limits.
pub fn worker_client(ch: Channel) -> WorkerServiceClient<Channel> {
    WorkerServiceClient::new(ch).max_decoding_message_size(MAX_MESSAGE_SIZE).max_encoding_message_size(MAX_MESSAGE_SIZE)
}

/// A MasterService client over `ch` with 2 GiB message limits.
pub fn master_client(ch: Channel) -> MasterServiceClient<Channel> {
    MasterServiceClient::new(ch).max_decoding_message_size(MAX_MESSAGE_SIZE).max_encoding_message_size(MAX_MESSAGE_SIZE)
}
