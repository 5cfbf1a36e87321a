//! Fuzzing the crate's own wire decoders over mutated bytes, cut into random DATA chunks:
//! a body's one gRPC message (`Chunks::into_message`, with gzip and deflate), a stream of
//! messages (`Chunks::take_message`), streamed RecvTensor responses (`RecvTensorReader`,
//! with contents large enough for its fast path), the connection handshake scanner
//! (`access::Handshake`), decompression and the gate in front of tonic's decoder
//! (`message_gate::Gate`: in order, nothing reserved ahead of half its bytes). Each input
//! must decode or fail with a status; none may panic or allocate at once more than the
//! memory limit plus its own size. The
//! generator and the byte mutations are the integration tests' (`tests/fuzz`); the seed
//! and scale come from `FERROFLOW_FUZZ_SEED` and `FERROFLOW_FUZZ_SCALE` as there.

use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};

use bytes::Bytes;
use ferroflow_core::proto::{
    NamedTensorProto, RecvTensorRequest, RecvTensorResponse, RunGraphRequest, RunGraphResponse, RunStepRequest,
    RunStepResponse,
};
use ferroflow_core::Tensor;
use prost::Message;

use crate::tensor_stream::RecvTensorReader;
use crate::tensor_wire::{self, Chunks};

#[allow(dead_code)]
#[path = "../tests/fuzz/rng.rs"]
mod rng;
use rng::Rng;
#[allow(dead_code)]
#[path = "../tests/fuzz/bytes.rs"]
mod fbytes;
#[path = "../tests/fuzz/largest.rs"]
mod largest;

#[global_allocator]
static ALLOC: ferroflow_core::WatchedAlloc = largest::ALLOCATOR;

fn seed() -> u64 {
    let v = std::env::var("FERROFLOW_FUZZ_SEED").unwrap_or_default();
    let v = v.trim();
    v.strip_prefix("0x")
        .map_or_else(|| v.parse().ok(), |h| u64::from_str_radix(h, 16).ok())
        .unwrap_or(0x5eed_f1f0_2024_0022)
}

fn iterations(default: usize) -> usize {
    let scale: f64 = std::env::var("FERROFLOW_FUZZ_SCALE").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(1.0);
    ((default as f64 * scale).round() as usize).max(1)
}

/// Runs `iters` inputs of `name`, each `f(rng of the input)` returning its input's length;
/// fails naming the inputs that panicked or allocated too much.
fn fuzz(name: &str, default: usize, mut f: impl FnMut(&mut Rng) -> usize) {
    let seed = seed();
    let iters = iterations(default);
    // A peer's declared sizes are checked against the memory limit (no unit test of this
    // crate needs tensors anywhere near it).
    ferroflow_core::set_memory_limit(64 << 20);
    let limit = ferroflow_core::memory_limit() as usize;
    let mut findings = Vec::new();
    let started = std::time::Instant::now();
    for i in 0..iters {
        let mut rng = Rng::new(seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ name.len() as u64);
        largest::reset();
        match catch_unwind(AssertUnwindSafe(|| f(&mut rng))) {
            Err(_) => findings.push(format!("input #{i} panicked")),
            Ok(len) => {
                let largest = largest::largest();
                if largest > limit + 8 * len + (1 << 20) {
                    findings.push(format!("input #{i} of {len} bytes allocated {largest} bytes at once"));
                }
            }
        }
    }
    println!(
        "fuzz {name}: seed {seed:#x}, {iters} inputs in {:.1}s, findings {}",
        started.elapsed().as_secs_f64(),
        findings.len()
    );
    assert!(findings.is_empty(), "{name} (FERROFLOW_FUZZ_SEED={seed:#x}): {findings:#?}");
}

/// `b` as DATA chunks cut at random places.
fn chunked(rng: &mut Rng, b: &[u8]) -> Vec<Bytes> {
    let all = Bytes::copy_from_slice(b);
    let mut out = Vec::new();
    let mut at = 0;
    while at < all.len() {
        let n = if rng.one_in(3) { 1 + rng.below(16) } else { 1 + rng.below(all.len() - at) };
        let end = (at + n).min(all.len());
        out.push(all.slice(at..end));
        at = end;
    }
    out
}

fn tensor(rng: &mut Rng) -> Tensor {
    match rng.below(6) {
        0 => Tensor::scalar(1.5f32),
        1 => Tensor::vec(vec![b"ab".to_vec(), Vec::new()]),
        2 => Tensor::vec(vec![1i64, -2, 3]),
        // Large enough for the streamed path (64 KiB and up).
        3 => Tensor::new(vec![64, 300], vec![0.5f32; 64 * 300]).unwrap(),
        4 => Tensor::vec(vec![7u8; 70_000]),
        _ => Tensor::new(vec![2, 2], vec![1.0f64, 2.0, 3.0, 4.0]).unwrap(),
    }
}

/// Mutates `b` near its start (where the prefix, keys and lengths are) or anywhere.
fn mutate(rng: &mut Rng, b: &[u8]) -> Vec<u8> {
    if b.len() > 512 && rng.one_in(2) {
        let head = rng.below(200);
        let mut out = fbytes::mutate(rng, &b[..head]);
        out.extend_from_slice(&b[head..]);
        out
    } else {
        fbytes::mutate(rng, b)
    }
}

fn concat(parts: &[Bytes]) -> Vec<u8> {
    parts.iter().flat_map(|p| p.iter().copied()).collect()
}

/// One valid message of a kind the servers read, encoded and framed as a peer sends it.
fn valid_message(rng: &mut Rng) -> (u8, Vec<u8>) {
    let named = |rng: &mut Rng| NamedTensorProto { name: "x:0".into(), tensor: Some(tensor(rng).to_proto()) };
    match rng.below(5) {
        0 => {
            let req = RunStepRequest {
                session_handle: "s".into(),
                feed: vec![named(rng)],
                fetch: vec!["y:0".into()],
                ..Default::default()
            };
            (0, req.encode_to_vec())
        }
        1 => {
            let req =
                RunGraphRequest { graph_handle: "g".into(), step_id: 7, send: vec![named(rng)], ..Default::default() };
            (1, concat(&tensor_wire::encode_run_graph_request(req).unwrap())[5..].to_vec())
        }
        2 => (
            2,
            RecvTensorRequest { step_id: 3, rendezvous_key: "a;b;c;d;0:0".into(), ..Default::default() }
                .encode_to_vec(),
        ),
        3 => {
            let resp = RunStepResponse { tensor: vec![named(rng)], ..Default::default() };
            (3, concat(&tensor_wire::encode_run_step(resp).unwrap())[5..].to_vec())
        }
        _ => {
            let resp =
                RunGraphResponse { recv: vec![named(rng)], status_error_message: "x".into(), ..Default::default() };
            (4, concat(&tensor_wire::encode_run_graph(resp).unwrap())[5..].to_vec())
        }
    }
}

fn decode_as(kind: u8, c: Chunks) {
    let _ = match kind {
        0 => c.into_message::<RunStepRequest>("RunStepRequest").map(|_| ()),
        1 => c.into_message::<RunGraphRequest>("RunGraphRequest").map(|_| ()),
        2 => c.into_message::<RecvTensorRequest>("RecvTensorRequest").map(|_| ()),
        3 => c.into_message::<RunStepResponse>("RunStepResponse").map(|_| ()),
        _ => c.into_message::<RunGraphResponse>("RunGraphResponse").map(|_| ()),
    };
}

fn compress(rng: &mut Rng, m: &[u8]) -> Vec<u8> {
    if rng.one_in(2) {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(m).unwrap();
        e.finish().unwrap()
    } else {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(m).unwrap();
        e.finish().unwrap()
    }
}

#[test]
fn fuzz_one_message_bodies() {
    fuzz("into_message", 4000, |rng| {
        let (kind, m) = valid_message(rng);
        let compressed = rng.one_in(5);
        let m = if compressed { compress(rng, &m) } else { m };
        let m = if rng.one_in(4) { m } else { mutate(rng, &m) };
        let mut body = fbytes::grpc_frame(rng, &m);
        if compressed && body.first() == Some(&0) {
            body[0] = 1;
        }
        let mut c = Chunks::default();
        for b in chunked(rng, &body) {
            c.push(b);
        }
        decode_as(kind, c);
        body.len()
    });
}

#[test]
fn fuzz_message_streams() {
    fuzz("take_message", 3000, |rng| {
        let mut stream = Vec::new();
        for _ in 0..1 + rng.below(3) {
            let (_, m) = valid_message(rng);
            stream.extend(fbytes::grpc_frame(rng, &m));
        }
        let stream = mutate(rng, &stream);
        let mut c = Chunks::default();
        for b in chunked(rng, &stream) {
            c.push(b);
            while let Ok(Some(m)) = c.take_message("RecvTensorRequest") {
                let _ = m.into_message::<RecvTensorRequest>("RecvTensorRequest");
            }
        }
        stream.len()
    });
}

/// The head of a RecvTensorResponse whose lengths agree and declare a huge numeric
/// content (up to 2 GiB), followed by a few bytes of it: what a peer that means harm sends.
fn huge_declared_content(rng: &mut Rng) -> Vec<u8> {
    let content = (*rng.pick(&[64 << 20, 256 << 20, 1 << 30, 0x7fff_0000usize]) + 4 * rng.below(1000)) & !7;
    let mut tensor = vec![0x08, *rng.pick(&[1u8, 2, 3, 4, 9])];
    tensor.push(0x22);
    fbytes::put_varint(&mut tensor, content as u64);
    let t_len = tensor.len() + content;
    let mut msg = vec![0x0a];
    fbytes::put_varint(&mut msg, t_len as u64);
    msg.extend(&tensor);
    let len = msg.len() + content;
    let mut out = vec![0];
    out.extend_from_slice(&(len as u32).to_be_bytes());
    out.extend(msg);
    let n = 4096 + rng.below(8192);
    out.extend(rng.bytes(n));
    out
}

#[test]
fn fuzz_streamed_recv_tensor_responses() {
    fuzz("recv_tensor_reader", 1500, |rng| {
        let mut stream = Vec::new();
        for _ in 0..1 + rng.below(3) {
            let resp = RecvTensorResponse {
                tensor: Some(tensor(rng).to_proto()),
                is_dead: rng.one_in(4),
                ..Default::default()
            };
            stream.extend(concat(&tensor_wire::encode_recv_tensor(resp).unwrap()));
        }
        let stream = match rng.below(5) {
            0 => stream,
            1 => huge_declared_content(rng),
            _ => mutate(rng, &stream),
        };
        let mut r = RecvTensorReader::default();
        'outer: for b in chunked(rng, &stream) {
            r.push(b);
            loop {
                match r.next("RecvTensor") {
                    Ok(Some(_)) => {}
                    Ok(None) => break,
                    Err(_) => break 'outer,
                }
            }
        }
        stream.len()
    });
}

#[test]
fn fuzz_compressed_messages() {
    fuzz("decompress", 3000, |rng| {
        let (_, m) = valid_message(rng);
        let z = compress(rng, &m);
        let z = if rng.one_in(4) { z } else { mutate(rng, &z) };
        let mut c = Chunks::default();
        for b in chunked(rng, &z) {
            c.push(b);
        }
        let _ = crate::grpc_compression::decompress(c, "RunStepRequest");
        z.len()
    });
}

#[tokio::test]
async fn fuzz_connection_handshakes() {
    fuzz("handshake", 3000, |rng| {
        let mut b = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
        for _ in 0..rng.below(6) {
            let len = rng.below(40);
            b.extend_from_slice(&(len as u32).to_be_bytes()[1..]);
            b.push(rng.below(10) as u8);
            let n = 4 + len.min(rng.below(50));
            b.extend(rng.bytes(n));
        }
        let b = mutate(rng, &b);
        let mut h = crate::conn_handshake::Handshake::new(std::time::Duration::from_secs(1));
        for c in chunked(rng, &b) {
            if h.feed(&c) {
                break;
            }
        }
        b.len()
    });
}

/// What a decoder behind a gate sees of `passed` (a body's bytes the gate let through):
/// a prefix whose declared length it would reserve only with half of that message there.
fn check_passed(passed: &[u8]) -> Result<(), String> {
    let mut pos = 0;
    while pos + 5 <= passed.len() {
        let len = u32::from_be_bytes([passed[pos + 1], passed[pos + 2], passed[pos + 3], passed[pos + 4]]) as usize;
        let here = len.min(passed.len() - pos - 5);
        if len > crate::message_gate::PASS_AT_ONCE && here < len / 2 {
            return Err(format!("a prefix declaring {len} bytes passed with {here} of them"));
        }
        pos += 5 + len;
    }
    Ok(())
}

#[test]
fn fuzz_message_gates() {
    use crate::message_gate::{admit, Gate, PASS_AT_ONCE};
    fuzz("message_gate", 3000, |rng| {
        let mut body = Vec::new();
        for _ in 0..1 + rng.below(4) {
            let n = if rng.one_in(4) { PASS_AT_ONCE + rng.below(3 * PASS_AT_ONCE) } else { rng.below(100) };
            let m = vec![rng.below(256) as u8; n];
            body.extend(fbytes::grpc_frame(rng, &m));
        }
        let body = if rng.one_in(3) { mutate(rng, &body) } else { body };
        let mut gate = Gate::default();
        let mut out = std::collections::VecDeque::new();
        let mut refused = None;
        for c in chunked(rng, &body) {
            if let Err(e) = gate.push(c, &mut out, |p| admit("fuzz", p)) {
                refused = Some(e);
                break;
            }
        }
        let passed = concat(&Vec::from(out));
        // In order, nothing twice, nothing reserved ahead of its bytes; everything once the
        // body ends between messages; refused only for a length past the budget.
        assert!(body.starts_with(&passed), "the gate passed bytes out of order");
        if let Err(e) = check_passed(&passed) {
            panic!("{e}");
        }
        match refused {
            Some(e) => assert!(e.message.contains("memory limit"), "{e}"),
            None if gate.between() => assert_eq!(passed.len(), body.len()),
            None => assert!(gate.unfinished("fuzz").is_some()),
        }
        body.len()
    });
}
