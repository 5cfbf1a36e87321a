//! Base-128 varints (prost's codec) read at a position of a byte buffer, as protobuf,
//! LevelDB tables and TensorFlow's string and variant encodings store them.

/// Appends `v` as a varint.
pub fn put(out: &mut Vec<u8>, v: u64) {
    prost::encoding::encode_varint(v, out);
}

/// Reads a varint at `*pos`, advancing `*pos`; `None` if it is cut off or not a valid
/// 64-bit varint (more than 10 bytes).
pub fn get(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let mut rest = buf.get(*pos..)?;
    let len = rest.len();
    let v = prost::encoding::decode_varint(&mut rest).ok()?;
    *pos += len - rest.len();
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_cut_off_and_too_long() {
        let vals = [0u64, 1, 127, 128, 300, 16_383, 16_384, u32::MAX as u64, u64::MAX];
        let mut buf = Vec::new();
        for &v in &vals {
            put(&mut buf, v);
        }
        let mut pos = 0;
        for &v in &vals {
            assert_eq!(get(&buf, &mut pos), Some(v));
        }
        assert_eq!(pos, buf.len());
        assert_eq!(get(&buf, &mut pos), None);
        assert_eq!(get(&[0x80, 0x80], &mut 0), None);
        assert_eq!(get(&[0xff; 11], &mut 0), None);
        assert_eq!(get(&[1], &mut 5), None);
    }
}
