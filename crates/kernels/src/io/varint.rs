//! The LevelDB tables' 32-bit integers: varints that must fit in 32 bits and fixed-width
//! little-endian words (64-bit varints are [`ferroflow_core::varint`]).

/// Reads a varint that must fit in 32 bits.
pub fn get_varint32(buf: &[u8], pos: &mut usize) -> Option<u32> {
    ferroflow_core::varint::get(buf, pos).and_then(|v| u32::try_from(v).ok())
}

/// Reads a little-endian u32 at `pos`.
pub fn get_fixed32(buf: &[u8], pos: usize) -> Option<u32> {
    let b = buf.get(pos..pos.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}
