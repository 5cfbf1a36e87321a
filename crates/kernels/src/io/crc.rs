//! CRC32C with TensorFlow's (LevelDB's) mask, as stored in table block trailers, bundle
//! entries and TFRecord frames.

#[doc(hidden)]
pub const MASK_DELTA: u32 = 0xa282_ead8;

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
