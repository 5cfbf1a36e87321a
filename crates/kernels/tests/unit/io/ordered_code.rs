use ferroflow_kernels::io::ordered_code::{
    signed_len, write_num_increasing, write_signed_num_increasing, write_string,
};

/// Reads a signed number written by [`write_signed_num_increasing`] from the front of
/// `src`; returns it and the bytes it took, or `None` when `src` does not start with one.
fn read_signed_num_increasing(src: &[u8]) -> Option<(i64, usize)> {
    let first = *src.first()?;
    let flip = if first & 0x80 == 0 { 0xffu8 } else { 0 };
    // Count the leading header bits (equal to the sign bit) over the first two bytes.
    let two = (u16::from(first ^ flip) << 8) | u16::from(src.get(1).copied().unwrap_or(0) ^ flip);
    let len = two.leading_ones() as usize;
    if !(1..=10).contains(&len) || src.len() < len {
        return None;
    }
    // Ten bytes carry 69 bits for a 64-bit value: the 6 above it must repeat the sign.
    if len == 10 && ((src[1] ^ flip) != 0xc0 || (src[2] ^ flip) & 0x80 != 0) {
        return None;
    }
    let mut buf = [flip; 10];
    buf[10 - len..].copy_from_slice(&src[..len]);
    let header: u16 = !(u16::MAX >> len);
    buf[10 - len] ^= (header >> 8) as u8;
    if len >= 2 {
        buf[10 - len + 1] ^= (header & 0xff) as u8;
    }
    let v = i64::from_be_bytes(buf[2..].try_into().ok()?);
    (signed_len(v) == len).then_some((v, len))
}

fn signed(v: i64) -> Vec<u8> {
    let mut o = Vec::new();
    write_signed_num_increasing(&mut o, v);
    o
}

#[test]
fn golden_encodings() {
    // Values TensorFlow's OrderedCode writes (the keys of its sliced checkpoints and
    // the format's own documented examples).
    assert_eq!(signed(0), [0x80]);
    assert_eq!(signed(5), [0x85]);
    assert_eq!(signed(-1), [0x7f]);
    assert_eq!(signed(63), [0xbf]);
    assert_eq!(signed(-64), [0x40]);
    assert_eq!(signed(100), [0xc0, 0x64]);
    assert_eq!(signed(200), [0xc0, 0xc8]);
    assert_eq!(signed(0x424242), [0xf0, 0x42, 0x42, 0x42]);
    assert_eq!(signed(-0x800), [0x38, 0x00]);
    let mut o = Vec::new();
    write_num_increasing(&mut o, 0);
    write_num_increasing(&mut o, 2);
    write_num_increasing(&mut o, 0x1234);
    assert_eq!(o, [0x00, 0x01, 0x02, 0x02, 0x12, 0x34]);
    let mut s = Vec::new();
    write_string(&mut s, b"a\x00b\xff");
    assert_eq!(s, b"a\x00\xffb\xff\x00\x00\x01");
}

#[test]
fn signed_round_trips_and_keeps_order() {
    let mut vals = vec![i64::MIN, i64::MAX, 0, -1, 1, 63, 64, -64, -65, 8191, 8192, -8192, -8193];
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..2000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        vals.push((x as i64) >> (x % 63));
    }
    for &v in &vals {
        let e = signed(v);
        assert_eq!(read_signed_num_increasing(&e), Some((v, e.len())), "{v}");
    }
    vals.sort();
    let encoded: Vec<_> = vals.iter().map(|&v| signed(v)).collect();
    assert!(encoded.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(signed(i64::MAX).len(), 10);
    assert_eq!(signed(i64::MIN).len(), 10);
}

#[test]
fn bad_signed_input_is_refused() {
    assert_eq!(read_signed_num_increasing(&[]), None);
    assert_eq!(read_signed_num_increasing(&[0xc0]), None);
    assert_eq!(read_signed_num_increasing(&[0xff, 0xff, 0xff]), None);
}
