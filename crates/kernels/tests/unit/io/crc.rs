use ferroflow_kernels::io::crc::{crc32c, crc32c_extend, mask, masked_crc32c, unmask, MASK_DELTA};

#[test]
fn known_values_and_mask_round_trip() {
    // RFC 3720 test vectors for CRC32C.
    assert_eq!(crc32c(&[0u8; 32]), 0x8a91_36aa);
    assert_eq!(crc32c(&[0xffu8; 32]), 0x62a8_ab43);
    assert_eq!(crc32c(b"123456789"), 0xe306_9283);
    assert_eq!(crc32c_extend(crc32c(b"1234"), b"56789"), crc32c(b"123456789"));
    for c in [0u32, 1, 0xdead_beef, u32::MAX, crc32c(b"foo")] {
        assert_eq!(unmask(mask(c)), c);
        assert_ne!(mask(c), c);
    }
    assert_eq!(mask(0), MASK_DELTA);
    assert_eq!(mask(crc32c(b"foo")), masked_crc32c(b"foo"));
}
