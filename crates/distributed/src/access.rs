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
//!   first request within [`HANDSHAKE_TIMEOUT`] is closed ([`crate::conn_handshake`]). A
//!   connection idle longer than `--connection_idle_seconds` is closed, and when every slot
//!   is taken the connection idle the longest makes room ([`crate::conn_idle`]).
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
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use rustls_pki_types::CertificateDer;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tonic::transport::server::{Connected, TcpConnectInfo};

pub use crate::allow_list::{is_loopback_host, AllowList};
pub(crate) use crate::allow_list::{may_control, Caller};
use crate::conn_handshake::Handshake;
use crate::conn_idle::{ConnActivity, ConnRegistry, IdleWatch, EVICT_MIN_IDLE};
use crate::peer_slots::{PeerSlot, PeerSlots};
use crate::tls::ServerTls;

/// Default most connections a task holds open at once.
pub const DEFAULT_MAX_CONNECTIONS: usize = 4096;

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
    /// Closes the connection when the registry asks and it is idle.
    idle: IdleWatch,
    /// The client's certificate, verified by the TLS handshake (mutual TLS).
    peer_cert: Option<Arc<CertificateDer<'static>>>,
}

impl Conn {
    fn new(io: Io, permit: OwnedSemaphorePermit, peer: PeerSlot, new: NewConn<'_>) -> Conn {
        let peer_cert = match &io {
            Io::Tls(s) => s.get_ref().1.peer_certificates().and_then(|c| c.first()).map(|c| Arc::new(c.clone())),
            Io::Plain(_) => None,
        };
        Conn {
            io,
            _permit: permit,
            handshake: Some(Handshake::new(new.handshake)),
            plain_on_tls: new.plain_on_tls,
            _peer: peer,
            idle: IdleWatch::new(new.registry.register()),
            peer_cert,
        }
    }
}

/// How a new connection starts: the time left for its first request, whether it is a
/// plain client on a TLS task, and the registry of the listener's connections.
struct NewConn<'a> {
    handshake: Duration,
    plain_on_tls: bool,
    registry: &'a ConnRegistry,
}

/// What a request learns of its connection (in the request's extensions): the addresses,
/// and whether it is a plain-text client on a TLS task, whose every call is answered with
/// an error naming the mismatch (closing the connection would leave the client retrying
/// until its deadline, none the wiser).
#[derive(Clone, Debug)]
pub(crate) struct ConnInfo {
    pub(crate) tcp: TcpConnectInfo,
    pub(crate) plain_on_tls: bool,
    /// The connection's activity: a request counts on it while it is answered.
    pub(crate) activity: Arc<ConnActivity>,
    /// The client certificate a mutual-TLS handshake verified.
    pub(crate) peer_cert: Option<Arc<CertificateDer<'static>>>,
}

/// The bounds on a task's connections.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ConnLimits {
    /// Most connections open at once (more wait in the listen backlog, or take the place
    /// of the connection idle the longest).
    pub(crate) max_connections: usize,
    /// Most connections one peer address may hold (more are closed at once).
    pub(crate) max_per_peer: usize,
    /// Until the first request: the first bytes, a TLS handshake and the first HEADERS.
    pub(crate) handshake_timeout: Duration,
    /// A connection idle this long is closed (None: never).
    pub(crate) idle_timeout: Option<Duration>,
}

impl Connected for Conn {
    type ConnectInfo = ConnInfo;
    fn connect_info(&self) -> ConnInfo {
        ConnInfo {
            tcp: self.io.tcp().connect_info(),
            plain_on_tls: self.plain_on_tls,
            activity: self.idle.activity().clone(),
            peer_cert: self.peer_cert.clone(),
        }
    }
}

impl AsyncRead for Conn {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = on_io!(&mut self.io, s => Pin::new(s).poll_read(cx, buf));
        if let Poll::Ready(Ok(())) = &r {
            let read = &buf.filled()[before..];
            self.idle.activity().transferred(read.len());
            if self.handshake.as_mut().is_some_and(|h| h.feed(read)) {
                self.handshake = None;
            }
            return r;
        }
        if r.is_pending() {
            if let Some(h) = self.handshake.as_mut() {
                if h.deadline.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(Err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        "no HTTP/2 request within the handshake timeout",
                    )));
                }
            }
            if let Some(e) = self.idle.poll_closed(cx) {
                return Poll::Ready(Err(e));
            }
        }
        r
    }
}

impl AsyncWrite for Conn {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        let r = on_io!(&mut self.io, s => Pin::new(s).poll_write(cx, buf));
        if let Poll::Ready(Ok(n)) = &r {
            self.idle.activity().transferred(*n);
        }
        r
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
        let r = on_io!(&mut self.io, s => Pin::new(s).poll_write_vectored(cx, bufs));
        if let Poll::Ready(Ok(n)) = &r {
            self.idle.activity().transferred(*n);
        }
        r
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
    let ConnLimits { max_connections, max_per_peer, handshake_timeout, idle_timeout } = limits;
    let slots = Arc::new(Semaphore::new(max_connections.max(1)));
    let peers = PeerSlots::new(max_per_peer);
    let mut over_share = 0u64;
    let tls_log = Arc::new(RateLimitedLog::default());
    let registry = Arc::new(ConnRegistry::default());
    if let Some(idle) = idle_timeout {
        // Closes connections idle too long, checking a few times per timeout.
        let (registry, tx, task) = (registry.clone(), tx.clone(), task.clone());
        tokio::spawn(async move {
            let every = (idle / 4).clamp(Duration::from_millis(50), Duration::from_secs(10));
            loop {
                tokio::select! {
                    _ = tokio::time::sleep(every) => {}
                    _ = tx.closed() => return,
                }
                let n = registry.close_idle(idle);
                if n > 0 {
                    tracing::debug!(%task, closed = n, idle_secs = idle.as_secs_f64(), "idle connections closed");
                }
            }
        });
    }
    tokio::spawn(async move {
        let mut backoff = Duration::from_millis(5);
        let mut last_log: Option<Instant> = None;
        let mut refused = 0u64;
        loop {
            // At the cap, the connection idle the longest makes room; with none idle the
            // next connection waits in the listen backlog (asking again every 500 ms).
            let permit = loop {
                if slots.available_permits() == 0 && registry.close_oldest_idle(EVICT_MIN_IDLE) {
                    tracing::debug!(%task, "connection cap reached: the connection idle the longest is closed");
                }
                tokio::select! {
                    p = slots.clone().acquire_owned() => match p { Ok(p) => break p, Err(_) => return },
                    _ = tokio::time::sleep(Duration::from_millis(500)) => {}
                    _ = tx.closed() => return,
                }
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
                        let new = NewConn { handshake: handshake_timeout, plain_on_tls: false, registry: &registry };
                        let conn = Conn::new(Io::Plain(io), permit, peer_slot, new);
                        if tx.send(Ok(conn)).await.is_err() {
                            return;
                        }
                        continue;
                    };
                    // The TLS handshake runs beside the loop. One deadline covers the first
                    // bytes, the TLS handshake and the first request: a client that says
                    // nothing is closed after the handshake timeout, not three of them.
                    let (tls, tx, task, log) = (tls.clone(), tx.clone(), task.clone(), tls_log.clone());
                    let registry = registry.clone();
                    let until = Instant::now() + handshake_timeout;
                    let left = move || until.saturating_duration_since(Instant::now());
                    tokio::spawn(async move {
                        if speaks_plain_grpc(&io, left()).await {
                            if log.due() {
                                tracing::warn!(%task, %peer, "a plain-text gRPC client on this TLS task (it should use grpcs:// and a CA): its calls are refused");
                            }
                            let new = NewConn { handshake: left(), plain_on_tls: true, registry: &registry };
                            let conn = Conn::new(Io::Plain(io), permit, peer_slot, new);
                            let _ = tx.send(Ok(conn)).await;
                            return;
                        }
                        match tls_accept(&tls, io, left()).await {
                            Ok(s) => {
                                let new = NewConn { handshake: left(), plain_on_tls: false, registry: &registry };
                                let conn = Conn::new(Io::Tls(Box::new(s)), permit, peer_slot, new);
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

/// Whether a TLS handshake failed on the client's certificate (none sent, or one this side
/// does not accept), as rustls reports it inside the I/O error.
fn certificate_refused(e: &std::io::Error) -> bool {
    use tokio_rustls::rustls::Error as Tls;
    matches!(
        e.get_ref().and_then(|i| i.downcast_ref::<Tls>()),
        Some(Tls::NoCertificatesPresented | Tls::InvalidCertificate(_))
    )
}

/// The server side of a TLS handshake on `io`, or why it failed.
async fn tls_accept(
    tls: &ServerTls,
    io: TcpStream,
    timeout: Duration,
) -> Result<tokio_rustls::server::TlsStream<TcpStream>, String> {
    match tokio::time::timeout(timeout, tls.acceptor.accept(io)).await {
        Ok(Ok(s)) => Ok(s),
        Ok(Err(e)) if tls.mutual && certificate_refused(&e) => {
            Err(format!("{e} (this task asks every client for a certificate signed by --tls_client_ca)"))
        }
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!("no TLS handshake within {timeout:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::certificate_refused;
    use std::io::{Error, ErrorKind};
    use tokio_rustls::rustls::{CertificateError, Error as Tls};

    #[test]
    fn a_refused_client_certificate_is_told_from_other_handshake_failures() {
        let tls = |e: Tls| Error::new(ErrorKind::InvalidData, e);
        assert!(certificate_refused(&tls(Tls::NoCertificatesPresented)));
        assert!(certificate_refused(&tls(Tls::InvalidCertificate(CertificateError::UnknownIssuer))));
        assert!(!certificate_refused(&tls(Tls::DecryptError)));
        assert!(!certificate_refused(&Error::new(ErrorKind::InvalidData, "certificate")));
        assert!(!certificate_refused(&Error::from(ErrorKind::ConnectionReset)));
    }
}
