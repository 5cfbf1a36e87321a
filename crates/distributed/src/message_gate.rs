//! The gRPC messages of a body, checked as its DATA chunks arrive and before any decoder
//! sees them. A message is a 5-byte prefix (compressed flag, big-endian length) and that
//! many bytes; tonic's decoder reserves the declared length as soon as it reads a prefix,
//! so a client that sends 5 bytes declaring 2 GiB would make a server reserve 2 GiB.
//!
//! Here each declared length is first weighed against the task's memory budget
//! ([`ferroflow_core::check_alloc_bytes`], as kernels weigh the buffers they size from
//! input): over it, the call fails with RESOURCE_EXHAUSTED naming the call, the declared
//! bytes and the budget. Within it, a large message's bytes are held back (as the `Bytes`
//! chunks they arrived in: nothing is copied) until half of it has arrived, so what a
//! decoder reserves is never more than twice what the peer actually sent; from then on
//! its bytes pass through as they come. Small messages pass at once.
//!
//! [`gate`] wraps a request body for tonic's services, and [`crate::PeerChannel`] the
//! response bodies of ferroflow's generated clients; the raw paths (RunGraph, RunStep,
//! RecvTensor, both ways) gather bodies as chunks and never reserve a declared length, so
//! they only run the [`Scanner`]'s check (`raw_grpc::read_frames`).

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use bytes::Bytes;
use ferroflow_core::Status;
use http::HeaderMap;
use http_body::Frame;

/// Messages of at most this many bytes pass on at once (what their decoder reserves for
/// them is no more than a few DATA frames would hold).
pub(crate) const PASS_AT_ONCE: usize = 64 << 10;

/// A message's 5-byte gRPC prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Prefix {
    /// The compressed flag (0 or 1; anything else is the decoder's to refuse).
    pub compressed: u8,
    /// The declared length: the bytes that follow (compressed ones if the flag is set).
    pub len: usize,
}

/// Where a body stands in its sequence of messages.
#[derive(Clone, Copy, Debug, Default)]
enum At {
    /// Where a message starts (or the body ends).
    #[default]
    Between,
    /// Reading a prefix: this many of its 5 bytes have arrived.
    Prefix(usize),
    /// In a message of `len` bytes of which `got` have arrived; `passed` once its bytes
    /// go on as they come.
    Body { len: usize, got: usize, passed: bool },
}

/// Follows the gRPC framing of a body over its chunks, checking each prefix as it
/// completes and telling which bytes may go on to a decoder.
#[derive(Debug, Default)]
pub(crate) struct Scanner {
    at: At,
    prefix: [u8; 5],
}

impl Scanner {
    /// Reads the next bytes of the body. `admit` is called with each prefix that completes.
    /// Returns the offset in `data` up to which its bytes may go on to a decoder: every
    /// earlier byte belongs to a complete message or to one that was passed (0: none of
    /// them; the bytes before `data` that were not passed yet go on with them). An error of
    /// `admit` ends the scan; it comes with the offset up to which bytes may go on before it.
    pub(crate) fn scan<E>(
        &mut self,
        data: &[u8],
        mut admit: impl FnMut(Prefix) -> Result<(), E>,
    ) -> Result<usize, (usize, E)> {
        let mut pos = 0;
        let mut cut = 0;
        while pos < data.len() {
            match self.at {
                At::Between | At::Prefix(_) => {
                    let have = if let At::Prefix(n) = self.at { n } else { 0 };
                    let n = (5 - have).min(data.len() - pos);
                    self.prefix[have..have + n].copy_from_slice(&data[pos..pos + n]);
                    pos += n;
                    if have + n < 5 {
                        self.at = At::Prefix(have + n);
                        continue;
                    }
                    let [flag, a, b, c, d] = self.prefix;
                    let len = u32::from_be_bytes([a, b, c, d]) as usize;
                    admit(Prefix { compressed: flag, len }).map_err(|e| (cut, e))?;
                    let passed = len <= PASS_AT_ONCE;
                    self.at = if len == 0 { At::Between } else { At::Body { len, got: 0, passed } };
                    if passed {
                        cut = pos;
                    }
                }
                At::Body { len, got, passed } => {
                    let n = (len - got).min(data.len() - pos);
                    pos += n;
                    let got = got + n;
                    if got == len {
                        self.at = At::Between;
                        cut = pos;
                    } else {
                        // Half of it is here: the rest is plausibly on its way.
                        let passed = passed || got >= len / 2;
                        self.at = At::Body { len, got, passed };
                        if passed {
                            cut = pos;
                        }
                    }
                }
            }
        }
        Ok(cut)
    }

    /// Why the body cannot end here (`None` between messages); `what` names the call.
    pub(crate) fn unfinished(&self, what: &str) -> Option<Status> {
        let why = match self.at {
            At::Between => return None,
            At::Prefix(n) => format!("{n} bytes into a message's 5-byte gRPC prefix"),
            At::Body { len, got, .. } => format!("after {got} of {len} bytes of a message"),
        };
        Some(Status::internal(format!("{what}: the body ended {why}")))
    }
}

/// RESOURCE_EXHAUSTED unless a message of `len` bytes, as a prefix of `what` (a call)
/// declares it, fits the task's memory budget beside what the task holds.
pub(crate) fn admit(what: &str, p: Prefix) -> Result<(), Status> {
    ferroflow_core::check_alloc_bytes(Some(p.len as u64), || {
        format!("{what} (a gRPC message whose prefix declares {} bytes)", p.len)
    })
}

/// A body's chunks, with the bytes of a message held back until [`Scanner::scan`] passes
/// them (split without copying).
#[derive(Debug, Default)]
pub(crate) struct Gate {
    scanner: Scanner,
    held: Vec<Bytes>,
}

impl Gate {
    /// Takes the next chunk: appends to `out` what may go on to the decoder, holding the
    /// rest. A message `admit` refuses is its error, after the messages before it went on.
    pub(crate) fn push<E>(
        &mut self,
        mut chunk: Bytes,
        out: &mut VecDeque<Bytes>,
        admit: impl FnMut(Prefix) -> Result<(), E>,
    ) -> Result<(), E> {
        let (cut, refused) = match self.scanner.scan(&chunk, admit) {
            Ok(cut) => (cut, None),
            Err((cut, e)) => (cut, Some(e)),
        };
        if cut > 0 {
            out.extend(self.held.drain(..));
            out.push_back(if cut == chunk.len() { std::mem::take(&mut chunk) } else { chunk.split_to(cut) });
        }
        if let Some(e) = refused {
            return Err(e);
        }
        if !chunk.is_empty() {
            self.held.push(chunk);
        }
        Ok(())
    }

    /// Whether the body may end here (no message begun and unfinished).
    pub(crate) fn between(&self) -> bool {
        matches!(self.scanner.at, At::Between)
    }

    /// See [`Scanner::unfinished`].
    pub(crate) fn unfinished(&self, what: &str) -> Option<Status> {
        self.scanner.unfinished(what)
    }
}

/// How a gated body ends once what it passed is read.
enum End {
    Error(tonic::Status),
    Trailers(HeaderMap),
    Eof,
}

/// A request or response body whose messages go through a [`Gate`] (see the module's doc).
pub(crate) struct Gated<B> {
    inner: B,
    /// The body in errors, e.g. `a request of /tensorflow.MasterService/CreateSession`.
    what: Arc<str>,
    gate: Gate,
    ready: VecDeque<Bytes>,
    end: Option<End>,
    finished: bool,
}

impl<B> Gated<B> {
    pub(crate) fn new(inner: B, what: Arc<str>) -> Gated<B> {
        Gated { inner, what, gate: Gate::default(), ready: VecDeque::new(), end: None, finished: false }
    }

    /// The end after the body's last frame: an error if it stopped inside a message.
    fn ended(&self, then: End) -> End {
        match self.gate.unfinished(&self.what) {
            Some(e) => End::Error(crate::rpc_util::to_grpc(e)),
            None => then,
        }
    }
}

impl<B> http_body::Body for Gated<B>
where
    B: http_body::Body<Data = Bytes, Error = tonic::Status> + Unpin,
{
    type Data = Bytes;
    type Error = tonic::Status;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, tonic::Status>>> {
        let this = self.get_mut();
        loop {
            if let Some(b) = this.ready.pop_front() {
                return Poll::Ready(Some(Ok(Frame::data(b))));
            }
            if let Some(end) = this.end.take() {
                this.finished = true;
                return Poll::Ready(match end {
                    End::Error(e) => Some(Err(e)),
                    End::Trailers(t) => Some(Ok(Frame::trailers(t))),
                    End::Eof => None,
                });
            }
            if this.finished {
                return Poll::Ready(None);
            }
            // Read on while bytes are only held: the peer's flow-control window is released
            // as its chunks are read, so a message that is held back still arrives.
            let end = match ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
                None => this.ended(End::Eof),
                Some(Err(e)) => End::Error(e),
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => {
                        let (gate, ready, what) = (&mut this.gate, &mut this.ready, &this.what);
                        match gate.push(data, ready, |p| admit(what, p)) {
                            Ok(()) => continue,
                            Err(e) => End::Error(crate::rpc_util::to_grpc(e)),
                        }
                    }
                    Err(frame) => match frame.into_trailers() {
                        Ok(t) => this.ended(End::Trailers(t)),
                        Err(_) => continue,
                    },
                },
            };
            this.end = Some(end);
        }
    }

    fn is_end_stream(&self) -> bool {
        self.finished
            || (self.inner.is_end_stream() && self.ready.is_empty() && self.end.is_none() && self.gate.between())
    }
}

/// `req` with its body's messages gated (see the module's doc), for a service that decodes
/// them with tonic's codec.
pub(crate) fn gate(req: http::Request<tonic::body::Body>) -> http::Request<tonic::body::Body> {
    let what: Arc<str> = Arc::from(format!("a request of {}", req.uri().path()));
    req.map(|b| tonic::body::Body::new(Gated::new(b, what)))
}

#[cfg(test)]
#[path = "message_gate_tests.rs"]
mod tests;
