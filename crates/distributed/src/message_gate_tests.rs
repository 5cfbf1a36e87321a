use std::collections::VecDeque;

use bytes::{BufMut, Bytes, BytesMut};
use ferroflow_core::Code;
use http_body_util::BodyExt;

use super::*;

/// A gRPC message: its prefix (with `flag`) and `len` bytes counting up from `seed`.
fn message(flag: u8, len: usize, seed: u8) -> Vec<u8> {
    let mut m = vec![flag];
    m.extend_from_slice(&(len as u32).to_be_bytes());
    m.extend((0..len).map(|i| seed.wrapping_add(i as u8)));
    m
}

/// Pushes `pieces` through a gate admitting everything; returns what went on, the prefixes
/// seen and the gate.
fn through(pieces: &[Bytes]) -> (Vec<Bytes>, Vec<Prefix>, Gate) {
    let mut gate = Gate::default();
    let (mut out, mut seen) = (VecDeque::new(), Vec::new());
    for p in pieces {
        gate.push(p.clone(), &mut out, |x| {
            seen.push(x);
            Ok::<(), ()>(())
        })
        .unwrap();
    }
    (out.into(), seen, gate)
}

fn concat(parts: &[Bytes]) -> Vec<u8> {
    parts.iter().flat_map(|b| b.iter().copied()).collect()
}

#[test]
fn prefixes_split_anywhere_and_several_messages_per_body() {
    // Three small messages (one empty, one with the compressed flag) in one body, cut into
    // three chunks at every pair of places: each prefix is seen once, whole, and every byte
    // goes on in order.
    let mut body = message(0, 10, 1);
    body.extend(message(0, 0, 0));
    body.extend(message(1, 3, 7));
    let want =
        vec![Prefix { compressed: 0, len: 10 }, Prefix { compressed: 0, len: 0 }, Prefix { compressed: 1, len: 3 }];
    for a in 0..=body.len() {
        for b in a..=body.len() {
            let pieces: Vec<Bytes> =
                [&body[..a], &body[a..b], &body[b..]].iter().map(|s| Bytes::copy_from_slice(s)).collect();
            let (out, seen, gate) = through(&pieces);
            assert_eq!(seen, want, "cut at {a}, {b}");
            assert_eq!(concat(&out), body, "cut at {a}, {b}");
            assert!(gate.between() && gate.unfinished("x").is_none());
        }
    }
    // A prefix cut short, or a body, is no place to end.
    let (_, _, gate) = through(&[Bytes::copy_from_slice(&body[..13])]);
    let e = gate.unfinished("RunStepRequest").unwrap();
    assert_eq!(e.code, Code::Internal);
    assert_eq!(e.message, "RunStepRequest: the body ended after 8 of 10 bytes of a message", "{e}");
    let (_, _, gate) = through(&[Bytes::copy_from_slice(&body[..3])]);
    assert!(gate.unfinished("x").unwrap().message.contains("3 bytes into a message's 5-byte gRPC prefix"));
}

#[test]
fn a_large_message_is_held_until_half_of_it_arrived_then_passes_without_copies() {
    let len = 4 * PASS_AT_ONCE;
    let mut body = message(0, 20, 3);
    body.extend(message(1, len, 9));
    body.extend(message(0, 5, 2));
    let pieces: Vec<Bytes> = body.chunks(PASS_AT_ONCE / 4 + 3).map(Bytes::copy_from_slice).collect();
    let mut gate = Gate::default();
    let mut out = VecDeque::new();
    let mut seen = Vec::new();
    let mut sent = 0;
    for p in &pieces {
        sent += p.len();
        gate.push(p.clone(), &mut out, |x| {
            seen.push(x);
            Ok::<(), ()>(())
        })
        .unwrap();
        let passed: usize = out.iter().map(Bytes::len).sum();
        let of_big = sent.saturating_sub(25 + 5).min(len);
        if sent <= 25 {
            // The first message, and the first chunk's start of the large one's prefix.
        } else if of_big < len / 2 {
            // Only the small first message went on: the large one's prefix is held with
            // its bytes, so no decoder has seen (and reserved) its declared length yet.
            assert_eq!(passed, 25, "after {sent} bytes");
        } else if of_big < len {
            assert_eq!(passed, sent, "after {sent} bytes: half of it is here, all goes on");
        }
    }
    assert_eq!(seen.iter().map(|p| (p.compressed, p.len)).collect::<Vec<_>>(), [(0, 20), (1, len), (0, 5)]);
    let out: Vec<Bytes> = out.into();
    assert_eq!(concat(&out), body);
    // Every piece that went on is a slice of a chunk that came in, not a copy.
    for o in &out {
        let inside = |p: &Bytes| {
            let (s, e) = (p.as_ptr() as usize, p.as_ptr() as usize + p.len());
            (s..=e).contains(&(o.as_ptr() as usize)) && o.as_ptr() as usize + o.len() <= e
        };
        assert!(pieces.iter().any(inside), "a copied piece of {} bytes", o.len());
    }
}

#[test]
fn a_declared_length_past_the_budget_is_refused_before_its_bytes() {
    ferroflow_core::set_memory_limit(64 << 20);
    let limit = ferroflow_core::memory_limit();
    let mut gate = Gate::default();
    let mut out = VecDeque::new();
    let mut body = message(0, 3, 0);
    body.extend([0, 0x7f, 0xff, 0xff, 0xff]);
    let e =
        gate.push(Bytes::from(body), &mut out, |p| admit("a request of /tensorflow.MasterService/CreateSession", p));
    let e = e.unwrap_err();
    assert_eq!(e.code, Code::ResourceExhausted);
    for part in
        ["/tensorflow.MasterService/CreateSession", "declares 2147483647 bytes", &format!("limit of {limit} bytes")]
    {
        assert!(e.message.contains(part), "{part}: {e}");
    }
    // The complete message before it went on.
    assert_eq!(out.iter().map(Bytes::len).sum::<usize>(), 8);
    assert!(admit("x", Prefix { compressed: 0, len: 1 << 20 }).is_ok());
}

/// A body of the given frames, as tonic hands a request to a service.
struct Frames(VecDeque<Result<Frame<Bytes>, tonic::Status>>);

impl http_body::Body for Frames {
    type Data = Bytes;
    type Error = tonic::Status;

    fn poll_frame(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, tonic::Status>>> {
        Poll::Ready(self.get_mut().0.pop_front())
    }
}

fn gated(frames: Vec<Frame<Bytes>>) -> Gated<Frames> {
    Gated::new(Frames(frames.into_iter().map(Ok).collect()), Arc::from("a request of /p/M"))
}

#[tokio::test]
async fn gated_bodies_pass_messages_and_trailers_and_refuse_what_cannot_be() {
    ferroflow_core::set_memory_limit(64 << 20);
    let mut trailers = HeaderMap::new();
    trailers.insert("x-t", http::HeaderValue::from_static("1"));
    let m = message(0, 6, 4);
    let frames = vec![
        Frame::data(Bytes::copy_from_slice(&m[..2])),
        Frame::data(Bytes::copy_from_slice(&m[2..])),
        Frame::trailers(trailers),
    ];
    let got = gated(frames).collect().await.unwrap();
    assert_eq!(got.trailers().map(|t| t.contains_key("x-t")), Some(true));
    assert_eq!(got.to_bytes().as_ref(), &m[..]);
    // 2 GiB declared: RESOURCE_EXHAUSTED naming the call, before any byte of it goes on.
    let mut b = BytesMut::new();
    b.put_u8(0);
    b.put_u32(0x8000_0000);
    let e = gated(vec![Frame::data(b.freeze())]).collect().await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::ResourceExhausted);
    assert!(e.message().contains("a request of /p/M (a gRPC message whose prefix declares 2147483648 bytes)"), "{e}");
    // A body that stops inside a message.
    let e = gated(vec![Frame::data(Bytes::copy_from_slice(&m[..7]))]).collect().await.unwrap_err();
    assert_eq!(
        (e.code(), e.message()),
        (tonic::Code::Internal, "a request of /p/M: the body ended after 2 of 6 bytes of a message")
    );
}
