//! The flags that say how a task listens and whom it lets in, shared by `ferroflow server`
//! and the tasks of `ferroflow train`.

use std::path::PathBuf;

use ferroflow_distributed::{AllowList, ServerTls, Transport};

#[derive(clap::Args, Debug, Default, Clone)]
pub struct TransportArgs {
    /// Host to bind (default: loopback when the task's cluster address is loopback, else
    /// 0.0.0.0; the advertised address stays the cluster's).
    #[arg(long)]
    pub bind: Option<String>,
    /// Only these addresses may connect: `CIDR,...` (a bare address is one host), e.g.
    /// `10.0.0.0/8,127.0.0.1`; other connections are closed before any RPC.
    #[arg(long = "allow_from", alias = "allow-from")]
    pub allow_from: Option<String>,
    /// Most connections held open at once; further ones wait until one closes.
    #[arg(long = "max_connections", alias = "max-connections")]
    pub max_connections: Option<usize>,
    /// Most connections one address holds open at once; further ones from it are closed at
    /// once, so one client cannot lock the others out. Default: a quarter of
    /// `--max_connections`.
    #[arg(long = "max_connections_per_peer", alias = "max-connections-per-peer")]
    pub max_connections_per_peer: Option<usize>,
    /// Close a connection after this many seconds without a request (its client reconnects
    /// on its next call); 0: never. When every connection slot is taken, the connection idle
    /// the longest is closed to make room. Default: 600.
    #[arg(long = "connection_idle_seconds", alias = "connection-idle-seconds")]
    pub connection_idle_seconds: Option<f64>,
    /// Serve TLS with this PEM certificate chain (with `--tls_key`); the target becomes
    /// `grpcs://host:port` and the other tasks are reached over TLS with the same identity.
    #[arg(long = "tls_cert", alias = "tls-cert", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The PEM private key of `--tls_cert`.
    #[arg(long = "tls_key", alias = "tls-key", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Mutual TLS: every client must present a certificate signed by this PEM CA.
    #[arg(long = "tls_client_ca", alias = "tls-client-ca", requires = "tls_cert")]
    pub tls_client_ca: Option<PathBuf>,
    /// The PEM CA that signs the other tasks' certificates (default: `--tls_client_ca`).
    #[arg(long = "tls_ca", alias = "tls-ca", requires = "tls_cert")]
    pub tls_ca: Option<PathBuf>,
    /// Tensor transfers of at least this many bytes cross this host's link one at a time in
    /// each direction, first come first served, instead of sharing it (a ps serving many
    /// workers keeps both directions of its link busy); 0 turns pacing off. Process-wide.
    #[arg(long = "transfer_pacing_bytes", alias = "transfer-pacing-bytes", default_value_t = ferroflow_distributed::DEFAULT_PACE_BYTES)]
    pub transfer_pacing_bytes: usize,
}

impl TransportArgs {
    /// The transport these flags ask for; `default_bind` when `--bind` is not given. Also
    /// sets this process's transfer pacing (a host-wide setting: the link is the host's).
    pub fn transport(&self, default_bind: Option<String>) -> Result<Transport, String> {
        ferroflow_distributed::set_pace_bytes(self.transfer_pacing_bytes);
        Ok(Transport {
            bind_host: self.bind.clone().or(default_bind),
            allow_from: self.allow_from.as_deref().map(AllowList::parse).transpose().map_err(|e| e.message)?,
            max_connections: self.max_connections,
            max_connections_per_peer: self.max_connections_per_peer,
            connection_idle: self
                .connection_idle_seconds
                .map(|s| {
                    std::time::Duration::try_from_secs_f64(s)
                        .map_err(|_| format!("--connection_idle_seconds {s}: not a number of seconds"))
                })
                .transpose()?,
            tls: match (&self.tls_cert, &self.tls_key) {
                (Some(c), Some(k)) => Some(
                    ServerTls::from_files(c, k, self.tls_client_ca.as_deref(), self.tls_ca.as_deref())
                        .map_err(|e| e.message)?,
                ),
                _ => None,
            },
            in_memory: None,
        })
    }
}
