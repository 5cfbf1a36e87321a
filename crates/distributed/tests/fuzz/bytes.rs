//! Byte-level mutations of encoded messages and of their gRPC framing: bit flips,
//! truncation, insertion, deletion, duplicated ranges, stray protobuf fields and
//! length-delimited fields that declare huge lengths. Shared by the integration tests and
//! the framing fuzz inside the crate (`src/fuzz_framing_tests.rs`).

use super::Rng;

/// Appends `v` as a protobuf varint.
pub fn put_varint(out: &mut Vec<u8>, v: u64) {
    ferroflow_core::varint::put(out, v)
}

/// Lengths a varint may declare: huge, just past 2^31 and 2^32, and the largest.
const HUGE_LENGTHS: &[u64] =
    &[0x7fff_ffff, 0x8000_0000, 0xffff_ffff, 1 << 32, 1 << 40, (1 << 62) + 1, u64::MAX, 0x7fff_fffb, 1 << 20];

/// A huge declared length, or a varint with too many continuation bytes.
fn huge_varint(rng: &mut Rng) -> Vec<u8> {
    let mut v = Vec::new();
    if rng.one_in(6) {
        v.extend_from_slice(&[0xff; 11]);
        v.push(0x01);
    } else {
        put_varint(&mut v, *rng.pick(HUGE_LENGTHS));
    }
    v
}

/// `data` with one to four mutations.
pub fn mutate(rng: &mut Rng, data: &[u8]) -> Vec<u8> {
    let mut v = data.to_vec();
    for _ in 0..1 + rng.below(4) {
        mutate_once(rng, &mut v);
    }
    v
}

fn mutate_once(rng: &mut Rng, v: &mut Vec<u8>) {
    let at = rng.below(v.len() + 1);
    match rng.below(11) {
        0 if !v.is_empty() => {
            let i = rng.below(v.len());
            v[i] ^= 1 << rng.below(8);
        }
        1 if !v.is_empty() => {
            let i = rng.below(v.len());
            let any = rng.next_u64() as u8;
            v[i] = *rng.pick(&[0x00, 0x01, 0x7f, 0x80, 0xff, 0x0a, 0x12, 0x08, any]);
        }
        2 => v.truncate(at),
        3 => {
            let n = 1 + rng.below(16);
            let ins = rng.bytes(n);
            v.splice(at..at, ins);
        }
        4 => {
            let end = (at + 1 + rng.below(32)).min(v.len());
            v.drain(at..end.max(at));
        }
        5 => {
            // A length-delimited field (of a field number the messages use) with a huge length.
            let mut f = Vec::new();
            put_varint(&mut f, ((1 + rng.below(12)) << 3 | 2) as u64);
            f.extend(huge_varint(rng));
            f.extend(rng.some_bytes(8));
            v.splice(at..at, f);
        }
        6 if !v.is_empty() => {
            let start = rng.below(v.len());
            let end = (start + 1 + rng.below(64)).min(v.len());
            let dup = v[start..end].to_vec();
            let to = rng.below(v.len() + 1);
            v.splice(to..to, dup);
        }
        7 => {
            // A stray field of any wire type, including the deprecated groups and 6/7.
            let mut f = Vec::new();
            put_varint(&mut f, (rng.below(40) << 3 | rng.below(8)) as u64);
            match rng.below(3) {
                0 => put_varint(&mut f, rng.next_u64()),
                1 => f.extend(huge_varint(rng)),
                _ => f.extend(rng.some_bytes(9)),
            }
            v.splice(at..at, f);
        }
        8 if v.len() < 1 << 16 => {
            // The whole message twice: every field repeated (last one wins, lists append).
            let copy = v.clone();
            v.extend(copy);
        }
        9 if !v.is_empty() => {
            // A byte that may be a length becomes a huge one.
            let i = rng.below(v.len());
            let h = huge_varint(rng);
            v.splice(i..i + 1, h);
        }
        _ => {
            let n = rng.below(4);
            v.extend(rng.bytes(n));
        }
    }
}

/// `payload` behind a gRPC message prefix, usually a correct one; sometimes the prefix
/// lies (compressed flag, a length that is too short, too long or 2^32-1), is cut off, or
/// a second message follows.
pub fn grpc_frame(rng: &mut Rng, payload: &[u8]) -> Vec<u8> {
    let mut flag = 0u8;
    let mut len = payload.len() as u32;
    let mut tail: Vec<u8> = Vec::new();
    match rng.below(16) {
        0 => flag = 1,
        1 => flag = rng.next_u64() as u8,
        2 => len = *rng.pick(&[u32::MAX, 0x7fff_ffff, 0x8000_0000, len.wrapping_add(1), len.wrapping_sub(1), 0]),
        3 => return rng.some_bytes(5),
        4 => {
            tail = vec![0, 0, 0, 0, payload.len().min(255) as u8];
            tail.extend_from_slice(&payload[..payload.len().min(255)]);
        }
        5 => return Vec::new(),
        _ => {}
    }
    let mut out = Vec::with_capacity(5 + payload.len() + tail.len());
    out.push(flag);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(payload);
    out.extend(tail);
    out
}
