use ferroflow_kernels::string::farmhash::{fingerprint64, siphash24, K2};

#[test]
fn siphash_reference_vector() {
    // The SipHash paper's test vector: key 00..0f, message 00..0e.
    let k0 = u64::from_le_bytes([0, 1, 2, 3, 4, 5, 6, 7]);
    let k1 = u64::from_le_bytes([8, 9, 10, 11, 12, 13, 14, 15]);
    let msg: Vec<u8> = (0..15).collect();
    assert_eq!(siphash24(k0, k1, &msg), 0xa129_ca61_49be_45e5);
}

#[test]
fn fingerprint_lengths_differ() {
    let s: Vec<u8> = (0..200u8).collect();
    let hs: Vec<u64> = [0, 3, 7, 16, 17, 32, 33, 64, 65, 128, 200].iter().map(|&n| fingerprint64(&s[..n])).collect();
    let mut u = hs.clone();
    u.sort_unstable();
    u.dedup();
    assert_eq!(u.len(), hs.len());
    assert_eq!(fingerprint64(b""), K2);
}
