//! Who may connect to a task, and how connections are accepted.
//!
//! - `--allow_from CIDR,...` ([`AllowList`]): a connection from any other address is closed
//!   as soon as it is accepted, before any RPC (this works with TensorFlow's Python client,
//!   which cannot present credentials). Without a list every address may connect.
//! - The accept loop backs off when accepting fails (the descriptor limit, EMFILE/ENFILE:
//!   from 5 ms doubling to 1 s, logged at most once a second) instead of spinning, and holds
//!   at most `max_connections` connections open at once: further ones wait in the listen
//!   backlog until one closes; one peer address may hold at most `max_per_peer` of them
//!   (further ones from it are closed at once: [`crate::peer_slots`]). A connection that has not sent the HTTP/2 preface and a
//!   first request within [`HANDSHAKE_TIMEOUT`] is closed.
//! - A task with TLS ([`ServerTls`]) runs each connection's TLS handshake beside the accept
//!   loop, bounded by the same timeout, then watches the decrypted stream as above; a
//!   client that speaks plain text or presents no acceptable certificate is closed and
//!   logged (at most once a second).
//! - Control RPCs (`Shutdown`, `ServerInfo`, the master's `Reset`, the worker's
//!   `CleanupAll`: every RPC that is not part of a session or a step) are answered only for
//!   peers on loopback, in the allow list, or at the address of one of the cluster's tasks
//!   ([`may_control`]).
//! - The metrics listener (`--metrics_port`) takes the same allow list.

use std::future::Future;
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

use crate::peer_slots::{PeerSlot, PeerSlots};
use crate::tls::ServerTls;

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

    /// The blocks of the list, as CIDR text (`10.0.0.0/8`, `127.0.0.1/32`).
    pub fn blocks(&self) -> Vec<String> {
        self.0.iter().map(|n| n.to_string()).collect()
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

/// How long an accepted connection has to send the HTTP/2 preface and its first request
/// (a HEADERS frame) before it is closed: a peer that connects and says nothing must not
/// hold a connection slot. gRPC clients send both at once.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(20);

/// The byte stream of a connection: plain TCP, or TLS over it.
enum Io {
    Plain(TcpStream),
    Tls(Box<tokio_rustls::server::TlsStream<TcpStream>>),
}

macro_rules! on_io {
    ($io:expr, $s:ident => $e:expr) => {
        match $io {
            Io::Plain($s) => $e,
            Io::Tls($s) => $e,
        }
    };
}

impl Io {
    fn tcp(&self) -> &TcpStream {
        match self {
            Io::Plain(s) => s,
            Io::Tls(s) => s.get_ref().0,
        }
    }
}

/// An accepted connection, counted until it closes.
pub(crate) struct Conn {
    io: Io,
    _permit: OwnedSemaphorePermit,
    /// Until the first request arrived: its deadline and what was read so far.
    handshake: Option<Handshake>,
    /// A plain-text gRPC client on a TLS task: served only to tell it so.
    plain_on_tls: bool,
    _peer: PeerSlot,
}

/// What a request learns of its connection (in the request's extensions): the addresses,
/// and whether it is a plain-text client on a TLS task, whose every call is answered with
/// an error naming the mismatch (closing the connection would leave the client retrying
/// until its deadline, none the wiser).
#[derive(Clone, Debug)]
pub(crate) struct ConnInfo {
    pub(crate) tcp: TcpConnectInfo,
    pub(crate) plain_on_tls: bool,
}

/// Watches the first bytes of a connection for the HTTP/2 preface and a HEADERS frame.
pub(crate) struct Handshake {
    deadline: Pin<Box<tokio::time::Sleep>>,
    /// Bytes of the stream seen so far (the preface, then frame headers).
    seen: usize,
    /// Stream offset of the next frame header and the bytes of it read so far.
    next_frame: usize,
    header: [u8; 9],
    filled: usize,
}

/// The bounds on a task's connections.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ConnLimits {
    /// Most connections open at once (more wait in the listen backlog).
    pub(crate) max_connections: usize,
    /// Most connections one peer address may hold (more are closed at once).
    pub(crate) max_per_peer: usize,
    /// Until the first request: the first bytes, a TLS handshake and the first HEADERS.
    pub(crate) handshake_timeout: Duration,
}

/// The HTTP/2 client connection preface.
const PREFACE_LEN: usize = 24;
const FRAME_HEADERS: u8 = 0x1;

impl Handshake {
    pub(crate) fn new(timeout: Duration) -> Handshake {
        Handshake {
            deadline: Box::pin(tokio::time::sleep(timeout)),
            seen: 0,
            next_frame: PREFACE_LEN,
            header: [0; 9],
            filled: 0,
        }
    }

    /// Feeds bytes read from the connection; true once a HEADERS frame has begun.
    pub(crate) fn feed(&mut self, mut data: &[u8]) -> bool {
        while !data.is_empty() {
            if self.seen < self.next_frame {
                let skip = (self.next_frame - self.seen).min(data.len());
                self.seen += skip;
                data = &data[skip..];
                continue;
            }
            let take = (9 - self.filled).min(data.len());
            self.header[self.filled..self.filled + take].copy_from_slice(&data[..take]);
            self.filled += take;
            self.seen += take;
            data = &data[take..];
            if self.filled == 9 {
                if self.header[3] == FRAME_HEADERS {
                    return true;
                }
                let len = u32::from_be_bytes([0, self.header[0], self.header[1], self.header[2]]) as usize;
                self.next_frame = self.seen + len;
                self.filled = 0;
            }
        }
        false
    }
}

impl Connected for Conn {
    type ConnectInfo = ConnInfo;
    fn connect_info(&self) -> ConnInfo {
        ConnInfo { tcp: self.io.tcp().connect_info(), plain_on_tls: self.plain_on_tls }
    }
}

impl AsyncRead for Conn {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = on_io!(&mut self.io, s => Pin::new(s).poll_read(cx, buf));
        let Some(h) = self.handshake.as_mut() else { return r };
        if let Poll::Ready(Ok(())) = &r {
            if h.feed(&buf.filled()[before..]) {
                self.handshake = None;
            }
            return r;
        }
        if r.is_pending() && h.deadline.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "no HTTP/2 request within the handshake timeout",
            )));
        }
        r
    }
}

impl AsyncWrite for Conn {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        on_io!(&mut self.io, s => Pin::new(s).poll_write(cx, buf))
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        on_io!(&mut self.io, s => Pin::new(s).poll_flush(cx))
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        on_io!(&mut self.io, s => Pin::new(s).poll_shutdown(cx))
    }
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        on_io!(&mut self.io, s => Pin::new(s).poll_write_vectored(cx, bufs))
    }
    fn is_write_vectored(&self) -> bool {
        on_io!(&self.io, s => s.is_write_vectored())
    }
}

/// The accept loop of task `task` (see the module docs); connections come out of the
/// returned stream. The loop ends when the stream is dropped.
pub(crate) fn incoming(
    listener: TcpListener,
    allow: Option<Arc<AllowList>>,
    limits: ConnLimits,
    tls: Option<ServerTls>,
    task: String,
) -> tokio_stream::wrappers::ReceiverStream<std::io::Result<Conn>> {
    let (tx, rx) = mpsc::channel(16);
    let ConnLimits { max_connections, max_per_peer, handshake_timeout } = limits;
    let slots = Arc::new(Semaphore::new(max_connections.max(1)));
    let peers = PeerSlots::new(max_per_peer);
    let mut over_share = 0u64;
    let tls_log = Arc::new(RateLimitedLog::default());
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
                    let Some(peer_slot) = peers.admit(peer.ip()) else {
                        over_share += 1;
                        if last_log.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
                            tracing::warn!(%task, %peer, refused = over_share, per_peer = peers.max(), "connection closed: the address already holds its most connections (--max_connections_per_peer)");
                            last_log = Some(Instant::now());
                        }
                        drop(io);
                        continue;
                    };
                    let _ = io.set_nodelay(true);
                    let Some(tls) = &tls else {
                        let conn = Conn {
                            io: Io::Plain(io),
                            _permit: permit,
                            handshake: Some(Handshake::new(handshake_timeout)),
                            plain_on_tls: false,
                            _peer: peer_slot,
                        };
                        if tx.send(Ok(conn)).await.is_err() {
                            return;
                        }
                        continue;
                    };
                    // The TLS handshake runs beside the loop. One deadline covers the first
                    // bytes, the TLS handshake and the first request: a client that says
                    // nothing is closed after the handshake timeout, not three of them.
                    let (tls, tx, task, log) = (tls.clone(), tx.clone(), task.clone(), tls_log.clone());
                    let until = Instant::now() + handshake_timeout;
                    let left = move || until.saturating_duration_since(Instant::now());
                    tokio::spawn(async move {
                        if speaks_plain_grpc(&io, left()).await {
                            if log.due() {
                                tracing::warn!(%task, %peer, "a plain-text gRPC client on this TLS task (it should use grpcs:// and a CA): its calls are refused");
                            }
                            let handshake = Some(Handshake::new(left()));
                            let io = Io::Plain(io);
                            let conn = Conn { io, _permit: permit, handshake, plain_on_tls: true, _peer: peer_slot };
                            let _ = tx.send(Ok(conn)).await;
                            return;
                        }
                        match tls_accept(&tls, io, left()).await {
                            Ok(s) => {
                                let handshake = Some(Handshake::new(left()));
                                let io = Io::Tls(Box::new(s));
                                let conn =
                                    Conn { io, _permit: permit, handshake, plain_on_tls: false, _peer: peer_slot };
                                let _ = tx.send(Ok(conn)).await;
                            }
                            Err(why) => {
                                if log.due() {
                                    tracing::warn!(%task, %peer, "TLS connection refused: {why}");
                                }
                            }
                        }
                    });
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

/// Allows one log line a second.
#[derive(Default)]
struct RateLimitedLog(std::sync::Mutex<Option<Instant>>);

impl RateLimitedLog {
    fn due(&self) -> bool {
        let mut last = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if last.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
            *last = Some(Instant::now());
            return true;
        }
        false
    }
}

/// Whether the client on `io` starts with the HTTP/2 preface ("PRI * HTTP/2.0"): plain-text
/// gRPC, where a TLS client starts with a handshake record.
async fn speaks_plain_grpc(io: &TcpStream, timeout: Duration) -> bool {
    let mut first = [0u8; 3];
    matches!(tokio::time::timeout(timeout, io.peek(&mut first)).await, Ok(Ok(3))) && &first == b"PRI"
}

/// The server side of a TLS handshake on `io`, or why it failed.
async fn tls_accept(
    tls: &ServerTls,
    io: TcpStream,
    timeout: Duration,
) -> Result<tokio_rustls::server::TlsStream<TcpStream>, String> {
    match tokio::time::timeout(timeout, tls.acceptor.accept(io)).await {
        Ok(Ok(s)) => Ok(s),
        Ok(Err(e)) if tls.mutual && e.to_string().contains("certificate") => {
            Err(format!("{e} (this task asks every client for a certificate signed by --tls_client_ca)"))
        }
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!("no TLS handshake within {timeout:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(kind: u8, len: usize) -> Vec<u8> {
        let mut f = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, 0, 0, 0, 0, 1];
        f.extend(std::iter::repeat_n(0u8, len));
        f
    }

    #[tokio::test]
    async fn the_handshake_ends_at_the_first_headers_frame() {
        let mut stream = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
        stream.extend(frame(0x4, 6)); // SETTINGS
        stream.extend(frame(0x8, 4)); // WINDOW_UPDATE
        let before_headers = stream.len();
        stream.extend(frame(FRAME_HEADERS, 20));
        // Whole, and byte by byte: only the HEADERS frame's header completes it.
        let mut h = Handshake::new(Duration::from_secs(1));
        assert!(h.feed(&stream));
        let mut h = Handshake::new(Duration::from_secs(1));
        for (i, b) in stream.iter().enumerate() {
            let done = h.feed(std::slice::from_ref(b));
            assert_eq!(done, i == before_headers + 8, "byte {i}");
            if done {
                break;
            }
        }
        // A payload byte equal to the HEADERS type is not mistaken for a frame header.
        let mut h = Handshake::new(Duration::from_secs(1));
        let mut s = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
        let mut settings = frame(0x4, 12);
        settings[9 + 3] = FRAME_HEADERS;
        s.extend(settings);
        assert!(!h.feed(&s));
    }

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
