//! Fuzzing a server's raw connections: TCP connections that send mutated HTTP/2 — garbage
//! after the preface, frames that declare huge lengths, SETTINGS, PING and CONTINUATION
//! floods, HEADERS with bogus paths and pseudo-headers, DATA with mangled gRPC bodies,
//! stream ids and window updates out of range, random frame sequences and bit-flipped
//! versions of valid exchanges. No thread may panic and the server keeps serving.

use crate::common;
use crate::fuzz;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

use common::Cluster;
use fuzz::{bytes as fbytes, values, Rng, Run};

const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Frame types.
const DATA: u8 = 0;
const HEADERS: u8 = 1;
const PRIORITY: u8 = 2;
const RST_STREAM: u8 = 3;
const SETTINGS: u8 = 4;
const PING: u8 = 6;
const GOAWAY: u8 = 7;
const WINDOW_UPDATE: u8 = 8;
const CONTINUATION: u8 = 9;

/// Flags.
const END_STREAM: u8 = 1;
const END_HEADERS: u8 = 4;

/// A frame whose header declares `len` bytes (the payload may be shorter or longer).
fn frame_with_len(out: &mut Vec<u8>, len: u32, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
    out.extend_from_slice(&len.to_be_bytes()[1..]);
    out.push(kind);
    out.push(flags);
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(payload);
}

fn frame(out: &mut Vec<u8>, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
    frame_with_len(out, payload.len() as u32, kind, flags, stream, payload);
}

/// HPACK's integer with an `n`-bit prefix whose high bits are `first`.
fn hpack_int(out: &mut Vec<u8>, first: u8, n: u32, mut v: usize) {
    let max = (1usize << n) - 1;
    if v < max {
        out.push(first | v as u8);
        return;
    }
    out.push(first | max as u8);
    v -= max;
    while v >= 128 {
        out.push((v % 128) as u8 | 0x80);
        v /= 128;
    }
    out.push(v as u8);
}

/// A literal header field without indexing, with a literal name (no Huffman coding).
fn hpack_literal(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.push(0);
    hpack_int(out, 0, 7, name.len());
    out.extend_from_slice(name);
    hpack_int(out, 0, 7, value.len());
    out.extend_from_slice(value);
}

/// Paths a request may name: the services' methods (with any body), unknown ones, odd ones.
/// Never the Control service: its Shutdown would stop the server on purpose.
const PATHS: &[&str] = &[
    "/tensorflow.MasterService/RunStep",
    "/tensorflow.MasterService/CreateSession",
    "/tensorflow.WorkerService/RunGraph",
    "/tensorflow.WorkerService/RecvTensor",
    "/tensorflow.WorkerService/GetStatus",
    "/ferroflow.WorkerExt/RecvTensors",
    "/tensorflow.WorkerService/",
    "/tensorflow.MasterService/Nope",
    "/",
    "",
    "*",
    "/x/y/z",
    "//",
    "/tensorflow.WorkerService/RecvTensor?x=1#f",
];

/// A request's header block: usually gRPC's pseudo-headers and headers, sometimes with a
/// bogus path, method, content type or timeout, a missing pseudo-header or a huge value.
fn header_block(rng: &mut Rng) -> Vec<u8> {
    let mut h = Vec::new();
    let path = if rng.one_in(8) { values::name(rng) } else { rng.pick(PATHS).to_string() };
    if !rng.one_in(12) {
        hpack_literal(&mut h, b":method", rng.pick(&["POST", "POST", "POST", "GET", "CONNECT", ""]).as_bytes());
    }
    if !rng.one_in(12) {
        hpack_literal(&mut h, b":scheme", b"http");
    }
    if !rng.one_in(12) {
        hpack_literal(&mut h, b":path", path.as_bytes());
    }
    hpack_literal(&mut h, b":authority", b"fuzz");
    hpack_literal(
        &mut h,
        b"content-type",
        rng.pick(&["application/grpc", "application/grpc+proto", "text/html"]).as_bytes(),
    );
    hpack_literal(&mut h, b"te", b"trailers");
    if rng.one_in(3) {
        let t = rng.pick(&["1m", "100m", "99999999H", "-1S", "x", "0n", "1000000000000000S"]);
        hpack_literal(&mut h, b"grpc-timeout", t.as_bytes());
    }
    if rng.one_in(5) {
        hpack_literal(&mut h, b"grpc-encoding", rng.pick(&["gzip", "deflate", "snappy", "identity"]).as_bytes());
    }
    if rng.one_in(10) {
        hpack_literal(&mut h, b"x-huge", &vec![b'a'; 1 + rng.below(20000)]);
    }
    if rng.one_in(10) {
        // An indexed field past the tables, or a dynamic table size update past the limit.
        let bad: [&[u8]; 2] = [&[0xff, 0xff, 0xff, 0x0f], &[0x3f, 0xe1, 0xff, 0xff, 0x0f]];
        h.extend_from_slice(bad[rng.below(2)]);
    }
    h
}

/// A gRPC body: a framed message of random or mangled bytes.
fn grpc_body(rng: &mut Rng) -> Vec<u8> {
    let msg = rng.some_bytes(64);
    let msg = if rng.one_in(2) { fbytes::mutate(rng, &msg) } else { msg };
    fbytes::grpc_frame(rng, &msg)
}

/// A valid-looking exchange: SETTINGS, then one to three requests.
fn exchange(rng: &mut Rng) -> Vec<u8> {
    let mut out = PREFACE.to_vec();
    frame(&mut out, SETTINGS, 0, 0, &[]);
    for k in 0..1 + rng.below(3) {
        let stream = 1 + 2 * k as u32;
        let block = header_block(rng);
        if rng.one_in(6) && block.len() > 4 {
            // The block split over CONTINUATION frames.
            let cut = rng.below(block.len());
            frame(&mut out, HEADERS, 0, stream, &block[..cut]);
            frame(&mut out, CONTINUATION, END_HEADERS, stream, &block[cut..]);
        } else {
            frame(&mut out, HEADERS, END_HEADERS, stream, &block);
        }
        let body = grpc_body(rng);
        frame(&mut out, DATA, END_STREAM, stream, &body);
    }
    out
}

/// One connection's bytes.
fn generate(rng: &mut Rng) -> Vec<u8> {
    let mut out = PREFACE.to_vec();
    match rng.below(12) {
        0 | 1 => return exchange(rng),
        2 | 3 => {
            let e = exchange(rng);
            return fbytes::mutate(rng, &e);
        }
        4 => {
            let n = 1 + rng.below(200);
            out.extend(rng.bytes(n));
        }
        5 => {
            // Frames that declare huge lengths (past SETTINGS_MAX_FRAME_SIZE).
            let kind = *rng.pick(&[DATA, HEADERS, SETTINGS, CONTINUATION, PING, 0xfa]);
            frame_with_len(&mut out, *rng.pick(&[0xff_ffff, 0x10_0000, 16_385]), kind, 0, 1, &rng.some_bytes(100));
        }
        6 => {
            // A SETTINGS flood, with values out of range.
            for _ in 0..200 + rng.below(2000) {
                let mut p = Vec::new();
                for _ in 0..rng.below(4) {
                    p.extend_from_slice(&(rng.range(0, 8) as u16).to_be_bytes());
                    let v = *rng.pick(&[0u32, 1, 2, 16_383, 16_777_216, u32::MAX, 0x7fff_ffff]);
                    p.extend_from_slice(&v.to_be_bytes());
                }
                frame(&mut out, SETTINGS, 0, 0, &p);
            }
        }
        7 => {
            // A PING flood and a CONTINUATION flood.
            frame(&mut out, SETTINGS, 0, 0, &[]);
            for _ in 0..500 + rng.below(1500) {
                frame(&mut out, PING, 0, 0, &rng.bytes(8));
            }
            let block = header_block(rng);
            frame(&mut out, HEADERS, 0, 1, &block);
            for _ in 0..200 + rng.below(1000) {
                frame(&mut out, CONTINUATION, 0, 1, &[0x40, 1, b'a', 1, b'b']);
            }
        }
        8 => {
            // Control frames on the wrong streams, with out-of-range windows and codes.
            frame(&mut out, SETTINGS, 0, 0, &[]);
            for _ in 0..1 + rng.below(12) {
                let stream = *rng.pick(&[0u32, 1, 2, 3, 0x7fff_ffff, 0x8000_0001]);
                match rng.below(5) {
                    0 => frame(&mut out, WINDOW_UPDATE, 0, stream, &rng.pick(&[0u32, 0x7fff_ffff, 1]).to_be_bytes()),
                    1 => frame(&mut out, RST_STREAM, 0, stream, &(rng.next_u64() as u32).to_be_bytes()),
                    2 => frame(&mut out, PRIORITY, 0, stream, &[0x80, 0, 0, 1, 0xff]),
                    3 => frame(&mut out, GOAWAY, 0, stream, &rng.bytes(8)),
                    _ => {
                        let block = header_block(rng);
                        frame(&mut out, HEADERS, END_HEADERS | (END_STREAM * rng.below(2) as u8), stream, &block);
                    }
                }
            }
        }
        9 => {
            // Many streams opened and left open (past SETTINGS_MAX_CONCURRENT_STREAMS).
            frame(&mut out, SETTINGS, 0, 0, &[]);
            let block = header_block(rng);
            for k in 0..100 + rng.below(300) {
                frame(&mut out, HEADERS, END_HEADERS, 1 + 2 * k as u32, &block);
            }
        }
        10 => {
            // Random frames.
            for _ in 0..1 + rng.below(20) {
                let kind = rng.below(12) as u8;
                let payload = rng.some_bytes(40);
                let len = if rng.one_in(5) { rng.next_u64() as u32 & 0xff_ffff } else { payload.len() as u32 };
                frame_with_len(&mut out, len, kind, rng.next_u64() as u8, rng.next_u64() as u32 % 8, &payload);
            }
        }
        _ => {
            // Not HTTP/2: a cut preface, HTTP/1.1, TLS, nothing at all.
            let cut = PREFACE[..rng.below(PREFACE.len())].to_vec();
            let choices = [
                cut,
                b"GET / HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
                b"POST /tensorflow.MasterService/RunStep HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n".to_vec(),
                vec![0x16, 0x03, 0x01, 0x02, 0x00, 0x01],
                Vec::new(),
            ];
            let k = rng.below(choices.len());
            return choices[k].clone();
        }
    }
    out
}

/// Sends `bytes` on a fresh connection, half-closes it (unless `keep_open`: then the
/// server's answers to complete requests come back before the connection ends) and reads
/// what the server answers until it closes or `wait` passes. Returns how it ended.
fn send(addr: std::net::SocketAddr, bytes: &[u8], keep_open: bool, wait: Duration) -> &'static str {
    let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_secs(2)) else { return "connect failed" };
    let _ = s.set_write_timeout(Some(Duration::from_secs(2)));
    let _ = s.set_read_timeout(Some(Duration::from_millis(20)));
    if s.write_all(bytes).is_err() {
        return "write failed";
    }
    if !keep_open {
        let _ = s.shutdown(Shutdown::Write);
    }
    let until = Instant::now() + wait;
    let mut buf = [0u8; 16384];
    let mut answered = false;
    while Instant::now() < until {
        match s.read(&mut buf) {
            Ok(0) => return if answered { "answered, closed" } else { "closed" },
            Ok(_) => answered = true,
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(_) => return "reset",
        }
    }
    if answered {
        "answered, open"
    } else {
        "open"
    }
}

#[test]
fn fuzz_raw_http2_connections() {
    let c = Cluster::start(&[("worker", 1)]);
    let target = c.target("worker:0");
    let addr = c.server("worker:0").local_addr();
    let mut run = Run::start("http2", 400);
    // 16 connections at a time; each input is still its own connection and generator.
    for first in (0..run.iters).step_by(16) {
        let batch: Vec<usize> = (first..(first + 16).min(run.iters)).collect();
        let inputs: Vec<(Vec<u8>, bool)> = batch
            .iter()
            .map(|&i| {
                let mut rng = run.rng(i);
                let keep_open = rng.one_in(3);
                (generate(&mut rng), keep_open)
            })
            .collect();
        let hows: Vec<&str> = std::thread::scope(|s| {
            let handles: Vec<_> = inputs
                .iter()
                .map(|(bytes, keep)| s.spawn(move || send(addr, bytes, *keep, Duration::from_millis(150))))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for how in hows {
            run.outcome(how);
        }
        fuzz::still_serves(&target);
    }
    fuzz::still_serves(&target);
    run.finish();
}
