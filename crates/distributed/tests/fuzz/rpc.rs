//! gRPC calls with any body: a request is whatever bytes the fuzzer made (a valid message
//! or a mangled one) sent over a real tonic channel to the method's path; the outcome is
//! the call's gRPC status and, when OK, the response message.

use std::time::Duration;

use bytes::Bytes;
use http::HeaderValue;
use http_body_util::{BodyExt, Full};
use prost::Message;
use tonic::body::Body;
use tonic::codegen::Service;
use tonic::transport::Channel;

/// How a call ended.
#[derive(Debug)]
pub enum Outcome {
    /// `grpc-status: 0` and the response message (without its 5-byte prefix).
    Ok(Bytes),
    /// An error status: its code and message.
    Status(i32, String),
    /// The connection or the HTTP/2 stream failed.
    Transport(String),
    /// The call did not end within the client's bound.
    Hang,
}

impl Outcome {
    /// A short name for the counts: the code's name, `TRANSPORT` or `HANG`.
    pub fn label(&self) -> String {
        match self {
            Outcome::Ok(_) => "OK".into(),
            Outcome::Status(c, _) => code_name(*c),
            // The client's own deadline (the channel honours `grpc-timeout`).
            Outcome::Transport(e) if e.contains("Timeout expired") => "CLIENT_TIMEOUT".into(),
            Outcome::Transport(_) => "TRANSPORT".into(),
            Outcome::Hang => "HANG".into(),
        }
    }

    /// The response decoded as `M`, when the call succeeded and it decodes.
    pub fn message<M: Message + Default>(&self) -> Option<M> {
        match self {
            Outcome::Ok(b) => M::decode(b.clone()).ok(),
            _ => None,
        }
    }
}

/// TensorFlow's name of a code (`error::Code`).
pub fn code_name(c: i32) -> String {
    let names = [
        "OK",
        "CANCELLED",
        "UNKNOWN",
        "INVALID_ARGUMENT",
        "DEADLINE_EXCEEDED",
        "NOT_FOUND",
        "ALREADY_EXISTS",
        "PERMISSION_DENIED",
        "RESOURCE_EXHAUSTED",
        "FAILED_PRECONDITION",
        "ABORTED",
        "OUT_OF_RANGE",
        "UNIMPLEMENTED",
        "INTERNAL",
        "UNAVAILABLE",
        "DATA_LOSS",
        "UNAUTHENTICATED",
    ];
    names.get(c as usize).map_or_else(|| format!("CODE_{c}"), |s| s.to_string())
}

/// `message` with an uncompressed gRPC prefix.
pub fn framed(message: &impl Message) -> Vec<u8> {
    let m = message.encode_to_vec();
    let mut out = Vec::with_capacity(5 + m.len());
    out.push(0);
    out.extend_from_slice(&(m.len() as u32).to_be_bytes());
    out.extend(m);
    out
}

/// Calls `path` with `body` (already gRPC-framed, or not) and a `grpc-timeout` of
/// `timeout`; a call that has not ended `timeout` + 10 s later is a [`Outcome::Hang`].
pub async fn call(channel: &Channel, path: &str, body: Vec<u8>, timeout: Duration) -> Outcome {
    let mut channel = channel.clone();
    let mut req = http::Request::new(Body::new(Full::new(Bytes::from(body))));
    *req.method_mut() = http::Method::POST;
    *req.uri_mut() = match http::Uri::try_from(format!("http://fuzz{path}")) {
        Ok(u) => u,
        Err(e) => return Outcome::Transport(format!("bad path {path:?}: {e}")),
    };
    let h = req.headers_mut();
    h.insert(http::header::CONTENT_TYPE, HeaderValue::from_static("application/grpc"));
    h.insert(http::header::TE, HeaderValue::from_static("trailers"));
    h.insert("grpc-timeout", HeaderValue::from_str(&format!("{}m", timeout.as_millis().max(1))).unwrap());
    let fut = async move {
        std::future::poll_fn(|cx| channel.poll_ready(cx)).await.map_err(|e| chain(&e))?;
        let resp = channel.call(req).await.map_err(|e| chain(&e))?;
        let (parts, body) = resp.into_parts();
        let collected = body.collect().await.map_err(|e| format!("{e:?}"))?;
        let trailers = collected.trailers().cloned();
        let data = collected.to_bytes();
        Ok::<_, String>((parts.status, parts.headers, trailers, data))
    };
    let (status, headers, trailers, data) = match tokio::time::timeout(timeout + Duration::from_secs(10), fut).await {
        Err(_) => return Outcome::Hang,
        Ok(Err(e)) => return Outcome::Transport(e),
        Ok(Ok(r)) => r,
    };
    if status != http::StatusCode::OK {
        return Outcome::Transport(format!("HTTP status {status}"));
    }
    let grpc = trailers.as_ref().and_then(|t| t.get("grpc-status")).or_else(|| headers.get("grpc-status"));
    let message = trailers.as_ref().and_then(|t| t.get("grpc-message")).or_else(|| headers.get("grpc-message"));
    let code = match grpc.and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<i32>().ok()) {
        Some(c) => c,
        None => return Outcome::Transport("the response has no grpc-status".into()),
    };
    if code != 0 {
        let msg = message.and_then(|m| m.to_str().ok()).unwrap_or("");
        let msg = percent_decode(msg);
        return Outcome::Status(code, msg);
    }
    if data.len() < 5 {
        return Outcome::Transport(format!("an OK response of {} bytes", data.len()));
    }
    Outcome::Ok(data.slice(5..))
}

/// An error with its sources.
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(c) = src {
        s.push_str(&format!(": {c}"));
        src = c.source();
    }
    s
}

/// gRPC's percent-encoding of `grpc-message` undone.
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).ok();
            if let Some(v) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Checks one call's outcome and returns its label and message. A hang, an error without a
/// message and a panic (contained or not) are findings. `body_method`'s OK replies may
/// carry a status in their body (read by `body_status`), which is checked the same way.
pub fn check<M: Message + Default>(
    run: &mut super::Run,
    i: usize,
    method: &str,
    out: &Outcome,
    body_method: &str,
    body_status: fn(&M) -> (i32, String),
) -> (String, String) {
    let mut label = format!("{method}:{}", out.label());
    let mut message = match out {
        Outcome::Status(_, m) | Outcome::Transport(m) => m.clone(),
        _ => String::new(),
    };
    match out {
        Outcome::Hang => run.finding(i, format!("{method} did not return")),
        Outcome::Status(c, m) if m.is_empty() => run.finding(i, format!("{method}: code {c} without a message")),
        Outcome::Status(_, m) if m.contains("panicked") => run.finding(i, format!("{method}: {m}")),
        Outcome::Ok(_) if method == body_method => {
            if let Some((code, said)) = out.message::<M>().map(|r| body_status(&r)) {
                if code != 0 {
                    label = format!("{method}:body:{}", code_name(code));
                    if said.is_empty() || said.contains("panicked") {
                        run.finding(i, format!("{method}: in-body status {code}: {said:?}"));
                    }
                    message = said;
                }
            }
        }
        _ => {}
    }
    (label, message)
}
