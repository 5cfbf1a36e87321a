//! CRC32C with TensorFlow's (LevelDB's) mask, as stored in table block trailers, bundle
//! entries and TFRecord frames.

const MASK_DELTA: u32 = 0xa282_ead8;

/// CRC32C (Castagnoli) of `data`.
pub fn crc32c(data: &[u8]) -> u32 {
    ::crc32c::crc32c(data)
}

/// Extends a CRC32C computed so far with more bytes.
pub fn crc32c_extend(crc: u32, data: &[u8]) -> u32 {
    ::crc32c::crc32c_append(crc, data)
}

/// Masks a CRC so that a CRC of data containing CRCs stays well distributed:
/// rotate right by 15 bits, then add a constant.
pub fn mask(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(MASK_DELTA)
}

/// Inverse of [`mask`].
pub fn unmask(masked: u32) -> u32 {
    masked.wrapping_sub(MASK_DELTA).rotate_left(15)
}

/// Masked CRC32C of `data`.
pub fn masked_crc32c(data: &[u8]) -> u32 {
    mask(crc32c(data))
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
