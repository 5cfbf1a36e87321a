//! TensorFlow's "ordered code": byte encodings of strings and integers whose byte order is
//! the order of the values. A V2 checkpoint names each stored slice of a partitioned tensor
//! with such a key (see `tensor_slice::slice_key`).
//!
//! - A string is its bytes with `\x00` written as `\x00\xff` and `\xff` as `\xff\x00`,
//!   followed by the separator `\x00\x01`.
//! - An unsigned number is one length byte, then its big-endian bytes without leading
//!   zeros (0 is the single byte `\x00`).
//! - A signed number takes 1–10 bytes: the first bit is 1 for a non-negative number; then
//!   as many bits equal to it as there are bytes after the first, and one bit that differs;
//!   then the value in two's complement, big-endian. One byte holds −64..64, two bytes
//!   −2¹³..2¹³, and so on.

/// Appends the increasing-order encoding of `s`.
pub fn write_string(out: &mut Vec<u8>, s: &[u8]) {
    for &b in s {
        match b {
            0x00 => out.extend_from_slice(&[0x00, 0xff]),
            0xff => out.extend_from_slice(&[0xff, 0x00]),
            _ => out.push(b),
        }
    }
    out.extend_from_slice(&[0x00, 0x01]);
}

/// Appends the increasing-order encoding of the unsigned `v`.
pub fn write_num_increasing(out: &mut Vec<u8>, v: u64) {
    let bytes = v.to_be_bytes();
    let skip = (v.leading_zeros() / 8) as usize;
    out.push((8 - skip) as u8);
    out.extend_from_slice(&bytes[skip..]);
}

/// Bytes `write_signed_num_increasing` uses for `v`.
pub fn signed_len(v: i64) -> usize {
    // Bits needed for the magnitude (of !v when negative), plus the sign bit; every byte
    // gives 7 bits to header and payload, up to 10 bytes for 64 bits.
    let x = if v < 0 { !v } else { v } as u64;
    let bits = 64 - x.leading_zeros() as usize + 1;
    bits.div_ceil(7).clamp(1, 10)
}

/// Appends the increasing-order encoding of the signed `v`.
pub fn write_signed_num_increasing(out: &mut Vec<u8>, v: i64) {
    let len = signed_len(v);
    // `v` sign-extended to 10 bytes, big-endian; the last `len` bytes are the payload.
    let sign = if v < 0 { 0xff } else { 0x00 };
    let mut buf = [sign; 10];
    buf[2..].copy_from_slice(&v.to_be_bytes());
    let enc = &mut buf[10 - len..];
    // Header: `len` bits set (sign 1 + len-1 length bits), then a 0, over the first one or
    // two bytes; XOR flips them for negative numbers, whose leading bits are ones.
    let header: u16 = !(u16::MAX >> len);
    enc[0] ^= (header >> 8) as u8;
    if len >= 2 {
        enc[1] ^= (header & 0xff) as u8;
    }
    out.extend_from_slice(enc);
}
