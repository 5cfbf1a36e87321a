//! Little-endian base-128 varints and fixed-width integers, as LevelDB tables and
//! TensorFlow's string tensors store them.

/// Appends `v` as a varint.
pub fn put_varint64(out: &mut Vec<u8>, v: u64) {
    ferroflow_core::varint::put(out, v)
}

/// Reads a varint at `*pos`, advancing `*pos`; `None` if truncated or longer than 10 bytes.
pub fn get_varint64(buf: &[u8], pos: &mut usize) -> Option<u64> {
    ferroflow_core::varint::get(buf, pos)
}

/// Reads a varint that must fit in 32 bits.
pub fn get_varint32(buf: &[u8], pos: &mut usize) -> Option<u32> {
    get_varint64(buf, pos).and_then(|v| u32::try_from(v).ok())
}

/// Reads a little-endian u32 at `pos`.
pub fn get_fixed32(buf: &[u8], pos: usize) -> Option<u32> {
    let b = buf.get(pos..pos.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_truncation() {
        let vals = [0u64, 1, 127, 128, 300, 16_383, 16_384, u32::MAX as u64, u64::MAX];
        let mut buf = Vec::new();
        for &v in &vals {
            put_varint64(&mut buf, v);
        }
        assert_eq!(&buf[..4], &[0, 1, 127, 0x80]);
        let mut pos = 0;
        for &v in &vals {
            assert_eq!(get_varint64(&buf, &mut pos), Some(v));
        }
        assert_eq!(pos, buf.len());
        assert_eq!(get_varint64(&buf, &mut pos), None);
        let mut p = 0;
        assert_eq!(get_varint64(&[0x80, 0x80], &mut p), None);
        let mut p = 0;
        assert_eq!(get_varint64(&[0xff; 11], &mut p), None);
        let mut p = 0;
        assert_eq!(get_varint32(&[0xff, 0xff, 0xff, 0xff, 0x7f], &mut p), None);
        assert_eq!(get_fixed32(&[1, 0, 0, 0], 0), Some(1));
        assert_eq!(get_fixed32(&[1, 0, 0], 0), None);
    }
}
