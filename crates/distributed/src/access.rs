//! Who may connect to a task, and how connections are accepted.
//!
//! - `--allow_from CIDR,...` ([`AllowList`]): a connection from any other address is closed
//!   as soon as it is accepted, before any RPC (this works with TensorFlow's Python client,
//!   which cannot present credentials). Without a list every address may connect.
//! - The accept loop backs off when accepting fails (the descriptor limit, EMFILE/ENFILE:
//!   from 5 ms doubling to 1 s, logged at most once a second) instead of spinning, and holds
//!   at most `max_connections` connections open at once: further ones wait in the listen
//!   backlog until one closes.
//! - Control RPCs (`Shutdown`) are answered only for peers on loopback, in the allow list,
//!   or at the address of one of the cluster's tasks ([`may_control`]).

use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use ferroflow_core::Status;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tonic::transport::server::{Connected, TcpConnectInfo};

/// Default most connections a task holds open at once.
pub const DEFAULT_MAX_CONNECTIONS: usize = 4096;

/// Addresses allowed to connect (`--allow_from`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AllowList(Vec<ipnet::IpNet>);

impl AllowList {
    /// Parses `CIDR,CIDR,...` (a bare address is one host), e.g. `10.0.0.0/8,127.0.0.1`.
    pub fn parse(s: &str) -> Result<AllowList, Status> {
        let mut nets = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let net = part
                .parse::<ipnet::IpNet>()
                .or_else(|_| part.parse::<IpAddr>().map(ipnet::IpNet::from))
                .map_err(|_| {
                    Status::invalid_argument(format!(
                        "--allow_from: '{part}' is neither an address nor a CIDR block (e.g. 10.0.0.0/8)"
                    ))
                })?;
            nets.push(net);
        }
        if nets.is_empty() {
            return Err(Status::invalid_argument("--allow_from names no address"));
        }
        Ok(AllowList(nets))
    }

    /// Whether `ip` is in the list (an IPv4 address seen as IPv6-mapped counts as IPv4).
    pub fn allows(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        self.0.iter().any(|n| n.contains(&ip))
    }
}

fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// Whether `host` (an advertised task host) is a loopback name or address.
pub fn is_loopback_host(host: &str) -> bool {
    let h = host.trim_start_matches('[').trim_end_matches(']');
    h.eq_ignore_ascii_case("localhost") || h.parse::<IpAddr>().is_ok_and(|ip| canonical(ip).is_loopback())
}

/// Whether the peer at `peer` may use the control service: loopback, the allow list, or
/// an address one of `cluster_hosts` resolves to (resolution bounded by 2 s).
pub(crate) async fn may_control(peer: Option<SocketAddr>, allow: Option<&AllowList>, cluster_hosts: &[String]) -> bool {
    let Some(peer) = peer else { return false };
    let ip = canonical(peer.ip());
    if ip.is_loopback() || allow.is_some_and(|a| a.allows(ip)) {
        return true;
    }
    for h in cluster_hosts {
        let lookup = tokio::net::lookup_host(format!("{}:0", h.trim_start_matches('[').trim_end_matches(']')));
        if let Ok(Ok(addrs)) = tokio::time::timeout(Duration::from_secs(2), lookup).await {
            if addrs.into_iter().any(|a| canonical(a.ip()) == ip) {
                return true;
            }
        }
    }
    false
}

/// An accepted connection, counted until it closes.
pub(crate) struct Conn {
    io: TcpStream,
    _permit: OwnedSemaphorePermit,
}

impl Connected for Conn {
    type ConnectInfo = TcpConnectInfo;
    fn connect_info(&self) -> TcpConnectInfo {
        self.io.connect_info()
    }
}

impl AsyncRead for Conn {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl AsyncWrite for Conn {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}

/// The accept loop of task `task` (see the module docs); connections come out of the
/// returned stream. The loop ends when the stream is dropped.
pub(crate) fn incoming(
    listener: TcpListener,
    allow: Option<Arc<AllowList>>,
    max_connections: usize,
    task: String,
) -> tokio_stream::wrappers::ReceiverStream<std::io::Result<Conn>> {
    let (tx, rx) = mpsc::channel(16);
    let slots = Arc::new(Semaphore::new(max_connections.max(1)));
    tokio::spawn(async move {
        let mut backoff = Duration::from_millis(5);
        let mut last_log: Option<Instant> = None;
        let mut refused = 0u64;
        loop {
            let permit = tokio::select! {
                p = slots.clone().acquire_owned() => match p { Ok(p) => p, Err(_) => return },
                _ = tx.closed() => return,
            };
            let accepted = tokio::select! {
                a = listener.accept() => a,
                _ = tx.closed() => return,
            };
            match accepted {
                Ok((io, peer)) => {
                    backoff = Duration::from_millis(5);
                    if allow.as_ref().is_some_and(|a| !a.allows(peer.ip())) {
                        refused += 1;
                        if last_log.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
                            tracing::warn!(%task, %peer, refused, "connection closed: address not in --allow_from");
                            last_log = Some(Instant::now());
                        }
                        drop(io);
                        continue;
                    }
                    let _ = io.set_nodelay(true);
                    if tx.send(Ok(Conn { io, _permit: permit })).await.is_err() {
                        return;
                    }
                }
                Err(e) => {
                    if last_log.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
                        tracing::warn!(%task, error = %e, backoff_ms = backoff.as_millis() as u64, "accept failed; backing off");
                        last_log = Some(Instant::now());
                    }
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(1));
                }
            }
        }
    });
    tokio_stream::wrappers::ReceiverStream::new(rx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_lists_parse_and_match() {
        let a = AllowList::parse("10.0.0.0/8, 127.0.0.1,::1").unwrap();
        assert!(a.allows("10.1.2.3".parse().unwrap()));
        assert!(a.allows("127.0.0.1".parse().unwrap()));
        assert!(a.allows("::ffff:10.9.9.9".parse().unwrap()), "IPv4-mapped IPv6 counts as IPv4");
        assert!(a.allows("::1".parse().unwrap()));
        assert!(!a.allows("127.0.0.2".parse().unwrap()));
        assert!(!a.allows("192.168.1.1".parse().unwrap()));
        for bad in ["", "10.0.0.0/33", "example.com", " , "] {
            assert!(AllowList::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn loopback_hosts() {
        for h in ["localhost", "127.0.0.1", "127.3.4.5", "::1", "[::1]", "LOCALHOST"] {
            assert!(is_loopback_host(h), "{h}");
        }
        for h in ["0.0.0.0", "10.0.0.1", "ps-0.svc", "example.com"] {
            assert!(!is_loopback_host(h), "{h}");
        }
    }
}
