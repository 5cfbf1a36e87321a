//! [`Transport`]: how a task listens and whom it lets in — the part of [`ServerOptions`]
//! that a command line sets and a training job hands to every task it starts.

use crate::access::AllowList;
use crate::tls::ServerTls;
use crate::ServerOptions;

/// Bind address, allow list, connection bound and TLS of a task.
#[derive(Clone, Debug, Default)]
pub struct Transport {
    /// See [`ServerOptions::bind_host`].
    pub bind_host: Option<String>,
    /// See [`ServerOptions::allow_from`].
    pub allow_from: Option<AllowList>,
    /// See [`ServerOptions::max_connections`].
    pub max_connections: Option<usize>,
    /// See [`ServerOptions::max_connections_per_peer`].
    pub max_connections_per_peer: Option<usize>,
    /// See [`ServerOptions::connection_idle`].
    pub connection_idle: Option<std::time::Duration>,
    /// See [`ServerOptions::tls`].
    pub tls: Option<ServerTls>,
    /// See [`ServerOptions::in_memory`]: every task of the job in this process, no sockets.
    pub in_memory: Option<std::sync::Arc<crate::InMemoryNet>>,
}

impl Transport {
    /// Server options with this transport and defaults for the rest.
    pub fn server_options(&self) -> ServerOptions {
        ServerOptions {
            bind_host: self.bind_host.clone(),
            allow_from: self.allow_from.clone(),
            max_connections: self.max_connections,
            max_connections_per_peer: self.max_connections_per_peer,
            connection_idle: self.connection_idle,
            tls: self.tls.clone(),
            in_memory: self.in_memory.clone(),
            ..Default::default()
        }
    }

    /// The target of the task at `addr` (`host:port`): `grpcs://` with TLS, else `grpc://`.
    pub fn target(&self, addr: &str) -> String {
        format!("{}://{}", if self.tls.is_some() { "grpcs" } else { "grpc" }, crate::strip_scheme(addr))
    }
}
